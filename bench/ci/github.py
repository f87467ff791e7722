"""The GitHub REST API through the `gh` CLI (`gh api`, and `gh workflow run`
to dispatch a workflow), for the workflow steps.

`api` returns gh's stdout; `api_json` one JSON value; `api_pages` the items of
a `--paginate` listing (gh prints one JSON array per page, back to back). A
call that fails, hangs or answers garbage raises GitHubError naming the call
and gh's last line: the CLI prints it as one line, never a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess

from bench.errors import EXIT_NO, BenchError, UsageError

GH_TIMEOUT = 120  # seconds; gh retries nothing itself, a hung call must not hold the job
BOT = "github-actions[bot]"  # who opens issues and comments with a workflow's GITHUB_TOKEN
REPO = re.compile(r"[\w.-]+/[\w.-]+")  # OWNER/NAME


def repo_name(value: str, source: str) -> str:
    """`value` when it reads OWNER/NAME, else a UsageError naming `source` (a flag or variable)."""
    if not REPO.fullmatch(value or ""):
        raise UsageError(f"{source} is {value!r}; expected OWNER/NAME")
    return value


class GitHubError(BenchError, RuntimeError):
    """A GitHub call failed; the input was fine and GitHub said no."""

    exit_code = EXIT_NO


def api(args: list[str], payload: dict | None = None) -> str:
    """`gh api ARGS` (with `--input -` and `payload` as JSON when given)."""
    return _gh(["api", *args] + (["--input", "-"] if payload is not None else []), payload)


def workflow_run(workflow: str, repo: str, inputs: dict[str, str]) -> None:
    """`gh workflow run WORKFLOW --repo REPO -f k=v ...`: dispatch a workflow on
    the default branch (the caller's job needs `actions: write`)."""
    fields = [a for k, v in sorted(inputs.items()) for a in ("-f", f"{k}={v}")]
    _gh(["workflow", "run", workflow, "--repo", repo, *fields])


def _gh(cmd: list[str], payload: dict | None = None) -> str:
    args = cmd[1:]
    cmd = ["gh", *cmd]
    try:
        done = subprocess.run(cmd, input=json.dumps(payload) if payload is not None else None,
                              capture_output=True, text=True, timeout=GH_TIMEOUT, check=False)
    except FileNotFoundError:
        raise GitHubError("gh is not installed; expected the GitHub CLI on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitHubError(f"gh {cmd[1]} {_what(args)} gave no answer in {GH_TIMEOUT}s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise GitHubError(f"gh {cmd[1]} {_what(args)} failed ({done.returncode}): {last[:300]}")
    return done.stdout


def api_json(args: list[str], payload: dict | None = None):
    text = api(args, payload)
    try:
        return json.loads(text)
    except ValueError:
        raise GitHubError(f"gh api {_what(args)}: expected JSON, got {text[:200]!r}") from None


def api_pages(args: list[str]) -> list:
    """Every item of a `gh api --paginate` listing of arrays."""
    text, items, pos = api(["--paginate", *args]), [], 0
    decoder = json.JSONDecoder()
    try:
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
                continue
            page, pos = decoder.raw_decode(text, pos)
            items += page if isinstance(page, list) else [page]
    except ValueError:
        raise GitHubError(f"gh api {_what(args)}: expected JSON pages, got {text[pos:pos + 200]!r}") from None
    return items


def _what(args: list[str]) -> str:
    """The call as a reader knows it: its path and method, not gh's plumbing flags."""
    shown = [a for a in args if a != "--paginate"]
    return " ".join(shown[:shown.index("--input")] if "--input" in shown else shown[:4])
