"""What `bench alert` does about each series: open, comment, close or
nothing (pure; bench/ci/issues.py talks to GitHub).

One issue per series that turns Regressed. Its title is stable
("Slower: BACKEND/DEVICE/MODEL/MODE"); its body carries two hidden markers:
the series (so no second issue is ever opened for it) and the change as
last reported (old level, new level, night), so later runs compare against
what the issue says, not against memory:

  <!-- bench:alert:series jax/rtx-5070-ti/cnn/train -->
  <!-- bench:alert:state {"after": 51200.0, "before": 60300.0, "better": "bigger", "night": "2026-11-05"} -->

- Regressed, no open issue -> open (labels: bench-regression, backend:B, device:D).
- Regressed, open issue, the new level moved by at least min_change from the
  one reported (deeper, or a partial recovery) -> comment, update the state.
- open issue, not Regressed (nor Failed, Stale, Watch), and the newest
  `confirm` nights' median is back within min_change of the old level, or
  past it -> comment and close. A change older than the window reads Steady
  at the low level: that is not a recovery and closes nothing.
- otherwise nothing (Failed, Stale, Watch ... keep the issue as it is).
Levels compare in logs, turned for 'smaller is better', like the status rule.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Mapping, Sequence
from urllib.parse import quote, unquote

from bench.analyse import host
from bench.analyse.profile import describe
from bench.ci import markers
from bench.present.escape import markdown as escape
from bench.present.format import format_delta, format_value
from bench.present.table import Row

LABEL = "bench-regression"
SERIES_MARK = "<!-- bench:alert:series {} -->"
STATE_MARK = "<!-- bench:alert:state {} -->"
ACTIONS = ("open", "comment", "close")


@dataclass(frozen=True)
class Issue:
    """An open alert issue as read from GitHub."""

    number: int
    series: str
    state: Mapping | None   # the hidden state, None when missing or unreadable
    body: str


@dataclass(frozen=True)
class Action:
    kind: str               # open | comment | close
    series: str
    title: str
    text: str               # the issue body (open) or the comment (comment, close)
    labels: tuple[str, ...] = ()
    number: int | None = None
    body: str | None = None  # comment: the issue's new body (new state)

    def __post_init__(self):
        if self.kind not in ACTIONS:
            raise ValueError(f"Action.kind is {self.kind!r}; expected one of {', '.join(ACTIONS)}")

    def summary(self) -> str:
        where = f" #{self.number}" if self.number is not None else ""
        return f"{self.kind}{where}: {self.title}"


def title(series: str) -> str:
    return f"Slower: {series}"


def parse_issue(number: int, body: str) -> Issue | None:
    """An Issue when `body` has the series marker, else None (not ours)."""
    m = markers.SERIES.search(body or "")
    if not m:
        return None
    state = None
    s = markers.STATE.search(body)
    if s:
        try:
            state = json.loads(s.group(1))
        except ValueError:
            state = None
    if not (isinstance(state, dict) and _level(state.get("before")) and _level(state.get("after"))
            and state.get("better") in ("bigger", "smaller")):
        state = None
    return Issue(number, unquote(m.group(1)), state, body)


def plan(rows: Sequence[Row], issues: Sequence[Issue], min_change: float, recent: Mapping[str, float],
         links: Mapping[str, str] = {}) -> list[Action]:
    """The actions, in row order. `recent`: series -> the median of its
    newest `confirm` points (what "back at the old level" is judged on: a
    window's median still mixes in the low nights); `links`: series -> a
    URL to show (the dashboard), optional."""
    open_by_series: dict[str, Issue] = {}
    for issue in sorted(issues, key=lambda i: i.number):
        open_by_series.setdefault(issue.series, issue)  # a duplicate from elsewhere: the oldest counts
    out = []
    for r in rows:
        series = "/".join(r.key)
        issue = open_by_series.get(series)
        action = _decide(r, series, issue, math.log1p(min_change), recent.get(series), links.get(series))
        if action is not None:
            out.append(action)
    return out


def _decide(r: Row, series: str, issue: Issue | None, band: float, recent: float | None,
            link: str | None) -> Action | None:
    if r.status == "Regressed" and r.change is not None:
        state = _state(r)
        if issue is None:
            return Action("open", series, title(series), _body(r, series, state, link),
                          labels=(LABEL, f"backend:{r.backend}", f"device:{r.device}"))
        if issue.state is None or abs(_x(state["after"], r.better) - _x(issue.state["after"], r.better)) >= band:
            old = issue.state
            was = (f"was {format_delta(old['after'] / old['before'] - 1)} since {old.get('night')}; "
                   if old else "")
            text = (f"The change moved: {was}now {_change_text(r)}.")
            return Action("comment", series, title(series), text, number=issue.number,
                          body=_body(r, series, state, link))
        return None
    if issue is None or issue.state is None or recent is None or r.status in ("Failed", "Stale", "Watch"):
        return None
    old = issue.state
    back = _x(recent, old["better"]) >= _x(old["before"], old["better"]) - band
    if not back:
        return None
    how = "faster than before the change" if r.status == "Faster" else "back at its old level"
    text = (f"{escape(series)} is {how}: {format_value(recent)} {r.unit} over the newest nights against "
            f"{format_value(old['before'])} before the change of {old.get('night')} (status {r.status}). Closing.")
    return Action("close", series, title(series), text, number=issue.number)


def _state(r: Row) -> dict:
    night = r.window.after.day.isoformat() if r.window is not None else None
    # 6 significant digits: the state is for reading and comparing, not for sums.
    return {"after": float(f"{r.change.after:.6g}"), "before": float(f"{r.change.before:.6g}"),
            "better": r.better, "night": night}


def _change_text(r: Row) -> str:
    c = r.change
    night = f" since {r.window.after.day.isoformat()}" if r.window is not None else ""
    return f"{format_delta(c.relative)}: {format_value(c.before)} → {format_value(c.after)} {r.unit}{night}"


def _body(r: Row, series: str, state: dict, link: str | None) -> str:
    # Labels come from records (untrusted): shown escaped; the marker keeps them raw.
    lines = [f"**{escape(series)}** is Regressed: {escape(_change_text(r))}.", ""]
    w = r.window
    if w is not None:
        lines += [f"- last nightly before: Keras {escape(w.before.label())}",  # versions come from records
                  f"- first nightly after: Keras {escape(w.after.label())}",
                  f"- Keras commits between them: {w.commits_url}"]
        lines += [f"- also changed: {escape(c.text())}" for c in w.env_changes]
    if r.ops is not None:  # op names come from records too
        lines.append(f"- which ops moved (last nightly before → first after, per step): {escape(describe(r.ops))}")
    lines += _origin_lines(r)
    if r.host is not None:  # a slower host since: likely the machine (docs/protocol.md, "A slow host")
        lines.append(f"- on the nights since: {host.describe(r.host)}")
    if link:
        lines.append(f"- chart: {link}")
    lines += ["", f"Run `python -m bench show SERIES --data DIR` for the nights, or the bisect workflow "
              "(bisect.yml) for the commit.", "",
              # Percent-encoded: a label holding ' -->' cannot end the hidden comment.
              SERIES_MARK.format(quote(series, safe='/')), STATE_MARK.format(json.dumps(state, sort_keys=True))]
    return "\n".join(lines) + "\n"


def _origin_lines(r: Row) -> list[str]:
    """Whose change it is (bench.analyse.triangulate) and where bisect looks."""
    if r.origin is None:
        return []
    where = ("Keras commits" if r.origin.bisect_keras() else
             "not Keras's commits: the device changed (bench bisect stops here)")
    return [f"- whose change: {escape(r.origin.text())}", f"- bisect searches: {where}"]


def _x(level: float, better: str) -> float:
    """A level in logs, up = better (as the status rule)."""
    return math.log(level) if better == "bigger" else -math.log(level)


def _level(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
