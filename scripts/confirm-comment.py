"""Post a confirm result to its alert issue and act on it (confirm.yml's GitHub-hosted job).

    python scripts/confirm-comment.py RESULT_JSON

Inputs (env): ISSUE (the alert issue's number), GITHUB_REPOSITORY, RUN_URL,
GH_TOKEN (for gh). The comment and the follow-up come from
bench.ci.confirm_alert: DIFFERENT and slower dispatches bisect.yml (series,
good, bad, issue) on the default branch; SAME labels the issue as the
machine's. The result is read as data only (checked, its texts escaped).
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

from bench.ci.confirm_alert import MACHINE_LABEL, comment, follow_up, read_result  # noqa: E402

VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")
SERIES = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+){3}$")


def gh(*args: str, body: dict | None = None) -> None:
    done = subprocess.run(["gh", *args], input=json.dumps(body) if body is not None else None,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"gh {args[0]} {args[1] if len(args) > 1 else ''}: "
                           f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: confirm-comment.py RESULT_JSON", file=sys.stderr)
        return 2
    issue, repo = os.environ.get("ISSUE", ""), os.environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[1-9][0-9]*", issue) or not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        print(f"confirm-comment: error: ISSUE {issue!r}, GITHUB_REPOSITORY {repo!r}; "
              "expected an issue number and OWNER/NAME", file=sys.stderr)
        return 2
    result = read_result(sys.argv[1])
    todo = follow_up(result)
    try:
        gh("api", f"repos/{repo}/issues/{issue}/comments", "-X", "POST", "--input", "-",
           body={"body": comment(result, os.environ.get("RUN_URL", "this run"))})
        if todo == "machine":
            gh("api", f"repos/{repo}/issues/{issue}/labels", "-X", "POST", "--input", "-",
               body={"labels": [MACHINE_LABEL]})
        if todo == "bisect":
            fields = {k: str(result.get(k, "")) for k in ("series", "good", "bad")}
            if not (SERIES.match(fields["series"]) and VERSION.match(fields["good"]) and VERSION.match(fields["bad"])):
                raise RuntimeError(f"the result names series {fields['series']!r}, good {fields['good']!r}, "
                                   f"bad {fields['bad']!r}; expected BACKEND/DEVICE/MODEL/MODE and two versions")
            gh("workflow", "run", "bisect.yml", "--repo", repo, "-f", f"series={fields['series']}",
               "-f", f"good={fields['good']}", "-f", f"bad={fields['bad']}", "-f", f"issue={issue}")
    except RuntimeError as e:
        print(f"confirm-comment: error: {e}", file=sys.stderr)
        return 1
    print(f"confirm-comment: posted to #{issue}; follow-up: {todo}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
