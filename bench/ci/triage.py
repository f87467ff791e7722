"""Read the triage marks back from the alert issues, through `gh api` (docs/triage.md).

A maintainer labels an alert issue `acknowledged` (expected; a comment of
theirs gives the link), `invalid` (the machine) or `fixed`. Every issue the
bot opened with a series marker is read, open or closed (a fixed issue is
usually closed), and each one labelled gives one Mark: its series and the
change's night from its hidden state (bench/ci/alert.py). An issue with more
than one of the labels counts by MARKS's order (acknowledged, invalid,
fixed): the first named wins, so a later, stronger label is added by
removing the weaker. For `acknowledged`, the link is the first URL in the
newest comment by a maintainer (owner, member or collaborator; not the bot).
"""

from __future__ import annotations

import re
from typing import TextIO

from bench.ci.alert import parse_issue
from bench.ci.issues import BOT, _pages, gh
from bench.records.triage import MARKS, Mark

# Who may give the link: anyone can comment on a public issue, and the link
# shows in the README and on the dashboard (GitHub's author_association).
MAINTAINERS = ("OWNER", "MEMBER", "COLLABORATOR")
_URL = re.compile(r"https?://[^\s<>()\[\]\"']+")


def read_marks(repo: str, author: str = BOT, warn: TextIO | None = None) -> list[Mark]:
    """The marks on `author`'s alert issues in `repo` (AlertError when GitHub says no)."""
    items = _pages(gh([f"repos/{repo}/issues?state=all&per_page=100", "--paginate"]))
    out = []
    for it in items:
        if not (isinstance(it, dict) and "pull_request" not in it and isinstance(it.get("number"), int)
                and isinstance(it.get("user"), dict) and it["user"].get("login") == author):
            continue
        names = {lb.get("name") for lb in it.get("labels") or [] if isinstance(lb, dict)}
        mark = next((m for m in MARKS if m in names), None)
        issue = parse_issue(it["number"], it.get("body") or "")
        if mark is None or issue is None:
            continue
        night = (issue.state or {}).get("night")
        url = it.get("html_url") if isinstance(it.get("html_url"), str) else None
        link = _link(repo, it["number"], author) if mark == "acknowledged" else None
        try:
            out.append(Mark(issue.series, night, mark, it["number"], url, link))
        except ValueError as e:  # a hand-edited state: named, the other marks still count
            if warn is not None:
                print(f"bench triage: issue #{it['number']}: {e}; not read", file=warn)
    return out


def _link(repo: str, number: int, author: str) -> str | None:
    comments = _pages(gh([f"repos/{repo}/issues/{number}/comments?per_page=100", "--paginate"]))
    for c in reversed(comments):
        if (isinstance(c, dict) and (c.get("user") or {}).get("login") != author
                and c.get("author_association") in MAINTAINERS):
            found = _URL.search(c.get("body") or "")
            if found:
                return found.group(0).rstrip(".,;:")
    return None
