"""github-action-benchmark ('gab') formats, out and in.

Out: `export_benches(records, better)` -> the array its custom tools read,
`[{"name", "unit", "value", "range", "extra"}]`, one entry per series
`backend/device/model/mode`. `customBiggerIsBetter` takes the bigger-is-better
results (throughput, samples/s), `customSmallerIsBetter` the smaller-is-better
ones (times); one array never mixes the two.

In: `read_history(path)` parses its history file (`data.js`, i.e.
`window.BENCHMARK_DATA = {...}`, or the same object as plain JSON), and
`import_records(history, device)` turns each entry (one commit of one suite)
into run records (event 'import'): the suite is the backend label, each bench
name the model, mode 'bench', device `device`. A name `backend/device/model/mode`
whose `extra` says the same device (what `export_benches` writes) round-trips
into its own series. Every bench of every entry becomes a result; the
original bench object is kept in the result's `gab` field, so nothing is lost.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from bench.errors import read_text
from bench.records.newest import newness
from bench.records.record import RecordError, RunRecord, format_time, safe
from bench.present.format import format_value

# Direction of each gab tool's numbers, as github-action-benchmark itself
# decides it (src/write.ts biggerIsBetter): times are smaller-is-better,
# rates bigger-is-better.
TOOL_BETTER = {
    "cargo": "smaller", "go": "smaller", "benchmarkjs": "bigger", "benchmarkluau": "smaller",
    "pytest": "bigger", "googlecpp": "smaller", "catch2": "smaller", "julia": "smaller",
    "jmh": "smaller", "benchmarkdotnet": "smaller",
    "customBiggerIsBetter": "bigger", "customSmallerIsBetter": "smaller",
}
TOOL_FOR = {"bigger": "customBiggerIsBetter", "smaller": "customSmallerIsBetter"}
# For a tool gab does not know: a unit that is a time (or time per item) is smaller-is-better.
_TIME_UNIT = re.compile(r"^\s*(ns|ps|us|µs|μs|ms|s|sec|secs|seconds?|min|minutes?|h|hours?|time)\s*(/.*)?$",
                        re.IGNORECASE)
_PREFIX = re.compile(r"^\s*window\.BENCHMARK_DATA\s*=\s*")
MODE = "bench"


class GabError(RecordError):
    """A gab history file is malformed; the message names the file and field."""


@dataclass(frozen=True)
class GabBench:
    name: str
    value: float
    unit: str
    raw: Mapping[str, Any]     # the bench object as read, extra keys included

    @property
    def extra(self) -> str | None:
        e = self.raw.get("extra")
        return e if isinstance(e, str) else None


@dataclass(frozen=True)
class GabEntry:
    """One commit of one suite."""

    suite: str
    index: int                 # position in the suite's list, for messages
    commit_id: str
    commit: Mapping[str, Any]
    date_ms: int
    tool: str | None
    benches: tuple[GabBench, ...]

    @property
    def started_at(self) -> datetime:
        return datetime.fromtimestamp(self.date_ms / 1000, timezone.utc)


@dataclass(frozen=True)
class GabHistory:
    source: str
    repo_url: str | None
    entries: tuple[GabEntry, ...]   # suite by suite, in file order

    @property
    def bench_count(self) -> int:
        return sum(len(e.benches) for e in self.entries)


@dataclass(frozen=True)
class Imported:
    records: tuple[RunRecord, ...]
    results: int          # one per bench of every entry
    not_measured: int     # benches whose value was not a positive finite number (kept as 'skipped')


@dataclass(frozen=True)
class Exported:
    benches: tuple[dict, ...]     # the gab array, sorted by name
    tool: str                     # customBiggerIsBetter | customSmallerIsBetter
    not_ok: int                   # failed/skipped results: gab has no way to show them
    other_direction: int          # results that belong in the other array
    superseded: tuple[str, ...]   # names also given by a newer run; the newest wins


def better_for(tool: str | None, unit: str) -> str:
    """'bigger' or 'smaller': the tool's own direction, else judged by the unit."""
    if tool in TOOL_BETTER:
        return TOOL_BETTER[tool]
    return "smaller" if _TIME_UNIT.match(unit or "") else "bigger"


# -- out ------------------------------------------------------------------------

def export_benches(records: Iterable[RunRecord], better: str = "bigger") -> Exported:
    """The gab array for the ok results of `records` whose direction is `better`.

    One bench per name backend/device/model/mode; when several records give
    the same name, the newest (started_at, then attempt) wins, as for points.
    `range` is '± r' with r the largest distance from the value to a sample,
    so value ± r covers every timed repeat.
    """
    if better not in TOOL_FOR:
        raise ValueError(f"better is {better!r}; expected 'bigger' or 'smaller'")
    chosen: dict[str, tuple[tuple, dict]] = {}
    not_ok = other = 0
    superseded = []
    for rec in records:
        order = newness(rec)
        for r in rec.results:
            if r.status != "ok":
                not_ok += 1
                continue
            if r.better != better:
                other += 1
                continue
            name = f"{rec.backend}/{rec.device}/{r.model}/{r.mode}"
            bench = {"name": name, "unit": r.unit, "value": r.value, "extra": _extra(rec)}
            if r.samples:
                bench["range"] = "± " + format_value(max(abs(s - r.value) for s in r.samples))
            if name in chosen:
                superseded.append(name)
                if order < chosen[name][0]:
                    continue
            chosen[name] = (order, bench)
    benches = tuple(b for _, (_, b) in sorted(chosen.items()))
    return Exported(benches, TOOL_FOR[better], not_ok, other, tuple(sorted(set(superseded))))


def _extra(rec: RunRecord) -> str:
    """What the gab tooltip shows; its 'device:' line also marks our own names
    so that import can tell them from a foreign name with three slashes."""
    lines = [f"device: {rec.device}", f"keras: {rec.keras_version or 'unknown'}",
             f"keras_backend: {rec.keras_backend}", f"run: {rec.run_id} attempt {rec.attempt}"]
    if rec.url:
        lines.append(f"url: {rec.url}")
    return "\n".join(lines)


# -- in -------------------------------------------------------------------------

def read_history(path: str | Path) -> GabHistory:
    """Parse a gab data.js or its plain-JSON form; GabError names file and field."""
    path = Path(path)
    text = read_text(path, GabError)
    body = _PREFIX.sub("", text, count=1).rstrip().rstrip(";")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        raise GabError(f"{path}: not a github-action-benchmark history: expected `window.BENCHMARK_DATA = "
                       f"{{...}}` or a JSON object ({e.msg} at line {e.lineno} column {e.colno})") from None
    src = str(path)
    suites = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(suites, dict):
        raise GabError(f"{src}: field entries: expected an object of suite name -> list of entries "
                       f"(got {type(suites).__name__ if isinstance(data, dict) else type(data).__name__})")
    entries = []
    for suite, items in suites.items():
        where = f"{src}: field entries[{suite!r}]"
        if not isinstance(items, list):
            raise GabError(f"{where}: expected a list of entries, got {type(items).__name__}")
        entries.extend(_entry(suite, i, item, f"{where}[{i}]") for i, item in enumerate(items))
    repo = data.get("repoUrl")
    return GabHistory(src, repo if isinstance(repo, str) else None, tuple(entries))


def _entry(suite: str, index: int, item: Any, where: str) -> GabEntry:
    if not isinstance(item, dict):
        raise GabError(f"{where}: expected an object with commit, date, tool, benches")
    commit = item.get("commit")
    cid = commit.get("id") if isinstance(commit, dict) else None
    if not isinstance(cid, str) or not cid:
        raise GabError(f"{where}.commit.id is {cid!r}; expected the commit id string")
    date = item.get("date")
    if not _is_number(date):
        raise GabError(f"{where}.date is {date!r}; expected milliseconds since 1970 (a number)")
    benches = item.get("benches")
    if not isinstance(benches, list):
        raise GabError(f"{where}.benches is {type(benches).__name__}; expected a list")
    tool = item.get("tool")
    return GabEntry(suite, index, cid, commit, int(date), tool if isinstance(tool, str) else None,
                    tuple(_bench(b, f"{where}.benches[{j}]") for j, b in enumerate(benches)))


def _bench(b: Any, where: str) -> GabBench:
    if not isinstance(b, dict):
        raise GabError(f"{where}: expected an object with name, value, unit")
    name, value, unit = b.get("name"), b.get("value"), b.get("unit", "")
    if not isinstance(name, str) or not name:
        raise GabError(f"{where}.name is {name!r}; expected a non-empty string")
    if not _is_number(value):
        raise GabError(f"{where}.value is {value!r} (bench {name!r}); expected a number")
    if not isinstance(unit, str):
        raise GabError(f"{where}.unit is {unit!r} (bench {name!r}); expected a string")
    return GabBench(name, value, unit, b)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def import_records(history: GabHistory, device: str = "imported") -> Imported:
    """Run records for every entry: one per (backend, device) in it, event 'import'.

    Run id = the commit id. When the same commit was benchmarked again (it
    appears in several entries), the later entry is the next attempt, as a
    rerun would be. A value that is not a positive finite number (e.g. the -1
    some suites write for 'not run') cannot be a point: it becomes a 'skipped'
    result with the original kept, and is counted in `not_measured`.
    """
    records, results, not_measured = [], 0, 0
    attempts: Counter = Counter()
    for entry in history.entries:
        groups = _group(entry, device)
        for (backend, dev), (items, keras) in groups.items():
            key = (safe(backend), safe(dev), safe(entry.commit_id))  # the record's file name
            attempts[key] += 1
            data = _record_data(history, entry, backend, dev, keras, attempts[key],
                                [r for r, _ in items])
            source = f"{history.source}: entries[{entry.suite!r}][{entry.index}]"
            records.append(RunRecord.from_dict(data, source))
            results += len(items)
            not_measured += sum(1 for _, ok in items if not ok)
    return Imported(tuple(records), results, not_measured)


def _group(entry: GabEntry, device: str) -> dict:
    """{(backend, device): ([(result, measured)], (keras_version, keras_backend))}, in bench order."""
    groups: dict = {}
    seen: Counter = Counter()
    for b in entry.benches:
        own = _our_name(b)
        if own:
            backend, dev, model, mode, keras = own
        else:
            backend, dev, model, mode, keras = entry.suite, device, b.name, MODE, (None, None)
        # One entry may list a name twice (two configurations shown under one
        # name): the second becomes its own series, mode 'bench-2', not a lost point.
        seen[(backend, dev, model, mode)] += 1
        n = seen[(backend, dev, model, mode)]
        mode = mode if n == 1 else f"{mode}-{n}"
        result, measured = _result(b, model, mode, better_for(entry.tool, b.unit))
        items, _ = groups.setdefault((backend, dev), ([], keras))
        items.append((result, measured))
    return groups


def _result(b: GabBench, model: str, mode: str, better: str) -> tuple[dict, bool]:
    r = {"model": model, "mode": mode, "unit": b.unit, "better": better, "gab": dict(b.raw)}
    if math.isfinite(b.value) and b.value > 0:
        r.update(status="ok", value=b.value)
        return r, True
    r.update(status="skipped", error={
        "kind": "unsupported",
        "message": f"github-action-benchmark value {b.value!r} {b.unit} is not a positive number, "
                   f"so it is not a point; the original is kept in 'gab'"})
    if not math.isfinite(b.value):
        r["gab"]["value"] = repr(b.value)  # JSON cannot hold NaN/Infinity
    return r, False


def _our_name(b: GabBench):
    """(backend, device, model, mode, (keras_version, keras_backend)) for a name
    written by export_benches, else None."""
    parts = b.name.split("/")
    if len(parts) != 4 or not all(parts) or not b.extra:
        return None
    fields = dict(line.split(": ", 1) for line in b.extra.splitlines() if ": " in line)
    if fields.get("device") != parts[1]:
        return None
    keras = fields.get("keras")
    return (*parts, (None if keras in (None, "unknown") else keras,
                     fields.get("keras_backend") or parts[0].split("-")[0]))


def _record_data(history: GabHistory, entry: GabEntry, backend: str, device: str, keras, attempt: int,
                 results: list[dict]) -> dict:
    keras_version, keras_backend = keras
    run = {"id": entry.commit_id, "attempt": attempt, "event": "import",
           "started_at": format_time(entry.started_at), "commit": entry.commit_id}
    if isinstance(entry.commit.get("url"), str):
        run["url"] = entry.commit["url"]
    if history.repo_url:
        run["repository"] = history.repo_url
    env: dict = {"imported": {"format": "github-action-benchmark", "file": Path(history.source).name,
                              "suite": entry.suite, "tool": entry.tool, "date_ms": entry.date_ms,
                              "commit": dict(entry.commit)}}
    if keras_version:
        env["keras_version"] = keras_version
    return {"schema_version": 1, "run": run,
            "target": {"backend": backend, "keras_backend": keras_backend or "unknown", "device": device},
            "environment": env, "results": results}
