"""The pull-request benchmark's sticky comment (`bench comment pr`).

pr-comment.yml runs it in a `workflow_run` job after pr-bench.yml. The
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
3. `bench compare --base DATA_DIR --head RECORD...` (markdown), in a process
   without the GitHub token;
4. create or update the one comment that carries the hidden marker, written
   by the bot.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.ci.github import api_json, api_pages
from bench.compare.markdown import MARKER  # the sticky comment's hidden marker
from bench.errors import EXIT_NO, BenchError
from bench.present.escape import markdown as escape  # the one markdown escaper
from bench.records import record as record_mod

PR_FILE = "pr.json"
MAX_FILE_BYTES = 5 * 1024 * 1024  # a record is a few kB; refuse anything huge
_SHA = re.compile(r"^[0-9a-f]{40}$")


class Refused(BenchError, ValueError):
    """The artifact does not check out; the message says why."""

    label = "refused"
    exit_code = EXIT_NO


@dataclass(frozen=True)
class Artifact:
    pr: int
    head_sha: str
    records: tuple[Path, ...]
    rejected: tuple[str, ...]  # "file: reason" for each record left out


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
    pull = api_json([f"repos/{repo}/pulls/{artifact.pr}"])
    pr_head = pull.get("head", {}).get("sha")
    if artifact.head_sha != pr_head:
        raise Refused(f"PR #{artifact.pr} has head {pr_head}; the artifact says {artifact.head_sha}")


def render(artifact: Artifact, data: Path, run_url: str) -> str:
    """bench compare's markdown (starting with the marker) plus a footer."""
    out = compare(["--base", str(data), "--head", *map(str, artifact.records)])
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
    comments = api_pages([f"repos/{repo}/issues/{pr}/comments?per_page=100"])
    mine = [c for c in comments if isinstance(c, dict)
            and MARKER in (c.get("body") or "") and (c.get("user") or {}).get("login") == author]
    if mine:
        done = api_json(["-X", "PATCH", f"repos/{repo}/issues/comments/{int(mine[0]['id'])}"], {"body": body})
    else:
        done = api_json(["-X", "POST", f"repos/{repo}/issues/{pr}/comments"], {"body": body})
    return str(done.get("html_url", "")) if isinstance(done, dict) else ""


def compare(args: list[str]) -> subprocess.CompletedProcess:
    """`bench compare ARGS --format markdown` in a process of its own, without
    the GitHub token or any secret: it imports numpy and scipy, which need none."""
    env = {k: v for k, v in os.environ.items() if k not in SECRETS}
    return subprocess.run([sys.executable, "-m", "bench", "compare", *args, "--format", "markdown"],
                          capture_output=True, text=True, check=False, env=env, cwd=PACKAGE_PARENT)


PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # where `-m bench` finds this package


SECRETS = ("GH_TOKEN", "GITHUB_TOKEN", "README_DEPLOY_KEY")


def need(env, name: str) -> str:
    if not env.get(name):
        raise Refused(f"environment variable {name} is not set; expected it from the workflow")
    return env[name]
