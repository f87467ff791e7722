"""Markdown job summary of a benchmark job's records (`bench job-summary`).

Standard library and the one markdown escaper only (like bench.cli and
bench.errors): the verb runs with the runner's own Python even when the job's
environment failed to install. Every text from a record (written where
third-party code ran) goes through bench.present.escape.markdown.
One table per record: model, mode, status, the headline value with its unit,
and the failure kind and first line of its message; a notice when there is
no record, so the summary never fails a job.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.present.escape import markdown as _cell  # the one markdown escaper

NOTE_CHARS = 120  # a failure message's first line, cut to fit a table cell


def summary(folder: Path) -> str:
    """Every record of `folder` (*.json), or a notice that there is none."""
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        return f"### No benchmark record\n\nNothing was written to `{folder}`; see the job log.\n"
    return "\n".join(summarize(p) for p in paths)


def summarize(path: Path) -> str:
    """One record as a heading, a line of versions and a results table; a
    record of the wrong shape (it was written where third-party code ran) as
    one line saying so."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return _record(path, data["target"], data["run"], data.get("environment") or {}, data["results"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return f"### {_cell(path.name)}\n\nUnreadable record: {_cell(str(e) or type(e).__name__)}\n"


def _record(path: Path, target: dict, run: dict, env: dict, results: list) -> str:
    lines = [
        f"### {_cell(target['backend'])} on {_cell(target['device'])}",
        "",
        f"Keras {_cell(env.get('keras_version') or '?')} ({_cell(env.get('keras_source') or 'nightly')}), "
        f"run {_cell(run['id'])} attempt {_cell(run['attempt'])}, record {_cell(path.name)}",
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

