"""Markdown job summary of a benchmark job's records (`bench job-summary`).

Standard library only (like bench.cli and bench.errors): the verb runs with
the runner's own Python even when the job's environment failed to install.
One table per record: model, mode, status, the headline value with its unit,
and the failure kind and first line of its message; a notice when there is
no record, so the summary never fails a job.
"""

from __future__ import annotations

import json
from pathlib import Path

NOTE_CHARS = 120  # a failure message's first line, cut to fit a table cell


def summary(folder: Path) -> str:
    """Every record of `folder` (*.json), or a notice that there is none."""
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        return f"### No benchmark record\n\nNothing was written to `{folder}`; see the job log.\n"
    return "\n".join(summarize(p) for p in paths)


def summarize(path: Path) -> str:
    """One record as a heading, a line of versions and a results table."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        target, run, env = data["target"], data["run"], data.get("environment", {})
        results = data["results"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"### {path.name}\n\nUnreadable record: {_cell(str(e))}\n"
    lines = [
        f"### {target['backend']} on {target['device']}",
        "",
        f"Keras {env.get('keras_version') or '?'} ({env.get('keras_source') or 'nightly'}), "
        f"run {run['id']} attempt {run['attempt']}, record `{path.name}`",
        "",
        "| model | mode | status | value | note |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {_cell(r.get('model'))} | {_cell(r.get('mode'))} | {_cell(r.get('status'))} "
                     f"| {_value(r)} | {_note(r)} |")
    ok = sum(r.get("status") == "ok" for r in results)
    lines += ["", f"{ok} of {len(results)} benchmarks ok.", ""]
    return "\n".join(lines)


def _value(result: dict) -> str:
    value = result.get("value")
    if result.get("status") != "ok" or not isinstance(value, (int, float)):
        return ""
    return f"{value:,.1f} {_cell(result.get('unit', 'samples/s'))}"


def _note(result: dict) -> str:
    error = result.get("error") or {}
    if not error:
        return ""
    first = str(error.get("message", "")).strip().splitlines()[:1]
    text = f"{error.get('kind', '?')}: {first[0] if first else ''}".strip()
    return _cell(text[:NOTE_CHARS] + ("…" if len(text) > NOTE_CHARS else ""))


def _cell(value) -> str:
    """Text that cannot break out of a markdown table cell."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
