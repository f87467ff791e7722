"""CI glue: the GitHub Actions matrix and which backends a change can affect."""
