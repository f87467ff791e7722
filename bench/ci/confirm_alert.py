"""What the confirm job (confirm.yml, `bench confirm`) means for an alert (pure).

bench alert --confirm calls `confirm_inputs` for each series it opens an
alert issue for, and dispatches confirm.yml with those inputs (series, good,
bad) and the issue (bench.ci.github.workflow_run);
confirm.yml's GitHub-hosted job reads the result record (bench confirm,
format 1) with `read_result`, posts `comment` on the alert issue and acts on
`follow_up`:

  DIFFERENT, slower   the A/B confirms the slowdown on this machine:
                      dispatch bisect.yml (good, bad, the issue)
  DIFFERENT, faster   the A/B finds the other direction: said, nothing dispatched
  SAME                no change of compare.min_change or more between the two
                      builds on this machine: the nightly series' move is the
                      machine's; the issue is labelled MACHINE_LABEL
  UNKNOWN             the budget ran out first: said, nothing else

The result comes from a self-hosted job that ran Keras code: every field is
checked and every text escaped before it reaches GitHub.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

from bench.analyse.series import Series
from bench.present.escape import markdown as escape
from bench.present.table import Row

FORMAT = 1
MACHINE_LABEL = "bench-machine"  # an alert the same-machine A/B calls SAME
FOLLOW_UPS = ("bisect", "machine", "none")
ANSWERS = ("DIFFERENT", "SAME", "UNKNOWN")


def confirm_inputs(row: Row, series: Series) -> dict[str, str] | None:
    """confirm.yml's inputs for a Watch or Regressed row: the last good and
    the first bad nightly version. Regressed: the two sides of its change
    window; Watch (the newest two nights off): the night before them and the
    first of them. None when a version is unknown or the two are the same."""
    if row.status == "Regressed" and row.window is not None:
        good, bad = row.window.before.keras_version, row.window.after.keras_version
    elif row.status == "Watch" and len(series.points) >= 3:
        good, bad = series.points[-3].keras_version, series.points[-2].keras_version
    else:
        return None
    if not good or not bad or good == bad:
        return None
    return {"series": "/".join((row.backend, row.device, row.model, row.mode)), "good": good, "bad": bad}


def read_result(path: str | Path) -> Mapping[str, Any] | None:
    """The confirm result record, or None when missing, unreadable or not one
    (kind "confirm", format 1, a known answer, a finite delta)."""
    try:
        r = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(r, dict) and r.get("kind") == "confirm" and r.get("format") == FORMAT
            and r.get("answer") in ANSWERS and r.get("direction") in (None, "slower", "faster")):
        return None
    r = {**r, "direction": r.get("direction")}  # absent means none: the readers below index it
    delta, pairs = r.get("delta"), r.get("pairs")
    if not (isinstance(delta, (int, float)) and math.isfinite(delta)) or not isinstance(pairs, int):
        return None
    return r


def follow_up(result: Mapping[str, Any] | None) -> str:
    """'bisect', 'machine' or 'none' (module docstring)."""
    if result is None:
        return "none"
    if result["answer"] == "DIFFERENT" and result["direction"] == "slower":
        return "bisect"
    if result["answer"] == "SAME":
        return "machine"
    return "none"


def comment(result: Mapping[str, Any] | None, run_url: str) -> str:
    """The alert issue's comment: the answer first, in words, then the figures."""
    if result is None:
        return f"**Confirm** ({run_url}): the same-machine A/B left no readable result."
    answer, direction = result["answer"], result["direction"]
    first = {
        ("DIFFERENT", "slower"): "the same-machine A/B confirms the slowdown; a bisect is dispatched.",
        ("DIFFERENT", "faster"): "the same-machine A/B finds the bad build faster, not slower.",
        ("SAME", None): "the same-machine A/B finds no change of the set size between the two builds: "
                        f"the move is the machine's (labelled `{MACHINE_LABEL}`).",
        ("UNKNOWN", None): "the same-machine A/B could not decide within its budget.",
    }.get((answer, direction), "unreadable answer.")
    interval = result.get("interval")
    span = (f"{interval[0] * 100:+.1f}% … {interval[1] * 100:+.1f}%"
            if isinstance(interval, list) and len(interval) == 2 and all(isinstance(x, (int, float)) for x in interval)
            else "unbounded")
    p = result.get("p_value")
    lines = [f"**Confirm** ({run_url}): {answer}: {first}",
             "",
             f"- series: {escape(str(result.get('series', '?')))}",
             f"- builds: {escape(str(result.get('bad', '?')))} against {escape(str(result.get('good', '?')))}",
             f"- change: {result['delta'] * 100:+.1f}% (interval {span}), "
             f"p={p:.2g}, {result['pairs']} worker pairs" if isinstance(p, (int, float)) else
             f"- change: {result['delta'] * 100:+.1f}%, {result['pairs']} worker pairs",
             f"- stopped: {escape(str(result.get('stopped', '')))}",
             "", "The rules: docs/ab.md."]
    return "\n".join(lines) + "\n"
