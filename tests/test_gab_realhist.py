"""Real github-action-benchmark histories (tests/fixtures/realhist/, sources in its
README) import whole and report.

The expected counts are taken from each source file independently of
bench.present.gab: entries, benches (every bench of every entry), the benches whose
value is not a positive number (kept as 'skipped'), the series names.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from bench import cli
from bench.records.history import load_history
from bench.analyse.series import build_series

REALHIST = Path(__file__).resolve().parent / "fixtures" / "realhist"
FILES = sorted(REALHIST.glob("*.js"))


def source_counts(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    data = json.loads(re.sub(r"^window\.BENCHMARK_DATA\s*=\s*", "", text).rstrip().rstrip(";"))
    entries = [(suite, e) for suite, items in data["entries"].items() for e in items]
    benches = [(suite, b) for suite, e in entries for b in e["benches"]]
    series = set()
    for suite, e in entries:
        seen = Counter()
        for b in e["benches"]:
            seen[b["name"]] += 1
            series.add((suite, b["name"], "bench" if seen[b["name"]] == 1 else f"bench-{seen[b['name']]}"))
    units: dict = {}
    for suite, b in benches:  # one real bench changes unit (MiB/s -> GiB/s) along the way
        units.setdefault((suite, b["name"]), set()).add(b["unit"])
    bad = sum(1 for _, b in benches if not (math.isfinite(b["value"]) and b["value"] > 0))
    return {"entries": len(entries), "benches": len(benches), "bad": bad, "series": series,
            "units": units}


def test_the_fixture_has_the_real_oddities():
    counts = [source_counts(f) for f in FILES]
    assert len(FILES) == 3
    assert any(c["bad"] for c in counts)  # values that are not positive numbers
    assert any(len(u) > 1 for c in counts for u in c["units"].values())  # a unit change


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_real_history_imports_whole_and_reports(path, tmp_path, capsys):
    want = source_counts(path)
    out = tmp_path / "data"

    assert cli.main(["import-gab", str(path), "--out", str(out), "--device", "ci"]) == 0
    printed = capsys.readouterr()
    assert len(printed.out.split()) == want["entries"]  # one record per entry: no exported names here
    assert (f"{want['entries']} records, {want['benches']} results "
            f"({want['bad']} not a positive number, kept as skipped)") in printed.err

    history = load_history(out, warn=None)
    assert history.problems == ()
    assert len(history.records) == want["entries"]
    results = [r for rec in history.records for r in rec.results]
    assert len(results) == want["benches"]
    assert sum(r.status == "skipped" for r in results) == want["bad"]
    assert sum(r.status == "ok" for r in results) == want["benches"] - want["bad"]

    series = build_series(history.records)
    assert {(b, m, mode) for b, d, m, mode in series} == want["series"]
    assert all(s.unit in want["units"][(s.backend, s.model)] for s in series.values())

    assert cli.main(["report", "--data", str(out), "--format", "json"]) == 0
    report = capsys.readouterr()
    rows = json.loads(report.out)
    assert len(rows) == len(series)
    assert {(r["backend"], r["model"], r["mode"]) for r in rows} == want["series"]
    assert not [line for line in report.err.splitlines() if line.startswith("bench: skipped")]
