"""Post a bisect result to its alert issue (bisect.yml's GitHub-hosted job).

    python scripts/bisect-comment.py RESULT_JSON

Inputs (env): ISSUE (the issue number), GITHUB_REPOSITORY, RUN_URL, GH_TOKEN
(for gh). The result comes from a self-hosted job that ran Keras code: it is
read as data only, checked (kind "bisect", format 1) and every text from it
escaped (bench.present.escape.markdown) before it reaches GitHub. A missing
or malformed result gets a comment saying so, naming the run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.present.escape import markdown as escape  # noqa: E402

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


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: bisect-comment.py RESULT_JSON", file=sys.stderr)
        return 2
    issue, repo = os.environ.get("ISSUE", ""), os.environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[1-9][0-9]*", issue) or not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        print(f"bisect-comment: error: ISSUE {issue!r}, GITHUB_REPOSITORY {repo!r}; "
              "expected an issue number and OWNER/NAME", file=sys.stderr)
        return 2
    text = body(Path(sys.argv[1]), os.environ.get("RUN_URL", "this run"))
    done = subprocess.run(["gh", "api", f"repos/{repo}/issues/{issue}/comments", "-X", "POST", "--input", "-"],
                          input=json.dumps({"body": text}), capture_output=True, text=True)
    if done.returncode != 0:
        print(f"bisect-comment: error: gh api: {(done.stderr.strip().splitlines() or ['no message'])[-1]}",
              file=sys.stderr)
        return 1
    print(f"bisect-comment: posted to #{issue}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
