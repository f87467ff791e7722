"""Present: rows (table.py) -> markdown, html, json, the README section
(readme.py), PNG plots (plots.py), the dashboard site (site.py, template/) and
the github-action-benchmark formats (gab.py)."""
