"""Rendering of the status table: rows (table.py) -> markdown, html, json,
README section (readme.py) and PNG plots (plots.py)."""
