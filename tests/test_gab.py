"""github-action-benchmark formats: export-gab, import-gab, and the round trip.

The parser is tested on the fixture files tests/fixtures/gab/small_data.js
(and the same object as plain JSON): three suites, cargo / customBiggerIsBetter
/ pytest, one commit benchmarked twice, a name listed twice in one entry, a
-1 and a 0 value, and a foreign name with three slashes.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from bench import cli
from bench.present.gab import (GabError, better_for, export_benches, import_records, read_history)
from bench.records.history import load_history
from bench.records.record import write
from bench.analyse.series import build_series
from tests.helpers import T0, failed, make_record, ok

FIXTURES = Path(__file__).parent / "fixtures" / "gab"


def by_key(imported):
    return {(r.backend, r.device, r.run_id, r.attempt): r for r in imported.records}


# -- reading ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["small_data.js", "small_data.json"])
def test_reads_data_js_and_plain_json_alike(name):
    h = read_history(FIXTURES / name)
    assert [(e.suite, e.commit_id, e.tool, len(e.benches)) for e in h.entries] == [
        ("Rust Benchmark", "aaaa111", "cargo", 2), ("Rust Benchmark", "bbbb222", "cargo", 2),
        ("Rust Benchmark", "bbbb222", "cargo", 2), ("Throughput (S3)", "aaaa111", "customBiggerIsBetter", 4),
        ("Python", "cccc333", "pytest", 2)]
    assert h.repo_url == "https://github.com/example/project" and h.bench_count == 12


@pytest.mark.parametrize("text, message", [
    ("window.BENCHMARK_DATA = {", "not a github-action-benchmark history"),
    ('[{"name": "x", "value": 1, "unit": "ms"}]', "field entries: expected an object"),
    ('{"entries": {"S": [{"commit": {}, "date": 1, "benches": []}]}}', "entries['S'][0].commit.id is None"),
    ('{"entries": {"S": [{"commit": {"id": "c"}, "date": "yesterday", "benches": []}]}}',
     "entries['S'][0].date is 'yesterday'; expected milliseconds"),
    ('{"entries": {"S": [{"commit": {"id": "c"}, "date": 1, "benches": [{"name": "b", "value": "fast"}]}]}}',
     "entries['S'][0].benches[0].value is 'fast' (bench 'b'); expected a number"),
])
def test_malformed_histories_are_refused_naming_file_and_field(tmp_path, text, message):
    f = tmp_path / "data.js"
    f.write_text(text)
    with pytest.raises(GabError) as e:
        read_history(f)
    assert str(e.value).startswith(str(f)) and message in str(e.value)


def test_direction_follows_the_tool_then_the_unit():
    assert better_for("cargo", "ns/iter") == "smaller"
    assert better_for("go", "allocs/op") == "smaller"
    assert better_for("pytest", "iter/sec") == "bigger"
    assert better_for("customSmallerIsBetter", "MiB/s") == "smaller"
    assert better_for("customBiggerIsBetter", "ms") == "bigger"   # the suite said so
    assert better_for(None, "ms") == "smaller" and better_for("mytool", "s/iter") == "smaller"
    assert better_for(None, "samples/s") == "bigger" and better_for(None, "ops/sec") == "bigger"


# -- importing --------------------------------------------------------------------

def test_every_bench_of_every_entry_becomes_a_result():
    imported = import_records(read_history(FIXTURES / "small_data.js"))
    assert imported.results == 12 and imported.not_measured == 2
    assert sum(len(r.results) for r in imported.records) == 12
    assert sorted(by_key(imported)) == [
        ("Python", "imported", "cccc333", 1),
        ("Rust Benchmark", "imported", "aaaa111", 1),
        ("Rust Benchmark", "imported", "bbbb222", 1),
        ("Rust Benchmark", "imported", "bbbb222", 2),   # the same commit benchmarked again
        ("Throughput (S3)", "imported", "aaaa111", 1)]
    for rec in imported.records:
        assert rec.event == "import" and rec.data["run"]["commit"] == rec.run_id


def test_imported_record_fields():
    rec = by_key(import_records(read_history(FIXTURES / "small_data.js"), "ci-box"))[
        ("Rust Benchmark", "ci-box", "bbbb222", 2)]
    assert rec.data["run"]["started_at"] == "2025-12-02T11:00:00Z"   # date 1764673200000 ms
    assert rec.url == "https://github.com/example/project/commit/bbbb222"
    assert rec.data["run"]["repository"] == "https://github.com/example/project"
    assert rec.environment["imported"]["tool"] == "cargo"
    assert rec.environment["imported"]["commit"]["message"] == "second, benchmarked again"
    assert [(r.model, r.mode, r.status, r.value, r.unit, r.better) for r in rec.results] == [
        ("parse_small", "bench", "ok", 60500, "ns/iter", "smaller"),
        ("parse_large", "bench", "ok", 1500000, "ns/iter", "smaller")]
    assert rec.data["results"][0]["gab"] == {"name": "parse_small", "value": 60500, "range": "± 39000",
                                             "unit": "ns/iter"}


def test_a_name_twice_in_one_entry_keeps_both_and_bad_values_are_kept_as_skipped():
    rec = by_key(import_records(read_history(FIXTURES / "small_data.js")))[
        ("Throughput (S3)", "imported", "aaaa111", 1)]
    rows = [(r.model, r.mode, r.status, r.value, r.better) for r in rec.results]
    assert rows == [
        ("seq_read", "bench", "ok", 512.5, "bigger"),
        ("seq_read", "bench-2", "ok", 498.25, "bigger"),
        ("jacobi [512]/primal/CPU/Default", "bench", "skipped", None, "bigger"),  # foreign 4-part name
        ("latency", "bench", "ok", 12.5, "bigger")]
    skipped = rec.data["results"][2]
    assert skipped["error"]["kind"] == "unsupported" and "-1 TFLOP/s" in skipped["error"]["message"]
    assert skipped["gab"]["value"] == -1


def test_import_cli_writes_records_at_their_data_branch_paths_and_is_repeatable(tmp_path, capsys):
    out = tmp_path / "data"
    assert cli.main(["import-gab", str(FIXTURES / "small_data.js"), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    paths = printed.out.split()
    assert len(paths) == 5 and all(Path(p).is_file() for p in paths)
    assert str(out / "runs/2025/12/02/Rust_Benchmark--imported--bbbb222-2.json") in paths
    assert "5 records, 12 results (2 not a positive number, kept as skipped)" in printed.err
    history = load_history(out)
    assert len(history.records) == 5 and history.problems == ()
    series = build_series(history.records)
    assert series[("Rust Benchmark", "imported", "parse_small", "bench")].values() == [59874, 60500]
    before = {p: Path(p).read_text() for p in paths}
    assert cli.main(["import-gab", str(FIXTURES / "small_data.js"), "--out", str(out)]) == 0
    assert {p: Path(p).read_text() for p in paths} == before


def test_import_refuses_to_overwrite_a_different_record_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "data"
    target = out / "runs/2025/12/03/Python--imported--cccc333-1.json"
    target.parent.mkdir(parents=True)
    target.write_text("{}\n")
    assert cli.main(["import-gab", str(FIXTURES / "small_data.js"), "--out", str(out)]) == 2
    assert "Python--imported--cccc333-1.json: already exists with other content" in capsys.readouterr().err
    assert [p.name for p in out.rglob("*.json")] == [target.name] and target.read_text() == "{}\n"


# -- exporting --------------------------------------------------------------------

def night_records():
    return [
        make_record([ok("cnn", "train", 1234.5, samples=[1200.0, 1234.5, 1300.0]),
                     ok("mlp", "predict", 288_700.0, samples=[287_000.0, 288_700.0, 290_000.0]),
                     failed("cnn", "predict", "oom"),
                     ok("cnn", "latency", 12.5, samples=[12.0, 12.5, 14.0], unit="ms", better="smaller")],
                    backend="jax", device="rtx-5070-ti", run_id="77", url="https://ci/77"),
        make_record([ok("cnn", "train", 900.0, samples=[890.0, 900.0, 905.0])],
                    backend="mlx-main", keras_backend="mlx", device="m4", run_id="77"),
    ]


def test_export_is_the_custom_bigger_is_better_array_with_unique_names():
    out = export_benches(night_records())
    assert out.tool == "customBiggerIsBetter"
    assert [(b["name"], b["unit"], b["value"], b.get("range")) for b in out.benches] == [
        ("jax/rtx-5070-ti/cnn/train", "samples/s", 1234.5, "± 65.5"),
        ("jax/rtx-5070-ti/mlp/predict", "samples/s", 288_700.0, "± 1.7k"),
        ("mlx-main/m4/cnn/train", "samples/s", 900.0, "± 10.0")]
    assert out.benches[0]["extra"] == ("device: rtx-5070-ti\nkeras: 3.16.0.dev2026110102\n"
                                       "keras_backend: jax\nrun: 77 attempt 1\nurl: https://ci/77")
    assert set(out.benches[0]) == {"name", "unit", "value", "range", "extra"}
    assert (out.not_ok, out.other_direction) == (1, 1)


def test_smaller_is_better_results_go_to_their_own_array():
    out = export_benches(night_records(), "smaller")
    assert out.tool == "customSmallerIsBetter"
    assert [(b["name"], b["value"], b["range"]) for b in out.benches] == [("jax/rtx-5070-ti/cnn/latency", 12.5, "± 1.50")]
    assert out.other_direction == 3


def test_the_newest_run_wins_a_name_given_twice():
    old = make_record([ok("cnn", "train", 100.0)], run_id="1")
    rerun = make_record([ok("cnn", "train", 120.0)], run_id="1", attempt=2)
    out = export_benches([rerun, old])
    assert [b["value"] for b in out.benches] == [120.0] and out.superseded == ("jax/local-cpu/cnn/train",)


def test_export_cli_prints_json_and_notes_what_it_left_out(tmp_path, capsys):
    for rec in night_records():
        write(rec, tmp_path)
    assert cli.main(["export-gab", str(tmp_path)]) == 0
    printed = capsys.readouterr()
    assert [b["name"] for b in json.loads(printed.out)] == [
        "jax/rtx-5070-ti/cnn/train", "jax/rtx-5070-ti/mlp/predict", "mlx-main/m4/cnn/train"]
    assert "1 result(s) of the other direction left out (export them with --smaller)" in printed.err
    assert "1 failed/skipped result(s) left out" in printed.err


# -- the round trip ---------------------------------------------------------------

def as_data_js(suites: dict[str, tuple[str, list[dict]]], path: Path, nights: int = 1) -> Path:
    """Wrap exported arrays the way github-action-benchmark stores them."""
    entries = {suite: [{"commit": {"id": f"c{n}", "message": "nightly", "url": f"https://x/c{n}"},
                        "date": int((T0 + timedelta(days=n)).timestamp() * 1000), "tool": tool,
                        "benches": benches} for n in range(nights)]
               for suite, (tool, benches) in suites.items()}
    path.write_text("window.BENCHMARK_DATA = " + json.dumps({"entries": entries}, indent=2) + "\n")
    return path


def test_round_trip_keeps_names_values_and_units(tmp_path):
    records = night_records()
    bigger, smaller = export_benches(records), export_benches(records, "smaller")
    data_js = as_data_js({"Keras Nightly Bench": (bigger.tool, list(bigger.benches)),
                          "Keras Nightly Bench (times)": (smaller.tool, list(smaller.benches))},
                         tmp_path / "data.js")
    imported = import_records(read_history(data_js))
    back = {}
    for rec in imported.records:
        for r in rec.results:
            back[f"{rec.backend}/{rec.device}/{r.model}/{r.mode}"] = (r.value, r.unit, r.better,
                                                                       rec.keras_version, rec.keras_backend)
    sent = {b["name"]: (b["value"], b["unit"]) for b in bigger.benches + smaller.benches}
    assert {n: v[:2] for n, v in back.items()} == sent
    assert back["jax/rtx-5070-ti/cnn/latency"][2] == "smaller"
    assert back["jax/rtx-5070-ti/cnn/train"][2:] == ("bigger", "3.16.0.dev2026110102", "jax")
    assert back["mlx-main/m4/cnn/train"][4] == "mlx"
    # ... and exporting the imported records again gives the same arrays back.
    assert [b["name"] for b in export_benches(imported.records).benches] == [b["name"] for b in bigger.benches]
    assert [b["value"] for b in export_benches(imported.records).benches] == [b["value"] for b in bigger.benches]
