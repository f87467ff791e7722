"""A bisect result as a comment on its alert issue (`bench comment bisect`).

bisect.yml's GitHub-hosted job. The result comes from a self-hosted job that
ran Keras code: it is read as data only, checked (kind "bisect", format 1)
and every text from it escaped (bench.present.escape.markdown) before it
reaches GitHub. A missing or malformed result gets a comment saying so,
naming the run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.present.escape import markdown as escape

SHA = re.compile(r"^[0-9a-f]{40}$")


def body(path: Path, run_url: str) -> str:
    try:
        r = json.loads(path.read_text(encoding="utf-8"))
        ok = isinstance(r, dict) and r.get("kind") == "bisect" and r.get("format") == 1
    except (OSError, ValueError):
        ok = False
    if not ok:
        return f"The bisect run {run_url} left no readable result."
    lines = [f"**Bisect** ({run_url}): {escape(r.get('message', ''))}"]
    culprit = r.get("culprit")
    if isinstance(culprit, str) and SHA.match(culprit):
        lines.append(f"\nFirst slow commit: https://github.com/keras-team/keras/commit/{culprit}")
    return "\n".join(lines) + "\n"
