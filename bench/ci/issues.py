"""GitHub issues for `bench alert`, through the `gh` CLI (`gh api`).

list_open reads the open issues labelled bench-regression; apply performs
one Action (open: POST issues; comment: POST a comment and PATCH the body's
state; close: POST a comment and PATCH state=closed). A failed call raises
AlertError with gh's last line; the caller reports it and carries on.
"""

from __future__ import annotations

import json
import subprocess

from bench.ci.alert import LABEL, Action, Issue, parse_issue
from bench.errors import EXIT_NO, BenchError

GH_TIMEOUT = 120


class AlertError(BenchError, RuntimeError):
    """A GitHub call failed (the message names it and gh's answer)."""

    exit_code = EXIT_NO  # bad input is 2; here the input was fine and GitHub said no


def gh(args: list[str], payload: dict | None = None) -> str:
    cmd = ["gh", "api", *args]
    if payload is not None:
        cmd += ["--input", "-"]
    try:
        done = subprocess.run(cmd, input=json.dumps(payload) if payload is not None else None,
                              capture_output=True, text=True, timeout=GH_TIMEOUT)
    except FileNotFoundError:
        raise AlertError("gh is not installed; expected the GitHub CLI on PATH") from None
    except subprocess.TimeoutExpired:
        raise AlertError(f"gh api {args[0]} gave no answer in {GH_TIMEOUT}s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise AlertError(f"gh api {' '.join(args[:3])}: {last}")
    return done.stdout


def list_open(repo: str) -> list[Issue]:
    text = gh([f"repos/{repo}/issues?state=open&labels={LABEL}&per_page=100", "--paginate"])
    items = []
    decoder = json.JSONDecoder()
    text = text.strip()
    while text:  # --paginate prints one JSON array per page, back to back
        page, end = decoder.raw_decode(text)
        items += page if isinstance(page, list) else []
        text = text[end:].strip()
    out = []
    for it in items:
        if isinstance(it, dict) and "pull_request" not in it and isinstance(it.get("number"), int):
            issue = parse_issue(it["number"], it.get("body") or "")
            if issue is not None:
                out.append(issue)
    return out


def apply(repo: str, a: Action) -> str:
    """Perform `a`; returns the issue's URL or number as text."""
    if a.kind == "open":
        made = json.loads(gh([f"repos/{repo}/issues", "-X", "POST"],
                             {"title": a.title, "body": a.text, "labels": list(a.labels)}))
        return str(made.get("html_url") or made.get("number"))
    gh([f"repos/{repo}/issues/{a.number}/comments", "-X", "POST"], {"body": a.text})
    if a.kind == "comment" and a.body is not None:
        gh([f"repos/{repo}/issues/{a.number}", "-X", "PATCH"], {"body": a.body})
    if a.kind == "close":
        gh([f"repos/{repo}/issues/{a.number}", "-X", "PATCH"], {"state": "closed", "state_reason": "completed"})
    return f"#{a.number}"
