"""GitHub issues for `bench alert`, through the `gh` CLI (`gh api`).

list_open reads the open alert issues: those the bot opened (`user.login`)
that carry the hidden series marker. Not by label: a
fresh repository has no bench-regression label, a token without push access
cannot always make one, and GitHub then drops labels from a new issue
silently, so a label search would find nothing and open the issue again at
every publish. Not by marker alone: anyone can open an issue holding the
marker, and it would silence that series' alert (or get it closed).

ensure_labels creates the labels an issue needs when they are missing and the
token may; the ones it cannot make are returned with gh's answer, and the
issue opens without them (it is still found by marker and author).

apply performs one Action (open: POST issues; comment: POST a comment and
PATCH the body's state; close: POST a comment and PATCH state=closed). A
failed call raises AlertError with gh's last line; the caller reports it and
carries on.
"""

from __future__ import annotations

from typing import Iterable

from bench.ci.alert import LABEL, Action, Issue, parse_issue
from bench.ci.github import BOT, GitHubError, api, api_json, api_pages
from bench.errors import EXIT_NO, BenchError

COLOURS = {LABEL: "d73a4a", "backend": "1d76db", "device": "5319e7"}


class AlertError(BenchError, RuntimeError):
    """A GitHub call failed (the message names it and gh's answer)."""

    exit_code = EXIT_NO  # bad input is 2; here the input was fine and GitHub said no


def gh(args: list[str], payload: dict | None = None) -> str:
    """`gh api ARGS` through bench.ci.github; a failure is an AlertError (same message)."""
    return _alerting(api, args, payload)


def _pages(args: list[str]) -> list:
    """Every item of a `gh api --paginate` listing (bench.ci.github.api_pages)."""
    return _alerting(api_pages, args)


def _alerting(call, *args):
    try:
        return call(*args)
    except GitHubError as e:
        raise AlertError(str(e)) from None


def list_open(repo: str, author: str = BOT) -> list[Issue]:
    """The open issues `author` opened that carry a series marker. Every open
    issue is read and the author checked here: whether the API's `creator`
    filter takes a bot's login ('github-actions[bot]') is not documented, and
    a filter that matched nothing would open every alert again."""
    items = _pages([f"repos/{repo}/issues?state=open&per_page=100"])
    out = []
    for it in items:
        if (isinstance(it, dict) and "pull_request" not in it and isinstance(it.get("number"), int)
                and isinstance(it.get("user"), dict) and it["user"].get("login") == author):
            issue = parse_issue(it["number"], it.get("body") or "")
            if issue is not None:
                out.append(issue)
    return out


def ensure_labels(repo: str, names: Iterable[str]) -> tuple[set[str], dict[str, str]]:
    """(the labels among `names` that exist now, {label: why it could not be made})."""
    wanted = set(names)
    try:
        have = {lb.get("name") for lb in _pages([f"repos/{repo}/labels?per_page=100"]) if isinstance(lb, dict)}
    except AlertError:
        have = set()  # unknown: try to make each; one that exists answers 422, and is kept
    failed = {}
    for name in sorted(wanted - have):
        kind = name.split(":", 1)[0] if ":" in name else name
        try:
            gh([f"repos/{repo}/labels", "-X", "POST"],
               {"name": name, "color": COLOURS.get(kind, "ededed"), "description": "bench alert (bench/ci/alert.py)"})
            have.add(name)
        except AlertError as e:
            if "already_exists" in str(e) or "HTTP 422" in str(e):
                have.add(name)
            else:
                failed[name] = str(e)
    return wanted & have, failed


def apply(repo: str, a: Action) -> tuple[str, int | None]:
    """Perform `a`; returns (the issue's URL or number as text, its number)."""
    if a.kind == "open":
        made = _alerting(api_json, [f"repos/{repo}/issues", "-X", "POST"],
                         {"title": a.title, "body": a.text, "labels": list(a.labels)})
        made = made if isinstance(made, dict) else {}
        number = made.get("number") if isinstance(made.get("number"), int) else None
        return str(made.get("html_url") or number), number
    gh([f"repos/{repo}/issues/{a.number}/comments", "-X", "POST"], {"body": a.text})
    if a.kind == "comment" and a.body is not None:
        gh([f"repos/{repo}/issues/{a.number}", "-X", "PATCH"], {"body": a.body})
    if a.kind == "close":
        gh([f"repos/{repo}/issues/{a.number}", "-X", "PATCH"], {"state": "closed", "state_reason": "completed"})
    return f"#{a.number}", a.number
