"""Which night a workflow run is for (docs/DESIGN.md 'Points': run.night).

A night is a UTC date. Night D starts when the nightly schedule fires on day D
(SCHEDULE_UTC, the cron of .github/workflows/nightly.yml; a test keeps the two
equal) and lasts until it fires on D+1. So a manual rerun "for last night"
started at 01:00 UTC still belongs to last night, and a scheduled run, however
late GitHub starts it, belongs to the day it fired. The time a run is judged
at is its creation (GitHub's created_at), which every attempt of the run
shares: "Re-run all jobs" the next morning keeps the run's night instead of
taking the next one's place. Pure functions; the clock is an argument, and
run_created_at asks GitHub for it.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

from bench.records.record import RecordError, parse_night, parse_time

SCHEDULE_UTC = time(2, 17)  # nightly.yml: cron "17 2 * * *"


def latest_night(now: datetime) -> date:
    """The latest night that has not passed at `now` (aware datetime, any zone)."""
    utc = now.astimezone(timezone.utc)
    offset = timedelta(hours=SCHEDULE_UTC.hour, minutes=SCHEDULE_UTC.minute)
    return (utc - offset).date()


def choose_night(requested: str, now: datetime) -> date:
    """The night a run is for: `requested` ('YYYY-MM-DD', from a dispatch
    input) or, when empty, latest_night(now). A night that has not started
    yet is refused: its record would sit ahead of every real point."""
    default = latest_night(now)
    if not requested.strip():
        return default
    night = parse_night(requested.strip(), "night")
    if night > default:
        raise RecordError(f"night is {requested.strip()!r}, which has not started yet; "
                          f"expected {default.isoformat()} (the latest night) or an earlier one")
    return night


def run_created_at(repo: str, run_id: str) -> datetime:
    """When GitHub created workflow run `run_id` of `repo` (the same for every attempt)."""
    from bench.ci.github import api  # only when asked: the rest is pure

    text = api([f"repos/{repo}/actions/runs/{run_id}", "--jq", ".created_at"]).strip()
    return parse_time(text, f"run {run_id}'s created_at")
