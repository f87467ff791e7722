#!/usr/bin/env python3
"""Post (or update) the sticky benchmark comment of a pull request.

    python scripts/pr-comment.py ARTIFACTS_DIR DATA_DIR

pr-comment.yml's step, run by a `workflow_run` job after pr-bench.yml. The
artifacts were written by pull-request code on a self-hosted runner, so they
are untrusted data: nothing in them is executed or trusted until checked.

1. read the artifact: one PR number and head SHA (pr.json, all copies alike)
   and the records (each validated by bench's validator; a bad one is left
   out and named in the comment);
2. check the claim against GitHub (`gh api`): pr-bench runs only as a
   maintainer's `workflow_dispatch` (or pr-command.yml's, for a `/benchmark`
   comment), whose title "pr-bench #<pr> @ <sha>" comes from the default
   branch's workflow and its inputs, not from the PR: the artifact must claim
   that PR and that SHA, and the SHA must still be the PR's head;
3. `bench compare --base DATA_DIR --head RECORD...` (markdown);
4. create or update the one comment that carries the hidden marker, written
   by COMMENT_AUTHOR; the same text goes to the job summary.

Environment: GITHUB_REPOSITORY, RUN_EVENT, RUN_HEAD_SHA, RUN_TITLE, RUN_URL
(from github.event.workflow_run), GH_TOKEN for `gh`, GITHUB_STEP_SUMMARY,
COMMENT_AUTHOR (default github-actions[bot]).
Exit 0: commented, or nothing to comment on (no artifact). Exit 1: the
artifact was refused (the reason is printed). Exit 2: usage.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.records import record as record_mod  # noqa: E402  (after the path tweak)
from bench.compare.markdown import MARKER  # noqa: E402  (the sticky comment's hidden marker)
from bench.present.escape import markdown as escape  # noqa: E402  (the one markdown escaper)

PR_FILE = "pr.json"
MAX_FILE_BYTES = 5 * 1024 * 1024  # a record is a few kB; refuse anything huge
_SHA = re.compile(r"^[0-9a-f]{40}$")


class Refused(Exception):
    """The artifact does not check out; the message says why."""


@dataclass(frozen=True)
class Artifact:
    pr: int
    head_sha: str
    records: tuple[Path, ...]
    rejected: tuple[str, ...]  # "file: reason" for each record left out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: pr-comment.py ARTIFACTS_DIR DATA_DIR", file=sys.stderr)
        return 2
    artifacts, data = Path(argv[0]), Path(argv[1])
    env = os.environ
    try:
        artifact = read_artifact(artifacts)
        if artifact is None:
            print(f"pr-comment: no {PR_FILE} below {artifacts}: the PR benchmark did not run; nothing to do")
            return 0
        repo = _need(env, "GITHUB_REPOSITORY")
        verify(artifact, repo, env.get("RUN_EVENT", ""), env.get("RUN_HEAD_SHA", ""), env.get("RUN_TITLE", ""))
        body = render(artifact, data, env.get("RUN_URL", ""))
        url = upsert_comment(repo, artifact.pr, body, env.get("COMMENT_AUTHOR", "github-actions[bot]"))
    except Refused as e:
        print(f"pr-comment: refused: {e}", file=sys.stderr)
        _summary(f"### PR benchmark comment not posted\n\n{e}\n")
        return 1
    print(f"pr-comment: {url}")
    _summary(body)
    return 0


def read_artifact(folder: Path) -> Artifact | None:
    """The PR claim and the valid records below `folder` (None: no pr.json)."""
    claims, records, rejected = set(), [], []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            rejected.append(f"{path.name}: {path.stat().st_size} bytes; expected at most {MAX_FILE_BYTES}")
            continue
        if path.name == PR_FILE:
            claims.add(_claim(path))
        elif path.suffix == ".json":
            try:
                record_mod.load(path)
            except record_mod.RecordError as e:
                rejected.append(f"{path.name}: {e}")
                continue
            records.append(path)
    if not claims:
        return None
    if len(claims) > 1:
        raise Refused(f"the artifacts disagree about the pull request: {sorted(claims)}")
    (pr, sha), = claims
    if not records:
        raise Refused(f"no valid record for PR #{pr}" + "".join(f"\n- {r}" for r in rejected))
    return Artifact(pr, sha, tuple(records), tuple(rejected))


def _claim(path: Path) -> tuple[int, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pr, sha = data["pr"], data["head_sha"]
    except (ValueError, KeyError, TypeError):
        raise Refused(f"{path}: expected JSON {{\"pr\": <number>, \"head_sha\": <40 hex>}}") from None
    if isinstance(pr, bool) or not isinstance(pr, int) or pr < 1:
        raise Refused(f"{path}: pr is {pr!r}; expected a pull request number")
    if not isinstance(sha, str) or not _SHA.match(sha):
        raise Refused(f"{path}: head_sha is {sha!r}; expected 40 lowercase hex digits")
    return pr, sha


def verify(artifact: Artifact, repo: str, event: str, run_head_sha: str, run_title: str) -> None:
    """Tie the artifact's PR number to the run that made it, via GitHub's own data."""
    if event != "workflow_dispatch":
        raise Refused(f"run event is {event!r}; expected workflow_dispatch (pr-bench has no other trigger)")
    expected = f"pr-bench #{artifact.pr} @ {artifact.head_sha}"
    if run_title != expected:
        raise Refused(f"the run title is {run_title!r}; expected {expected!r} (the PR and SHA the artifact claims)")
    pull = _gh_json(["api", f"repos/{repo}/pulls/{artifact.pr}"])
    pr_head = pull.get("head", {}).get("sha")
    if artifact.head_sha != pr_head:
        raise Refused(f"PR #{artifact.pr} has head {pr_head}; the artifact says {artifact.head_sha}")


def render(artifact: Artifact, data: Path, run_url: str) -> str:
    """bench compare's markdown (starting with the marker) plus a footer."""
    out = subprocess.run(
        [sys.executable, "-m", "bench", "compare", "--base", str(data),
         "--head", *map(str, artifact.records), "--format", "markdown"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        raise Refused(f"bench compare failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    body = out.stdout.strip()
    if not body.startswith(MARKER):
        body = f"{MARKER}\n{body}"
    return body + "\n\n" + "\n".join(footer(artifact.head_sha, run_url, artifact.rejected)) + "\n"


def footer(head_sha: str, run_url: str, rejected: tuple[str, ...]) -> list[str]:
    """The comment's last lines. A rejection reason is record text (a file
    name, a validator message quoting the bad value): escaped, never put in
    a code span, where a backtick of its own would close the span."""
    lines = [f"Benchmarked head `{head_sha[:12]}`" + (f" in [this run]({run_url})." if run_url else ".")]
    if rejected:
        lines.append("Records left out (invalid):")
        lines += [f"- {escape(r.splitlines()[0][:200])}" for r in rejected]
    return lines


def upsert_comment(repo: str, pr: int, body: str, author: str) -> str:
    """Update the author's comment that has the marker, or create it; its URL."""
    comments = _gh_json_pages(["api", "--paginate", f"repos/{repo}/issues/{pr}/comments?per_page=100"])
    mine = [c for c in comments
            if MARKER in (c.get("body") or "") and (c.get("user") or {}).get("login") == author]
    payload = json.dumps({"body": body})
    if mine:
        cid = mine[0]["id"]
        done = _gh_json(["api", "-X", "PATCH", f"repos/{repo}/issues/comments/{int(cid)}", "--input", "-"], payload)
    else:
        done = _gh_json(["api", "-X", "POST", f"repos/{repo}/issues/{pr}/comments", "--input", "-"], payload)
    return str(done.get("html_url", ""))


def _gh(args: list[str], stdin: str | None = None) -> str:
    out = subprocess.run(["gh", *args], input=stdin, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise Refused(f"gh {' '.join(args[:4])} failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    return out.stdout


def _gh_json(args: list[str], stdin: str | None = None) -> dict:
    text = _gh(args, stdin)
    try:
        return json.loads(text)
    except ValueError:
        raise Refused(f"gh {' '.join(args[:4])}: expected JSON, got {text[:200]!r}") from None


def _gh_json_pages(args: list[str]) -> list:
    """`gh api --paginate` prints one JSON array per page, back to back."""
    text, items, pos = _gh(args), [], 0
    decoder = json.JSONDecoder()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        page, pos = decoder.raw_decode(text, pos)
        items += page if isinstance(page, list) else [page]
    return items


def _need(env, name: str) -> str:
    if not env.get(name):
        raise Refused(f"environment variable {name} is not set; expected it from the workflow")
    return env[name]


def _summary(text: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
