"""The one profiled call per benchmark (bench/measure/profiling.py): the summary's form and budget,
a profiler that raises, hangs or has nothing, which worker profiles, and that the record keeps
the profiled worker's summary. Fake backends and fake workers; real profilers in the slow test."""

import json
import time

import pytest

from bench.measure import backends, pool, profiling, schedule
from bench.measure.profiling import Reading
from tests.test_protocol2 import KEYS, FakeWorkers, payload, spec


class Backend:
    """A backend module's profile(): `reading` (a Reading, a dict, or an exception to raise)."""

    def __init__(self, reading):
        self.reading, self.calls = reading, 0

    def profile(self, call):
        call()
        self.calls += 1
        if isinstance(self.reading, BaseException):
            raise self.reading
        return self.reading() if callable(self.reading) else self.reading


def reading(n_ops=3, name=lambda i: f"op{i}"):
    ops = {name(i): ((n_ops - i) * 1_000_000, 2 * (i + 1)) for i in range(n_ops)}  # op0 longest
    return Reading("fake.profiler", ops, device_ns=sum(ns for ns, _ in ops.values()), wall_ns=20_000_000,
                   compiles=0, retraces=1)


def test_the_summary_is_per_step_longest_first():
    got = profiling.take(Backend(reading(3)), lambda: None, steps=2)
    # op0: 3 ms over 2 steps; device 6 ms, wall 20 ms: per step 1.5, 3, 10 and 7 of host
    assert got["ops"] == {"name": ["op0", "op1", "op2"], "ms": [1.5, 1.0, 0.5], "calls": [1.0, 2.0, 3.0]}
    assert (got["wall_ms"], got["device_ms"], got["host_ms"]) == (10.0, 3.0, 7.0)
    assert (got["profiler"], got["steps"], got["compiles"], got["retraces"]) == ("fake.profiler", 2, 0, 1)
    assert got["other_ops"] == [] and got["other_ms"] == 0.0 and got["seconds"] >= 0


def test_top_ten_then_the_other_names_as_far_as_the_budget_goes():
    got = profiling.take(Backend(reading(300, name=lambda i: f"some_rather_long_fusion_name_{i:03d}")),
                         lambda: None, steps=8)
    assert got["ops"]["name"] == [f"some_rather_long_fusion_name_{i:03d}" for i in range(10)]
    assert 0 < len(got["other_ops"]) < 290 and got["other_ops"][0] == "some_rather_long_fusion_name_010"
    assert profiling.size_of(got) <= profiling.BUDGET_BYTES
    huge = profiling.take(Backend(reading(12, name=lambda i: f"{i}" + "x" * 500)), lambda: None, steps=1)
    assert len(huge["ops"]["name"][0]) == profiling.NAME_CHARS and profiling.size_of(huge) <= profiling.BUDGET_BYTES
    # six results of a record: within the 8 KB a record may spend on profiles
    assert 6 * profiling.BUDGET_BYTES <= 8 * 1024


def test_the_budget_holds_whatever_the_profiled_call_took():
    """`seconds` is written after the summary is fitted: a long profile's
    wider number must not push it past the budget (CI once read 1302 bytes)."""
    for seconds in (0.001, 119.999, 1234.567):
        for width in range(1, 40):  # op names of every length: the last other op fits with 0-10 bytes to spare
            for count in (11, 40):
                ticks = iter((0.0, seconds))
                got = profiling.take(Backend(reading(count, name=lambda i: "f" * width + str(i))), lambda: None,
                                     steps=8, clock=lambda: next(ticks))
                assert got["seconds"] == seconds
                assert profiling.size_of(got) <= profiling.BUDGET_BYTES, (seconds, width, count)


def test_a_backend_without_a_profiler_says_why():
    got = profiling.take(Backend({"unavailable": "no profiler here"}), lambda: None, steps=8)
    assert got["unavailable"] == "no profiler here" and set(got) == {"unavailable", "seconds"}
    assert "unavailable" in backends.get("mlx").profile(lambda: None)
    assert "unavailable" in backends.get("numpy").profile(lambda: None)


def test_a_profiler_that_raises_is_recorded_with_its_kind_in_one_line():
    got = profiling.take(Backend(RuntimeError("trace\nfailed")), lambda: None, steps=8)
    assert got["error"] == {"kind": "crash", "message": "RuntimeError: trace failed"}
    assert profiling.take(Backend(MemoryError()), lambda: None, 8)["error"]["kind"] == "oom"
    assert profiling.take(Backend(lambda: 42), lambda: None, 8)["error"]["kind"] == "crash"  # a wrong answer


def test_a_profiler_that_hangs_is_stopped_and_recorded_as_a_timeout():
    def hang():
        while True:
            time.sleep(0.01)

    t0 = time.monotonic()
    got = profiling.take(Backend(reading()), hang, steps=8, limit_s=0.3)
    assert got["error"]["kind"] == "timeout" and time.monotonic() - t0 < 5
    # the alarm is off again: a later wait is not cut short
    time.sleep(0.5)


def test_the_profiled_worker_runs_its_benchmark_latest_in_its_process():
    for count, workers in ((6, 5), (4, 5), (2, 3), (1, 1), (5, 2)):
        tasks = schedule.plan(tuple(range(count)), workers)
        for i in range(count):
            w = schedule.profiled_worker(i, count, workers)
            position = tasks[w].keys.index(i)
            assert position == max(t.keys.index(i) for t in tasks)
            if workers >= count:
                assert position == count - 1  # the last thing its process does
    with pytest.raises(ValueError, match="profiled_worker"):
        schedule.profiled_worker(3, 3, 5)


def test_one_worker_per_benchmark_profiles_and_the_record_keeps_its_summary():
    def script(task, s):
        p = payload((s.model, s.mode), 100.0)
        if s.profile:
            p["result"]["profile"] = {"unavailable": f"worker {task.worker}", "seconds": 0.0}
        return p

    fake = FakeWorkers(script)
    seen = []
    out = pool.run_backend([spec(*k) for k in KEYS], 5, lambda t, specs: (seen.append((t, specs)), fake(t, specs))[1],
                           profile="")
    flagged = [(t.worker, (s.model, s.mode)) for t, specs in seen for s in specs if s.profile]
    assert sorted(k for _, k in flagged) == sorted(KEYS)  # each benchmark exactly once
    for r in out[""].results:
        w = schedule.profiled_worker(KEYS.index((r["model"], r["mode"])), len(KEYS), 5)
        assert r["profile"]["unavailable"] == f"worker {w}"
    none = pool.run_backend([spec(*k) for k in KEYS], 2, FakeWorkers(script))  # profile=None: no worker
    assert all("profile" not in r for r in none[""].results)
    # beside a reference (a duet): this build's side "b" profiles, the reference's never
    paired = pool.run_backend([spec(*k) for k in KEYS], 3, FakeWorkers(script), sides=("a", "b"), duet=True,
                              profile="b")
    assert all("profile" in r for r in paired["b"].results)
    assert all("profile" not in r for r in paired["a"].results)


def test_a_run_profiles_this_builds_side_and_never_an_ab_or_workers_side_by_side():
    from argparse import Namespace

    from bench.commands.run import _profile_side

    base = dict(no_profile=False, ab=None, reference=None)
    assert _profile_side(Namespace(**base), 1) == ""  # a solo run: its one side
    assert _profile_side(Namespace(**{**base, "reference": "/ref/python"}), 1) == "b"  # the nightly, not its reference
    assert _profile_side(Namespace(**{**base, "no_profile": True}), 1) is None
    assert _profile_side(Namespace(**{**base, "ab": ["/a/python", "/b/python"]}), 1) is None  # both sides are figures
    assert _profile_side(Namespace(**base), 2) is None  # workers side by side (--quick)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_real_profilers_give_a_summary_within_the_budget(backend, tmp_path):
    """A real Keras model under jax.profiler / torch.profiler, in a child process (one backend each)."""
    import subprocess
    import sys

    code = f"""
import json, os
os.environ["KERAS_BACKEND"] = "{backend}"
from bench.measure.child import Spec, execute
for model, mode in (("mlp", "train"), ("cnn", "predict"), ("mlp", "latency")):
    s = Spec(backend="{backend}", keras_backend="{backend}", model=model, mode=mode,
             batch_size=128, repeats=1, min_repeat_seconds=0.05, warmup_steps=1, result_path="",
             profile=True, latency_calls=200)
    r = execute(s)["result"]
    print(json.dumps([model, mode, r["status"], r.get("profile")]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    rows = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("[")]
    assert len(rows) == 3, out.stderr[-2000:]
    for model, mode, status, prof in rows:
        assert status == "ok" and prof["profiler"] == f"{backend}.profiler", prof
        assert prof["ops"]["name"] and prof["wall_ms"] > 0 and prof["device_ms"] > 0
        assert prof["compiles"] == 0 and prof["retraces"] == 0  # warm: nothing compiles in the profiled call
        assert profiling.size_of(prof) <= profiling.BUDGET_BYTES
