"""`bench run` without real backends: failure kinds, jobs, run metadata, the
record it writes, and the text it prints."""

import json
import re
import signal
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from bench import cli

from bench.measure import environment, failures, runner

from bench.records import record
from bench.measure.child import Spec
from bench.measure.summary import progress_line, summary_table
from tests.helpers import failed, make_record, ok, skipped

NOW = datetime(2026, 12, 2, 3, 4, 5, tzinfo=timezone.utc)


def spec(mode="train", backend="jax", model="cnn"):
    return Spec(backend=backend, keras_backend=backend, model=model, mode=mode, batch_size=128, repeats=3,
                min_repeat_seconds=0.25, warmup_steps=2, result_path="")


# -- failure kinds -------------------------------------------------------------

@pytest.mark.parametrize("exit_args, kind, words", [
    ((None, True, 1.0, "", None), "timeout", "no result within the 1 s timeout"),
    ((-signal.SIGSEGV, False, 9, "Fatal Python error: Segmentation fault", None), "crash", "killed by SIGSEGV"),
    ((-signal.SIGKILL, False, 9, "", True), "oom", "the out-of-memory killer fired"),
    ((-signal.SIGKILL, False, 9, "", None), "oom", "most likely the out-of-memory killer"),
    ((-signal.SIGKILL, False, 9, "", False), "crash", "killed by SIGKILL"),
    ((1, False, 9, "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB", None), "oom", "CUDA out of memory"),
    ((1, False, 9, "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: ...", None), "oom", "RESOURCE_EXHAUSTED"),
    ((1, False, 9, "Traceback...\nModuleNotFoundError: No module named 'mlx'", None), "install", "No module named 'mlx'"),
    ((3, False, 9, "something odd\nValueError: bad", None), "crash", "exit status 3 without a result; last output: ValueError: bad"),
])
def test_a_child_without_a_result_is_classified_from_its_exit(exit_args, kind, words):
    f = failures.from_exit(*exit_args)
    assert f.kind == kind
    assert words in f.message


@pytest.mark.parametrize("exc, stage, kind, words", [
    (MemoryError(), "timing", "oom", "timing: MemoryError"),
    (RuntimeError("[enforce fail] DefaultCPUAllocator: can't allocate memory: out of memory"), "gate", "oom", "gate:"),
    (ModuleNotFoundError("No module named 'tensorflow'"), "import", "install", "No module named 'tensorflow'"),
    (RuntimeError("BENCH_MLX_DEVICE=gpu but this MLX has no Metal GPU"), "import", "install", "no Metal GPU"),
    (ValueError("shapes do not match"), "timing", "crash", "timing: ValueError: shapes do not match"),
])
def test_a_child_exception_is_classified_by_its_stage_and_message(exc, stage, kind, words):
    f = failures.from_exception(exc, stage)
    assert (f.kind, words in f.message) == (kind, True)


# -- jobs ----------------------------------------------------------------------

def _payload(result, environment=None):
    return {"result": result, "environment": environment or {"keras_version": "3.x", "jit": True}}


def test_run_jobs_skips_unsupported_modes_without_a_child():
    started = []

    def spawn(job):
        started.append(job.spec.mode)
        return runner.Outcome(0, False, 1.0, "", _payload(ok("cnn", job.spec.mode, 100.0)))

    jobs = [runner.Job(spec(mode, backend="openvino"), 60) for mode in ("train", "predict")]
    done = runner.run_jobs(jobs, spawn_fn=spawn)
    assert started == ["predict"]
    assert done.results[0]["status"] == "skipped"
    assert done.results[0]["error"]["kind"] == "unsupported"
    assert done.results[1]["status"] == "ok"
    assert done.environments == ({"keras_version": "3.x", "jit": True},)


def test_after_an_install_failure_the_backend_is_not_tried_again():
    calls = []

    def spawn(job):
        calls.append(job.spec.model)
        return runner.Outcome(0, False, 0.2, "", {"result": dict(
            job.spec.base_result(), status="failed",
            error={"kind": "install", "message": "cannot import the backend: No module named 'tensorflow'"}),
            "environment": {}})

    jobs = [runner.Job(spec(mode, backend="tensorflow", model=m), 60) for m in ("cnn", "mlp") for mode in ("train", "predict")]
    done = runner.run_jobs(jobs, spawn_fn=spawn)
    assert calls == ["cnn"]
    assert [r["error"]["kind"] for r in done.results] == ["install"] * 4
    assert "No module named 'tensorflow'" in done.results[3]["error"]["message"]


def test_a_failed_install_step_fails_every_benchmark_without_a_child(tmp_path, monkeypatch):
    log = {"ok": False, "failed_step": "plugins", "error": "pip install (plugins) failed:\nERROR: No matching distribution"}
    (tmp_path / "install.json").write_text(json.dumps(log))
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.setattr(runner, "spawn", lambda job, echo=False: pytest.fail("no child after a failed install"))
    out = tmp_path / "out"
    code = cli.main(["run", "--backend", "openvino", "--modes", "train,predict", "--out", str(out),
                     "--install-log", str(tmp_path / "install.json")])
    assert code == 0
    rec = record.load(next(out.glob("*.json")))
    assert rec.environment["install"] == log
    by_mode = {(r.model, r.mode): r for r in rec.results}
    assert {k: (r.status, r.error.kind) for k, r in by_mode.items()} == {
        ("cnn", "train"): ("skipped", "unsupported"), ("cnn", "predict"): ("failed", "install"),
        ("mlp", "train"): ("skipped", "unsupported"), ("mlp", "predict"): ("failed", "install")}
    assert "No matching distribution" in by_mode[("cnn", "predict")].error.message


def test_every_job_yields_a_result_when_every_child_dies():
    outcomes = iter([runner.Outcome(-signal.SIGSEGV, False, 3.0, "Segmentation fault"),
                     runner.Outcome(None, True, 1.0),
                     runner.Outcome(-signal.SIGKILL, False, 4.0, "", oom_killed=True),
                     runner.Outcome(1, False, 2.0, "Traceback\nRuntimeError: boom")])
    jobs = [runner.Job(spec(mode, model=m), 1) for m in ("cnn", "mlp") for mode in ("train", "predict")]
    done = runner.run_jobs(jobs, spawn_fn=lambda job: next(outcomes))
    assert [r["error"]["kind"] for r in done.results] == ["crash", "timeout", "oom", "crash"]
    assert all(r["status"] == "failed" and r["batch_size"] == 128 for r in done.results)


def test_spec_round_trips_through_json_and_rejects_a_bad_mode():
    s = spec("predict")
    assert Spec.from_json(s.to_json()) == s
    # the throughput repeats' rules travel with the spec into the child's protocol
    goal = replace(s, canary_tolerance=1.5, spread_goal=0.2).protocol()
    assert (goal.canary_tolerance, goal.spread_goal) == (1.5, 0.2)
    assert s.protocol().spread_goal is None
    with pytest.raises(ValueError, match="Spec.mode is 'eval'"):
        spec("eval")


# -- run metadata and environment ---------------------------------------------

def test_run_info_from_github_actions():
    env = {"GITHUB_RUN_ID": "123456", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_EVENT_NAME": "schedule",
           "GITHUB_REPOSITORY": "me/keras-nightly-bench", "GITHUB_SHA": "abc123",
           "GITHUB_SERVER_URL": "https://github.com"}
    assert environment.run_info(env, NOW) == {
        "id": "123456", "attempt": 2, "event": "schedule", "started_at": "2026-12-02T03:04:05Z",
        "repository": "me/keras-nightly-bench", "commit": "abc123",
        "url": "https://github.com/me/keras-nightly-bench/actions/runs/123456"}


def test_run_info_of_a_local_run():
    info = environment.run_info({}, NOW, token="a1b2c3")
    assert info == {"id": "local-20261202T030405-a1b2c3", "attempt": 1, "event": "local",
                    "started_at": "2026-12-02T03:04:05Z"}
    assert re.fullmatch(r"local-20261202T030405-[0-9a-f]{6}", environment.run_info({}, NOW)["id"])


def test_environment_combines_host_versions_and_what_children_saw():
    env = environment.capture(
        versions={"keras-nightly": "3.16.0.dev1", "jax": "0.10.2"},
        children=[{"keras_version": "3.16.0.dev1", "device": {"device": "gpu:RTX", "driver": "cuda 12.8"},
                   "jit": True, "settings": {"mlx_device": "gpu"}}, {"jit": False}],
        accelerator="gpu", keras_source="pr:123", install_log={"seconds": 42},
        device_env={"BENCH_MLX_DEVICE": "gpu"}, environ={"RUNNER_NAME": "m4-runner"},
        host={"python": "3.11.7", "os": "Linux", "cpu": "AMD EPYC", "cpu_count": 2})
    assert env == {
        "keras_version": "3.16.0.dev1", "keras_source": "pr:123",
        "backend_versions": {"keras-nightly": "3.16.0.dev1", "jax": "0.10.2"},
        "python": "3.11.7", "os": "Linux", "cpu": "AMD EPYC", "cpu_count": 2,
        "accelerator": {"kind": "gpu", "device": "gpu:RTX"}, "driver": "cuda 12.8", "jit": True,
        "runner": "m4-runner", "settings": {"BENCH_MLX_DEVICE": "gpu", "mlx_device": "gpu"},
        "install": {"seconds": 42}}


def test_install_log_errors_name_the_file(tmp_path):
    bad = tmp_path / "install.json"
    bad.write_text("{oops")
    with pytest.raises(ValueError, match=r"--install-log .*install.json: not valid JSON"):
        environment.read_install_log(bad)


# -- the command, with children faked -----------------------------------------

def test_run_writes_a_valid_record_even_when_every_child_crashes(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.setattr(runner, "spawn", lambda job, echo=False: runner.Outcome(-signal.SIGSEGV, False, 1.0, "boom"))
    code = cli.main(["run", "--protocol", "1", "--backend", "jax,openvino", "--models", "cnn", "mlp",
                     "--modes", "train,predict", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0
    paths = out.split()
    assert [p.split("/")[-1].split("--")[:2] for p in paths] == [["jax", "local-cpu"], ["openvino", "local-cpu"]]
    jax_rec, ov_rec = (record.load(p) for p in paths)
    assert [(r.model, r.mode, r.status, r.error.kind) for r in jax_rec.results] == [
        ("cnn", "train", "failed", "crash"), ("cnn", "predict", "failed", "crash"),
        ("mlp", "train", "failed", "crash"), ("mlp", "predict", "failed", "crash")]
    assert [r.status for r in ov_rec.results] == ["skipped", "failed", "skipped", "failed"]
    assert jax_rec.run_id == ov_rec.run_id and jax_rec.event == "local"
    assert jax_rec.environment["keras_source"] == "nightly"
    assert "[1/4] jax/local-cpu cnn train: failed (crash): killed by SIGSEGV" in err
    assert "BACKEND" in err.splitlines()[-9]


@pytest.mark.parametrize("argv, message", [
    (["--models", "cnn,resnet"], "--models names 'resnet'; expected one of: cnn, mlp"),
    (["--device", "moon"], "unknown device 'moon'"),
    (["--backend", "paddle"], "--backend names 'paddle'"),
    (["--timeout", "0"], "argument --timeout: '0'; expected a number > 0"),
])
def test_usage_errors_exit_2_with_a_message(argv, message, tmp_path, capsys):
    assert cli.main(["run", "--out", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# -- what it prints ------------------------------------------------------------

def test_progress_line_and_summary_table_text():
    good = ok("cnn", "train", 1534.4, samples=[1500.0, 1534.4, 1560.0], compile_seconds=3.41, child_seconds=17.6)
    assert progress_line("jax", "local-cpu", 1, 4, good) == (
        "[1/4] jax/local-cpu cnn train: 1,534 samples/s ±2.2% [3 repeats, compile 3.4 s, 18 s]")
    rec = make_record([good, ok("mlp", "predict", 171234.0, samples=[171234.0] * 3),
                       skipped("cnn", "train", "the openvino backend cannot train"),
                       failed("mlp", "train", "timeout", "no result within the 1 s timeout; killed")])
    assert summary_table([rec]) == (
        "BACKEND  DEVICE     MODEL  MODE     STATUS   SAMPLES/S  SPREAD  NOTE\n"
        "jax      local-cpu  cnn    train    ok           1,534  ±2.2%\n"
        "jax      local-cpu  mlp    predict  ok         171,234  ±0.0%\n"
        "jax      local-cpu  cnn    train    skipped          —          unsupported: the openvino backend cannot train\n"
        "jax      local-cpu  mlp    train    failed           —          timeout: no result within the 1 s timeout; killed\n")


def test_oom_kill_count_reads_a_number_or_nothing():
    n = runner.oom_kill_count()
    assert n is None or (isinstance(n, int) and n >= 0)


def test_each_child_gets_the_device_env_and_the_quick_protocol(tmp_path, monkeypatch):
    seen = []

    def spawn(job, echo=False):
        seen.append(job)
        return runner.Outcome(None, True, 1.0)

    monkeypatch.setattr(runner, "spawn", spawn)
    assert cli.main(["run", "--protocol", "1", "--backend", "mlx", "--quick", "--timeout", "7",
                     "--modes", "predict", "--out", str(tmp_path)]) == 0
    assert [(j.spec.model, j.spec.mode, j.timeout) for j in seen] == [("cnn", "predict", 7.0), ("mlp", "predict", 7.0)]
    # the harness's malloc thresholds, devices.local-cpu.env, and its `threads` for the backend's prepare()
    assert all(j.spec.env == {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824",
                              "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0",
                              "BENCH_MLX_DEVICE": "cpu", "BENCH_THREADS": "2"} for j in seen)
    # ... and the record lists what every benchmark process ran with
    settings = record.load(next(tmp_path.glob("*.json"))).environment["settings"]
    keys = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES", "BENCH_MLX_DEVICE")
    assert {k: settings[k] for k in keys} == {
        "MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824",
        "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "BENCH_MLX_DEVICE": "cpu"}
    assert (seen[0].spec.repeats, seen[0].spec.min_repeat_seconds) == (2, 0.05)  # the tests' quick protocol
    assert seen[1].spec.batch_size == 256


def test_protocol_2_runs_fake_workers_and_records_the_protocol(tmp_path, monkeypatch, capsys):
    from bench.measure import pool

    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    calls = []

    def spawn_worker(task, specs, *, timeout, python, cpus=None, echo=False, on_event=lambda event: None):
        calls.append((task.worker, [(s.model, s.mode, s.steps) for s in specs], timeout, cpus))
        events = []
        for s in specs:
            events.append({"start": [s.model, s.mode]})
            events.append({"done": [s.model, s.mode], "payload": {"result": dict(
                ok(s.model, s.mode, 100.0 + task.worker), steps_per_call=s.steps or 9), "environment": {}}})
        for event in events:
            on_event(event)
        return pool.WorkerOutcome(0, False, 1.0, tuple(events), timeout=timeout)

    monkeypatch.setattr(pool, "spawn_worker", spawn_worker)
    assert cli.main(["run", "--backend", "jax", "--quick", "--timeout", "7", "--models", "mlp",
                     "--modes", "train,predict", "--out", str(tmp_path)]) == 0
    assert calls == [(0, [("mlp", "train", None), ("mlp", "predict", None)], 7.0, None),
                     (1, [("mlp", "predict", 9), ("mlp", "train", 9)], 7.0, None),
                     (2, [("mlp", "train", 9), ("mlp", "predict", 9)], 7.0, None)]  # harness.quick_workers
    rec = record.load(next(tmp_path.glob("*.json")))
    assert rec.data["run"]["protocol"] == {"name": "workers", "version": 13, "memory": "least, settled"}
    # workers 100, 101, 102 without the best and the worst
    assert [(r.model, r.mode, r.value) for r in rec.results] == [("mlp", "train", 101.0), ("mlp", "predict", 101.0)]
    assert [w["value"] for w in rec.data["results"][0]["workers"]] == [100.0, 101.0, 102.0]
    assert rec.environment["check"] and "threads" in rec.environment
    err = capsys.readouterr().err
    assert "jax/local-cpu worker 3 mlp predict: 102" in err
    # a line per benchmark a worker starts: where the run is, and the time left
    assert "jax 1/1, worker 1/3, mlp/train: 0/6 done, time left: estimating" in err
    assert re.search(r"jax 1/1, worker 3/3, mlp/predict: 5/6 done, ~\d+s left", err)


def test_an_ab_run_is_a_duet_of_ab_workers_pairs_with_the_mode_in_both_records(tmp_path, monkeypatch, capsys):
    import sys
    import threading
    from bench.commands import run as run_cmd
    from bench.measure import pool

    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1})
    calls, lock = [], threading.Lock()

    def spawn_worker(task, specs, *, timeout, python, cpus=None, echo=False, on_event=lambda event: None):
        with lock:
            calls.append((task.side, task.worker, task.calibration, cpus))
        s = specs[0]
        events = ({"start": [s.model, s.mode]}, {"done": [s.model, s.mode], "payload": {"result": dict(
            ok(s.model, s.mode, 100.0 if task.side == "a" else 90.0), steps_per_call=s.steps or 9),
            "environment": {}}})
        return pool.WorkerOutcome(0, False, 1.0, events, timeout=timeout)

    monkeypatch.setattr(pool, "spawn_worker", spawn_worker)
    assert cli.main(["run", "--backend", "jax", "--models", "mlp", "--modes", "predict", "--out", str(tmp_path),
                     "--ab", sys.executable, sys.executable]) == 0
    assert calls[0] == ("a", 0, True, (0,))
    pairs = sorted(c for c in calls[1:])
    assert len(pairs) == 16 and {(side, w) for side, w, _, _ in pairs} == {(s, w) for s in "ab" for w in range(8)}
    assert dict(((side, w), cpus) for side, w, _, cpus in pairs)[("a", 1)] == (1,)  # halves swap every pair
    assert "threads 2 -> 1" in capsys.readouterr().err  # the fixture's local-cpu threads, capped to a half
    recs = {record.load(p).data["run"]["ab"]["side"]: record.load(p).data for p in tmp_path.glob("*.json")}
    assert {s: (r["run"]["ab"]["mode"], r["run"]["ab"]["cpus"]) for s, r in recs.items()} == {
        "a": ("duet", [[0], [1]]), "b": ("duet", [[0], [1]])}
    assert [w.get("calibration", False) for w in recs["a"]["results"][0]["workers"]][:2] == [True, False]
    assert len(recs["b"]["results"][0]["workers"]) == 8  # harness.ab_workers
