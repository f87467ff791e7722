"""Read the triage marks back from the alert issues, through `gh api` (docs/triage.md).

A maintainer labels an alert issue `acknowledged` (expected; a comment of
theirs gives the link), `invalid` (the machine) or `fixed`. Every issue the
bot opened with a series marker is read, open or closed (a fixed issue is
usually closed), and each one labelled gives one Mark: its series and the
change's night from its hidden state (written by bench/ci/alert.py). An
issue with more than one of the labels counts by MARKS's order
(acknowledged, invalid, fixed). For `acknowledged`, the link is the first
URL in the newest comment by a maintainer.

Standard library and bench's light modules only: this step holds a token,
and third-party code (numpy, scipy: the status rule's) never runs beside one
(docs/security.md). So the hidden markers are read here with their own two
patterns, the same as bench/ci/alert.py writes (tests/test_triage.py reads
issues that `bench alert` opened).
"""

from __future__ import annotations

import json
import re
from typing import TextIO
from urllib.parse import unquote

from bench.ci import markers
from bench.ci.github import BOT, api_pages
from bench.records.triage import MARKS, Mark

# Who may give the link: anyone can comment on a public issue, and the link
# shows in the README and on the dashboard (GitHub's author_association).
MAINTAINERS = ("OWNER", "MEMBER", "COLLABORATOR")
_URL = re.compile(r"https?://[^\s<>()\[\]\"']+")


def read_marks(repo: str, author: str = BOT, warn: TextIO | None = None) -> list[Mark]:
    """The marks on `author`'s alert issues in `repo` (GitHubError when GitHub says no)."""
    out = []
    for it in api_pages([f"repos/{repo}/issues?state=all&per_page=100"]):
        if not (isinstance(it, dict) and "pull_request" not in it and isinstance(it.get("number"), int)
                and isinstance(it.get("user"), dict) and it["user"].get("login") == author):
            continue
        names = {lb.get("name") for lb in it.get("labels") or [] if isinstance(lb, dict)}
        mark = next((m for m in MARKS if m in names), None)
        series, night = _markers(it.get("body") or "")
        if mark is None or series is None:
            continue
        url = it.get("html_url") if isinstance(it.get("html_url"), str) else None
        link = _link(repo, it["number"], author) if mark == "acknowledged" else None
        try:
            out.append(Mark(series, night, mark, it["number"], url, link))
        except ValueError as e:  # a hand-edited state: named, the other marks still count
            if warn is not None:
                print(f"bench triage: issue #{it['number']}: {e}; not read", file=warn)
    return out


def _markers(body: str) -> tuple[str | None, str | None]:
    """(series, the change's night) from an alert issue's hidden markers."""
    m = markers.SERIES.search(body)
    if not m:
        return None, None
    s = markers.STATE.search(body)
    try:
        state = json.loads(s.group(1)) if s else {}
    except ValueError:
        state = {}
    return unquote(m.group(1)), state.get("night") if isinstance(state, dict) else None


def _link(repo: str, number: int, author: str) -> str | None:
    comments = api_pages([f"repos/{repo}/issues/{number}/comments?per_page=100"])
    for c in reversed(comments):
        if (isinstance(c, dict) and (c.get("user") or {}).get("login") != author
                and c.get("author_association") in MAINTAINERS):
            found = _URL.search(c.get("body") or "")
            if found:
                return found.group(0).rstrip(".,;:")
    return None
