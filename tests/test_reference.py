"""The reference build (issue 10): `bench run --reference`, the ratio pair by
pair, the "<mode>.vs-ref" series and their rows in the status table."""

import json
import sys
import threading
from datetime import timedelta

from bench import cli
from bench.analyse import envsummary
from bench.analyse.series import (all_series, build_series, in_table, metric_group, reference_results,
                                  reference_series, table_series)
from bench.analyse.trends import assess
from bench.config import Trends
from bench.measure import reference
from bench.records import record
from tests.helpers import T0, failed, make_record, ok, write_data


def workers(*values, disturbed=()):
    return [{"value": v, "samples": [v], "status": "ok", "disturbed": i in disturbed} for i, v in enumerate(values)]


# -- the ratio ------------------------------------------------------------------

def test_the_ratio_is_the_median_of_the_pairs_not_of_the_headlines():
    # The host slows pair 2 to half for both sides: the pair still reads 0.9.
    ref = {"workers": workers(100.0, 100.0, 50.0, 100.0, 100.0)}
    build = {"workers": workers(90.0, 91.0, 45.0, 89.0, 90.0)}
    value, pairs = reference.ratio(ref, build)
    assert pairs == 5 and round(value, 4) == 0.9


def test_a_failed_worker_leaves_its_pair_out_and_a_disturbed_one_only_in_turns():
    ref = {"workers": workers(100.0, 50.0, 100.0, 100.0, 100.0) + [{"value": None, "status": "failed"}]}
    build = {"workers": workers(90.0, 45.0, 90.0, 90.0, 10.0, 90.0, disturbed={1})
             + [{"value": 1.0, "status": "ok", "rerun": True}]}
    # A duet's pair ran at once: the host that slowed build worker 1 slowed its partner too.
    assert reference.ratio(ref, build, duet=True) == (0.9, 5)
    # In turns the sides ran apart: the disturbed worker's pair is left out.
    assert reference.ratio(ref, build, duet=False) == (0.9, 4)
    assert reference.ratio({"workers": []}, build) is None


def test_attach_gives_each_paired_ok_result_its_block_and_never_moves_the_value():
    ref = [ok("mlp", "train", 100.0, workers=workers(100.0, 100.0)), failed("mlp", "predict"),
           ok("cnn", "train", 10.0, workers=workers(10.0, 10.0))]
    build = [ok("mlp", "train", 95.0, workers=workers(90.0, 100.0)), ok("mlp", "predict", 50.0, workers=workers(50.0)),
             failed("cnn", "train")]
    out = reference.attach(ref, build)
    assert out[0]["reference"] == {"value": 100.0, "ratio": 0.9486832980505138, "pairs": 2}
    assert out[0]["value"] == 95.0
    assert "reference" not in out[1] and "reference" not in out[2]  # the reference failed; the build failed


def test_sides_with_other_backend_or_numpy_versions_get_no_ratio_and_say_why():
    same = [{"versions": {"jax": "0.8.1", "jaxlib": "0.8.1"}, "numpy_version": "2.3.4"}]
    assert reference.mismatch(same, same) is None
    other_numpy = [{"versions": {"jax": "0.8.1", "jaxlib": "0.8.1"}, "numpy_version": "2.2.0"}]
    other_jax = [{}, {"versions": {"jax": "0.8.0", "jaxlib": "0.8.1"}, "numpy_version": "2.3.4"}]
    assert reference.mismatch(other_numpy, same) == "numpy 2.2.0 on the reference, 2.3.4 on the nightly"
    assert reference.mismatch(other_jax, same) == "jax 0.8.0 on the reference, 0.8.1 on the nightly"
    assert reference.mismatch([], same) is None  # a side that reported nothing: its own failure says why
    # the two Keras builds differ by design: that is what the ratio compares
    nightly = [{"versions": {"keras-nightly": "3.16.0.dev2026102704", "jax": "0.8.1", "jaxlib": "0.8.1"},
                "numpy_version": "2.3.4"}]
    frozen = [{"versions": {"keras-nightly": "3.16.0.dev2026092004", "jax": "0.8.1", "jaxlib": "0.8.1"},
               "numpy_version": "2.3.4"}]
    assert reference.mismatch(frozen, nightly) is None
    assert reference.mismatch([{**frozen[0], "numpy_version": "2.2.0"}], nightly) == (
        "numpy 2.2.0 on the reference, 2.3.4 on the nightly")
    ref = [ok("mlp", "train", 100.0, workers=workers(100.0, 100.0))]
    build = [ok("mlp", "train", 95.0, workers=workers(90.0, 100.0)), failed("mlp", "predict")]
    out = reference.attach(ref, build, refused=reference.mismatch(other_numpy, same))
    assert "reference" not in out[0] and out[0]["value"] == 95.0
    assert out[0]["reference_refused"] == "numpy 2.2.0 on the reference, 2.3.4 on the nightly"
    assert "reference_refused" not in out[1]


# -- bench run --reference ----------------------------------------------------------

def _fake_pool(monkeypatch, a_value, b_value, keras=("3.12.0", "3.16.0.dev2026120302"), numpy=("2.3.4", "2.3.4")):
    from bench.commands import run as run_cmd
    from bench.measure import pool

    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1})
    calls, lock = [], threading.Lock()

    def spawn_worker(task, specs, *, timeout, python, cpus=None, echo=False, on_event=lambda event: None):
        with lock:
            calls.append((task.side, python))
        s = specs[0]
        value = a_value if task.side == "a" else b_value
        events = ({"start": [s.model, s.mode]}, {"done": [s.model, s.mode], "payload": {"result": dict(
            ok(s.model, s.mode, value), steps_per_call=s.steps or 9),
            "environment": {"keras_version": keras[task.side == "b"], "versions": {"jax": "0.8.1"},
                            "numpy_version": numpy[task.side == "b"]}}})
        return pool.WorkerOutcome(0, False, 1.0, events, timeout=timeout)

    monkeypatch.setattr(pool, "spawn_worker", spawn_worker)
    return calls


def test_a_reference_run_pairs_the_builds_and_this_builds_record_carries_the_ratio(tmp_path, monkeypatch, capsys):
    ref_python = tmp_path / "ref" / "bin" / "python"
    ref_python.parent.mkdir(parents=True)
    ref_python.symlink_to(sys.executable)
    calls = _fake_pool(monkeypatch, 100.0, 90.0)
    assert cli.main(["run", "--backend", "jax", "--models", "mlp", "--modes", "predict", "--out", str(tmp_path),
                     "--reference", str(ref_python)]) == 0
    # harness.ab_workers (8) pairs, plus the reference's calibration worker
    assert sorted(calls) == [("a", str(ref_python))] * 9 + [("b", sys.executable)] * 8
    err = capsys.readouterr().err
    assert "--reference duet: devices.local-cpu.threads 2 -> 1" in err
    recs = {r.data["run"]["ab"]["side"]: r for r in map(record.load, tmp_path.glob("*.json"))}
    a, b = recs["a"], recs["b"]
    assert (a.environment["keras_source"], b.environment["keras_source"]) == ("pinned", "nightly")
    assert not a.is_nightly and b.is_nightly  # only this build makes points
    assert b.data["run"]["ab"]["reference"] is True and a.data["run"]["ab"]["reference"] is True
    assert b.data["run"]["ab"]["reference_keras_version"] == "3.12.0"
    assert b.data["results"][0]["value"] == 90.0  # the headline, never rescaled
    assert b.data["results"][0]["reference"] == {"value": 100.0, "ratio": 0.9, "pairs": 8, "log_se": 0.0}
    assert "reference" not in a.data["results"][0]
    assert "8 workers, 0.900x the reference (8 pairs)" in err
    assert "the reference build: 9 workers" in err  # its calibration worker and 8 pairs


def test_a_reference_run_whose_sides_differ_in_numpy_records_the_refusal(tmp_path, monkeypatch):
    ref_python = tmp_path / "ref" / "bin" / "python"
    ref_python.parent.mkdir(parents=True)
    ref_python.symlink_to(sys.executable)
    _fake_pool(monkeypatch, 100.0, 90.0, numpy=("2.2.0", "2.3.4"))
    assert cli.main(["run", "--backend", "jax", "--models", "mlp", "--modes", "predict", "--out", str(tmp_path),
                     "--reference", str(ref_python)]) == 0
    b = next(r for r in map(record.load, tmp_path.glob("*.json")) if r.data["run"]["ab"]["side"] == "b")
    result = b.data["results"][0]
    assert "reference" not in result and result["value"] == 90.0
    assert result["reference_refused"] == "numpy 2.2.0 on the reference, 2.3.4 on the nightly"


def test_reference_and_ab_together_or_a_missing_reference_python_get_one_line(tmp_path, capsys):
    assert cli.main(["run", "--out", str(tmp_path), "--reference", sys.executable,
                     "--ab", sys.executable, sys.executable]) == 2
    assert "--ab and --reference are two kinds of paired run; expected one of them" in capsys.readouterr().err
    assert cli.main(["run", "--out", str(tmp_path), "--reference", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert f"--reference REF_PYTHON is '{tmp_path / 'nope'}'; expected the python executable of a venv" in err
    assert "Traceback" not in err and not list(tmp_path.glob("*.json"))


# -- the vs-ref series ----------------------------------------------------------------

def nights(ratios, *, host=None, ref_version="3.12.0", mode="train", better="bigger", start=T0):
    """One --reference record a night: the nightly's samples/s drift with the
    host (host[i]), its ratio to the reference is ratios[i]."""
    out = []
    for i, r in enumerate(ratios):
        h = host[i] if host else 1.0
        result = ok("mlp", mode, 1000.0 * h * r, better=better,
                    reference={"value": 1000.0 * h, "ratio": r, "pairs": 5})
        out.append(make_record([result], started_at=start + timedelta(days=i),
                               run={"protocol": {"name": "workers", "version": 2},
                                    "ab": {"id": f"n{i}", "side": "b", "mode": "duet", "reference": True,
                                           "reference_keras_version": ref_version}}))
    return out


HOST = [1.0, 0.8, 1.15, 0.9, 1.2, 0.85, 1.1, 0.75, 1.0, 1.2, 0.9, 1.1, 0.8, 1.05, 0.95, 1.2]


def test_a_slowdown_the_host_drift_hides_in_samples_per_second_is_regressed_against_the_reference():
    ratios = [1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001, 1.0, 0.997, 1.002, 1.0, 0.92, 0.918, 0.923, 0.919]
    recs = nights(ratios, host=HOST)
    newest = recs[-1].started_at
    headline = build_series(recs)[("jax", "local-cpu", "mlp", "train")]
    vs_ref = reference_series(recs)[("jax", "local-cpu", "mlp", "train.vs-ref")]
    assert assess(headline, newest, Trends()).status == "Steady"  # 8 % inside ±20 % of host drift
    got = assess(vs_ref, newest, Trends())
    assert (got.status, got.change.index, round(got.change.relative, 3)) == ("Regressed", 12, -0.081)
    assert (vs_ref.unit, vs_ref.better, metric_group(vs_ref.mode), in_table(vs_ref.mode)) == (
        "x reference", "bigger", "reference", True)


def test_a_latency_ratio_keeps_smaller_is_better_and_a_failure_shows_in_the_ratio_series():
    recs = nights([1.0] * 6, mode="latency", better="smaller")
    recs.append(make_record([failed("mlp", "latency", "timeout", "over 900 s")], started_at=T0 + timedelta(days=6),
                            run={"ab": {"id": "n6", "side": "b", "mode": "duet", "reference": True}}))
    s = reference_series(recs)[("jax", "local-cpu", "mlp", "latency.vs-ref")]
    assert s.better == "smaller" and len(s.points) == 6 and s.failures[0].kind == "timeout"
    assert assess(s, recs[-1].started_at, Trends()).status == "Failed"


def test_records_without_a_reference_make_no_ratio_series():
    plain = [make_record([ok("mlp", "train", 1000.0)], started_at=T0 + timedelta(days=i)) for i in range(6)]
    ab = [make_record([ok("mlp", "train", 1000.0, reference={"value": 1.0, "ratio": 1.0, "pairs": 1})],
                      run={"ab": {"id": "x", "side": "b"}})]  # an A/B run, not a reference run
    assert reference_results(plain[0]) == [] and reference_results(ab[0]) == []
    assert reference_series(plain + ab) == {}
    assert set(table_series(plain)) == {("jax", "local-cpu", "mlp", "train")}


def test_a_new_reference_build_starts_a_new_baseline_not_a_change():
    old = nights([1.0, 1.002, 0.998, 1.001, 0.999, 1.0, 1.001, 0.999])
    new = nights([0.9, 0.901, 0.899], ref_version="3.13.0", start=T0 + timedelta(days=8))
    s = reference_series(old + new)[("jax", "local-cpu", "mlp", "train.vs-ref")]
    assert s.points[-1].protocol == "workers v2 duet vs reference 3.13.0"
    assert assess(s, new[-1].started_at, Trends()).status == "New"  # 3 nights of the new baseline
    changed = envsummary.changes(s.points[7].state, s.points[8].state)
    assert ("reference", "3.12.0", "3.13.0") in changed


def test_report_and_site_list_the_ratio_rows(tmp_path, capsys):
    data = write_data(nights([1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.0]), tmp_path / "data")
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    rows = {(r["model"], r["mode"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[("mlp", "train.vs-ref")]["status"] == "Steady" and rows[("mlp", "train.vs-ref")]["unit"] == "x reference"
    assert set(all_series(nights([1.0]))) == {("jax", "local-cpu", "mlp", "train"), ("jax", "local-cpu", "mlp", "train.vs-ref")}


def test_a_device_that_starts_running_beside_a_reference_starts_a_new_protocol():
    # A duet worker shares the host with its partner: its samples/s sit lower
    # than a solo run's, which must never read as a Keras regression.
    solo = [make_record([ok("mlp", "train", 1000.0 + i)], started_at=T0 + timedelta(days=i),
                        run={"protocol": {"name": "workers", "version": 2}}) for i in range(8)]
    duet = nights([1.0, 1.0, 1.0], host=[0.7, 0.7, 0.7], start=T0 + timedelta(days=8))
    s = build_series(solo + duet)[("jax", "local-cpu", "mlp", "train")]
    assert [p.protocol for p in s.points[7:9]] == ["workers v2", "workers v2 duet"]
    assert assess(s, duet[-1].started_at, Trends()).status == "New"
