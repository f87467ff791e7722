"""The PR benchmark's claim (`bench pr-info`): {"head_sha": ..., "pr": ...}.

pr-bench.yml uploads it with the records; `bench comment pr` reads it as
untrusted data and checks it against GitHub before trusting it. Standard
library only: it runs with the runner's Python.
"""

from __future__ import annotations

import json
import re

from bench.errors import UsageError


def claim(pr: str, head_sha: str) -> str:
    """The claim as one JSON line (sorted keys); UsageError for anything but
    a PR number and 40 lowercase hex digits."""
    if not re.fullmatch(r"[1-9][0-9]*", pr) or not re.fullmatch(r"[0-9a-f]{40}", head_sha):
        raise UsageError(f"PR {pr!r} and SHA {head_sha!r}; expected a pull request number and 40 hex digits")
    return json.dumps({"head_sha": head_sha, "pr": int(pr)}, sort_keys=True)
