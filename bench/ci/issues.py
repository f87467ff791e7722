"""GitHub issues for `bench alert`, through the `gh` CLI (`gh api`).

list_open reads the open issues labelled bench-regression; apply performs
one Action (open: POST issues; comment: POST a comment and PATCH the body's
state; close: POST a comment and PATCH state=closed). A failed call raises
AlertError with gh's last line; the caller reports it and carries on.
"""

from __future__ import annotations

import json

from bench.ci.alert import LABEL, Action, Issue, parse_issue
from bench.ci.github import GitHubError, api
from bench.errors import EXIT_NO, BenchError

class AlertError(BenchError, RuntimeError):
    """A GitHub call failed (the message names it and gh's answer)."""

    exit_code = EXIT_NO  # bad input is 2; here the input was fine and GitHub said no


def gh(args: list[str], payload: dict | None = None) -> str:
    """`gh api ARGS` through bench.ci.github; a failure is an AlertError (same message)."""
    try:
        return api(args, payload)
    except GitHubError as e:
        raise AlertError(str(e)) from None


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
