"""Analyse: records -> series (one point per night) -> status. Pure functions."""
