#!/usr/bin/env python3
"""Markdown job summary of a benchmark job's records, on stdout.

    python scripts/job-summary.py RECORDS_DIR >> "$GITHUB_STEP_SUMMARY"

A benchmark job step (nightly.yml, pr-bench.yml). Standard library and
bench's escaper only (it imports nothing else): it runs with the runner's
Python even when the job's environment failed to install. Every text from a
record (written where third-party code ran) goes through the one markdown
escaper, bench.present.escape.markdown. One table per record: model, mode, status, the headline value with
its unit, and the failure kind and first line of its message. Prints a notice
and exits 0 when there is no record, so the summary never fails a job.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.present.escape import markdown as _cell  # noqa: E402  (the one markdown escaper)

NOTE_CHARS = 120  # a failure message's first line, cut to fit a table cell


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: job-summary.py RECORDS_DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        print(f"### No benchmark record\n\nNothing was written to `{folder}`; see the job log.\n")
        return 0
    print("\n".join(summarize(p) for p in paths))
    return 0


def summarize(path: Path) -> str:
    """One record as a heading, a line of versions and a results table."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        target, run, env = data["target"], data["run"], data.get("environment", {})
        results = data["results"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"### {_cell(path.name)}\n\nUnreadable record: {_cell(str(e))}\n"
    lines = [
        f"### {_cell(target['backend'])} on {_cell(target['device'])}",
        "",
        f"Keras {_cell(env.get('keras_version', '?'))} ({_cell(env.get('keras_source', 'nightly'))}), "
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
