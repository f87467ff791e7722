"""The one rule for which of two runs supersedes the other.

Newest `started_at` first, then the highest `attempt` (a rerun of the same
workflow run keeps its start time and bumps the attempt). Series points,
failures, PR heads, baselines, exports and the site's run table all order
runs by it. Works on anything with `started_at` and `attempt`: a RunRecord,
a Point, a Failure.
"""

from __future__ import annotations

from typing import Any


def newness(x: Any) -> tuple:
    """Sort key: ascending means oldest first, so max() is the newest."""
    return (x.started_at, x.attempt)


def is_newer(a: Any, b: Any) -> bool:
    """Does `a` supersede `b`?"""
    return newness(a) > newness(b)
