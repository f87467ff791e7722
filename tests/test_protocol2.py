"""Protocol 2 without real backends: schedule, fixed work, estimator,
disturbance flags, worker crashes, A/B sides, the machine lock, bench check,
and the checks of what was timed. Fake clocks and fake workers throughout."""

import json
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from bench.measure import check, disturbance, estimate, lock, pool, schedule, verify
from bench.measure.child import Spec
from bench.measure.harness import benchmark, setup_seconds
from bench.measure.workloads import gate
from tests.test_harness import FakeMachine, protocol

KEYS = (("cnn", "train"), ("cnn", "predict"), ("mlp", "train"), ("mlp", "predict"))


def spec(model, mode, backend="jax"):
    return Spec(backend=backend, keras_backend=backend, model=model, mode=mode, batch_size=100, repeats=3,
                min_repeat_seconds=0.25, warmup_steps=2, result_path="")


# -- schedule ------------------------------------------------------------------

def test_workers_run_every_benchmark_in_an_order_rotated_by_one():
    tasks = schedule.plan(KEYS, 3)
    assert [t.keys for t in tasks] == [KEYS, KEYS[1:] + KEYS[:1], KEYS[2:] + KEYS[:2]]
    assert [t.worker for t in tasks] == [0, 1, 2]


def test_ab_workers_alternate_a_b_a_b():
    tasks = schedule.plan(KEYS[:2], 2, sides=("a", "b"))
    assert [(t.side, t.worker) for t in tasks] == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]


def test_reruns_give_each_disturbed_worker_one_more_process():
    tasks = schedule.reruns({("", KEYS[0]): 2, ("", KEYS[3]): 1}, 5, KEYS)
    assert [(t.worker, t.keys, t.rerun) for t in tasks] == [(5, (KEYS[0], KEYS[3]), True), (6, (KEYS[0],), True)]


def test_plan_rejects_no_workers():
    with pytest.raises(ValueError, match="workers is 0"):
        schedule.plan(KEYS, 0)


# -- estimator -----------------------------------------------------------------

def test_headline_estimators_and_the_unstable_flag():
    values = [100.0, 90.0, 130.0, 101.0, 99.0]
    samples = [95.0, 100.0, 140.0, 125.0]  # the workers' repeats
    assert estimate.headline(values, how="median") == 100.0  # median of worker medians
    assert estimate.headline(values, how="best") == 130.0
    assert estimate.headline(values, how="fastest", samples=samples) == 140.0
    # the shipped headline (workers v9): the mean of 100, 101, 99 (130 and 90 left out)
    assert estimate.headline(values, samples=samples) == estimate.headline(values, how="trimmed") == 100.0
    assert estimate.headline([5.0, 4.0], "smaller", how="best") == 4.0
    assert estimate.headline([5.0, 4.0], "smaller", how="fastest", samples=[5.5, 3.9, 4.2]) == 3.9
    with pytest.raises(ValueError, match="'fastest' needs the workers' samples"):
        estimate.headline(values, how="fastest")
    assert estimate.headline([100.0, 90.0], how="trimmed") == 95.0  # two workers: their mean
    assert estimate.spread(values, 100.0) == pytest.approx(0.30)
    assert "±30.0%" in estimate.unstable(values, 100.0, 0.10)
    assert estimate.unstable([100.0, 104.0, 97.0], 100.0, 0.10) is None
    assert estimate.unstable([100.0], 100.0, 0.10) == "only 1 clean worker"


# -- disturbance ---------------------------------------------------------------

def test_a_window_turns_cpu_time_pressure_and_steal_into_fractions():
    a = disturbance.Snapshot(wall=10.0, cpu=5.0, stall_us=1_000_000, steal=100, ticks=1000)
    b = disturbance.Snapshot(wall=12.0, cpu=8.0, stall_us=1_500_000, steal=110, ticks=1200)
    w = disturbance.between(a, b)
    assert (w.cpu_per_wall, w.stall, w.steal) == (1.5, 0.25, 0.05)
    assert disturbance.between(disturbance.Snapshot(10.0, 5.0, None, None, None), b).stall is None


def test_a_snapshot_reads_cpu_time_finer_than_a_clock_tick(monkeypatch):
    # a 40 ms latency round that used 39.5 ms of CPU: clock ticks (os.times, 10 ms) would
    # read 30 or 40 ms; the process CPU clock reads what was used
    cpu = iter([7.0, 7.0395])
    monkeypatch.setattr(disturbance.time, "process_time", lambda: next(cpu))
    monkeypatch.setattr("os.times", lambda: pytest.fail("CPU time read in clock ticks"))
    wall = iter([100.0, 100.04])
    a, b = disturbance.snapshot(lambda: next(wall)), disturbance.snapshot(lambda: next(wall))
    assert (a.cpu, b.cpu) == (7.0, 7.0395)
    assert disturbance.between(a, b).cpu_per_wall == pytest.approx(0.9875)


def test_pressure_and_steal_readers(tmp_path):
    psi = tmp_path / "cpu"
    psi.write_text("some avg10=1.00 avg60=2.00 avg300=3.00 total=123456\nfull avg10=0 avg60=0 avg300=0 total=0\n")
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 0 5 80 1 0 2 3 0 0\ncpu0 1 2 3\n")
    assert disturbance.read_stall_us(psi) == 123456
    assert disturbance.read_steal(stat) == (3, 101)
    assert disturbance.read_stall_us(tmp_path / "missing") is None


def test_a_worker_off_from_its_peers_is_flagged_with_the_reason():
    peers = [{"cpu_per_wall": 1.8, "stall": 0.10, "steal": 0.0}] * 4
    hogged = {"cpu_per_wall": 1.1, "stall": 0.45, "steal": 0.0}
    stolen = {"cpu_per_wall": 1.8, "stall": 0.10, "steal": 0.12}
    why = disturbance.flag_workers([*peers, hogged, stolen, None])
    assert why[:4] == [None] * 4 and why[6] is None
    assert "CPU per wall second 1.10 vs the best worker's 1.80" in why[4] and "CPU stall 45%" in why[4]
    assert why[5] == "steal 12% of CPU ticks vs the best worker's 0%"


def test_a_machine_busy_for_every_worker_flags_none():
    # the shared VM: every worker stalls ~60 %; only a worker off from its peers is disturbed
    busy = [{"cpu_per_wall": 1.05, "stall": 0.6 + i / 100, "steal": 0.01} for i in range(5)]
    assert disturbance.flag_workers(busy) == [None] * 5


# -- harness: fixed work and set-up cost ---------------------------------------

def test_fixed_work_skips_calibration_and_times_exactly_those_steps():
    m = FakeMachine(step_seconds=0.01)
    t = benchmark(m.run, 100, protocol(repeats=3), clock=m.clock, canary=m.canary, steps=37)
    assert t.calibration == () and t.steps == 37
    assert [c[0] for c in m.calls] == [2, 37, 37, 37]  # warm-up, then the repeats only
    assert t.value == pytest.approx(37 * 100 / 0.37)


def test_the_timed_window_dates_the_timed_repeats_and_not_the_warm_up():
    m = FakeMachine(step_seconds=0.01)
    epoch = 1_764_000_000.0  # the wall clock follows the fake one
    t = benchmark(m.run, 100, protocol(repeats=3, warmup_steps=50), clock=m.clock, canary=m.canary,
                  steps=10, wall=lambda: epoch + m.clock())
    start, end = t.timed_window
    first_timed = next(s for steps, s, _ in m.calls if steps == 10)
    assert start - epoch <= first_timed and start - epoch >= m.calls[0][2]  # after the warm-up
    assert end - epoch == pytest.approx(m.calls[-1][2], abs=0.01)  # the last repeat's end, give or take a canary
    assert end - start >= sum(r.seconds for r in t.repeats)
    assert t.summary()["timed_window"] == [round(start, 3), round(end, 3)]


def test_the_probe_is_read_around_every_timed_call():
    m = FakeMachine(step_seconds=0.01)
    cpu = iter(range(0, 1000, 1))

    def probe():
        return disturbance.Snapshot(m.clock(), float(next(cpu)), None, None, None)

    t = benchmark(m.run, 100, protocol(repeats=3), clock=m.clock, canary=m.canary, steps=10, probe=probe)
    assert all(r.load is not None for r in t.repeats)
    assert set(t.summary()["disturbance"]) == {"cpu_per_wall", "stall", "steal"}


def test_setup_seconds_is_the_per_call_cost_apart_from_the_steps():
    m = FakeMachine(step_seconds=0.01, call_overhead=0.2)
    t = benchmark(m.run, 100, protocol(repeats=3), clock=m.clock, canary=m.canary, steps=50)
    assert setup_seconds(m.run, t, m.clock) == pytest.approx(0.2)


# -- pool: fake workers --------------------------------------------------------

def payload(key, value, steps=40, load=None, ok=True, kind="crash", samples=None):
    model, mode = key
    if not ok:
        return {"result": {"model": model, "mode": mode, "status": "failed",
                           "error": {"kind": kind, "message": f"{kind} in {model}/{mode}"}},
                "environment": {"keras_version": "3.x"}}
    return {"result": {"model": model, "mode": mode, "unit": "samples/s", "better": "bigger", "batch_size": 100,
                       "status": "ok", "value": value, "samples": samples or [value], "steps_per_call": steps,
                       "setup_seconds": 0.01, "canary": {"baseline_seconds": 0.004, "kept": "clean",
                                                           "seconds": [0.0045, 0.0042, 0.0048]},
                       "disturbance": load or {"cpu_per_wall": 1.8, "stall": 0.1, "steal": 0.0},
                       "timed_window": [0.25, 0.75]},
            "environment": {"keras_version": "3.x"}}


class FakeWorkers:
    """spawn_fn: each call is one worker process; `script(task, spec)` gives
    the payload, or "crash"/"hang" to die in that benchmark."""

    def __init__(self, script):
        self.script, self.calls = script, []

    def __call__(self, task, specs):
        self.calls.append((task, [(s.model, s.mode, s.steps) for s in specs]))
        events = []
        for position, s in enumerate(specs):
            key = (s.model, s.mode)
            events.append({"start": list(key), "time": 0.0})
            p = self.script(task, s)
            if p in ("crash", "hang"):
                return pool.WorkerOutcome(-11 if p == "crash" else -9, p == "hang", 1.0, tuple(events),
                                          "Fatal Python error: Segmentation fault", None, 60.0)
            events.append({"done": list(key), "payload": p, "window": [0.0, 1.0], "position": position})
        return pool.WorkerOutcome(0, False, 1.0, tuple(events), timeout=60.0)


def test_the_first_worker_calibrates_and_every_later_worker_reuses_its_steps():
    steps = {KEYS[0]: 11, KEYS[1]: 22}
    fake = FakeWorkers(lambda t, s: payload((s.model, s.mode), 100.0, steps=s.steps or steps[(s.model, s.mode)]))
    out = pool.run_backend([spec(*k) for k in KEYS[:2]], 3, fake)
    assert fake.calls[0][1] == [("cnn", "train", None), ("cnn", "predict", None)]
    assert fake.calls[1][1] == [("cnn", "predict", 22), ("cnn", "train", 11)]
    assert fake.calls[2][1] == [("cnn", "train", 11), ("cnn", "predict", 22)]
    r = out[""].results[0]
    assert (r["status"], r["value"], r["steps_per_call"], len(r["workers"])) == ("ok", 100.0, 11, 3)
    assert r["workers"][0] == {"value": 100.0, "samples": [100.0], "status": "ok", "disturbed": False,
                               "steps_per_call": 11, "setup_seconds": 0.01, "reference_seconds": 0.004,
                               "reference_median_seconds": 0.0045,  # the canaries around its repeats
                               "disturbance": {"cpu_per_wall": 1.8, "stall": 0.1, "steal": 0.0},
                               "window": [0.0, 1.0], "timed_window": [0.25, 0.75], "position": 0}
    assert [w["position"] for w in out[""].results[1]["workers"]] == [1, 0, 1]  # its place in each process


def test_peak_memory_is_the_least_first_round_workers():
    # Two benchmarks, 3 workers (orders AB, BA, AB); a process's peak grows with what
    # ran before it in the process. Worker 2's B is disturbed and rerun alone: a
    # fresh process, which a busier night has more of, so it does not count.
    def script(task, s):
        key = (s.model, s.mode)
        p = payload(key, 60.0 if (task.worker, key, task.rerun) == (2, KEYS[1], False) else 100.0,
                    load={"cpu_per_wall": 1.0, "stall": 0.5, "steal": 0.0} if (task.worker, key) == (2, KEYS[1])
                    and not task.rerun else None)
        position = task.keys.index(key)
        p["result"]["memory"] = {"host_peak_bytes": 1000 * (1 + position) + 10 * task.worker - (50 if task.rerun else 0),
                                 "device_peak_bytes": None}
        return p

    a, b = pool.run_backend([spec(*k) for k in KEYS[:2]], 3, FakeWorkers(script))[""].results
    assert [w["host_peak_bytes"] for w in a["workers"]] == [1000, 2010, 1020]  # every worker keeps its own
    assert a["memory"]["host_peak_bytes"] == 1000
    assert [w["host_peak_bytes"] for w in b["workers"]] == [2000, 1010, 2020, 980]
    assert [w.get("rerun", False) for w in b["workers"]] == [False, False, False, True]
    assert b["memory"]["host_peak_bytes"] == 1010  # worker 1 ran B first; the rerun's 980 does not count
    assert pool.memory_workers([{"rerun": True}, {"rerun": True}]) == [0, 1]  # only reruns: those


def test_every_later_worker_gets_the_fastest_canary_its_side_has_seen():
    canaries = iter([0.006, 0.004, 0.005])  # each worker's own fastest canary, in order
    floors = []

    def script(task, s):
        floors.append(s.canary_floor)
        p = payload((s.model, s.mode), 100.0)
        p["result"]["canary"]["baseline_seconds"] = next(canaries)
        return p

    pool.run_backend([spec("mlp", "latency")], 3, FakeWorkers(script))
    # the first worker has none; then the fastest so far (a slow-state worker is judged by it)
    assert floors == [None, 0.006, 0.004]


def test_a_worker_process_hands_its_fastest_canary_to_its_next_benchmark(tmp_path, monkeypatch):
    from bench.measure import child, worker

    seen, own = [], iter([0.005, 0.007, 0.004])

    def execute(s):
        seen.append(s.canary_floor)
        return {"result": {"status": "ok", "canary": {"baseline_seconds": next(own)}}, "environment": {}}

    monkeypatch.setattr(child, "execute", execute)
    specs = [replace(spec(*k), canary_floor=0.006) for k in KEYS[:3]]  # the parent's floor: 6 ms
    assert worker.main([worker.WorkerSpec(tuple(specs), str(tmp_path / "events.jsonl")).to_json()]) == 0
    assert seen == [0.006, 0.005, 0.005]  # the parent's, then the fastest this process read
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["position"] for e in lines if "done" in e] == [0, 1, 2]  # benchmarks run before it here


def test_the_headline_is_the_clean_workers_trimmed_mean_and_a_disturbed_worker_reruns_once():
    values = iter([100.0, 102.0, 60.0, 98.0, 101.0, 99.0])  # the third worker is hogged

    def script(task, s):
        v = next(values)
        load = {"cpu_per_wall": 1.0, "stall": 0.5, "steal": 0.0} if v == 60.0 else None
        # each worker's repeats around its median; the hogged one had one repeat at 110
        return payload((s.model, s.mode), v, load=load, samples=[v - 1, v, 110.0 if v == 60.0 else v + 1])

    fake = FakeWorkers(script)
    r = pool.run_backend([spec("mlp", "predict")], 5, fake)[""].results[0]
    assert [t.rerun for t, _ in fake.calls] == [False] * 5 + [True]
    assert [w["disturbed"] for w in r["workers"]] == [False, False, True, False, False, False]
    assert "CPU per wall second 1.00" in r["workers"][2]["disturbed_why"]
    assert r["workers"][5]["rerun"] is True
    # the clean workers 100, 102, 98, 101, 99 without the best and the worst: the mean of
    # 100, 101, 99 (the hogged worker's 60, and its 110 repeat, count in none)
    assert (r["value"], r["estimator"], r["disturbed_workers"]) == (100.0, "trimmed", 1)
    assert r["samples"] == [99.0, 100.0, 101.0, 101.0, 102.0, 103.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0,
                            98.0, 99.0, 100.0]
    # the spread is the workers' distance from their median (100), not from the headline
    assert r["unstable"] is False and r["spread"] == pytest.approx(0.02)


def test_a_worker_whose_canary_read_slow_throughout_is_flagged_only_when_its_figure_is_slower_too():
    # latency p50s in ms (smaller is better); workers 1 and 3 ran with every canary slow
    # (`kept: all`). The clean peers' median is 0.20 ms: worker 1's 0.204 (1.02x) bears
    # no slowdown out and counts; worker 3's 0.23 (1.15x) does, and is flagged and rerun.
    rows = iter([(0.20, "clean"), (0.204, "all"), (0.19, "clean"), (0.23, "all"), (0.21, "clean"),
                 (0.20, "clean")])

    def script(task, s):
        p50, kept = next(rows)
        p = payload((s.model, s.mode), p50)
        p["result"]["canary"]["kept"] = kept
        return p

    fake = FakeWorkers(script)
    r = pool.run_backend([spec("mlp", "latency")], 5, fake)[""].results[0]
    assert [t.rerun for t, _ in fake.calls] == [False] * 5 + [True]
    assert [w["disturbed"] for w in r["workers"]] == [False, False, False, True, False, False]
    assert r["workers"][3]["disturbed_why"] == "the in-process canary stayed slow for every repeat"
    # the headline: 0.20, 0.204, 0.19, 0.21 and the rerun's 0.20 without the best and the worst
    assert r["value"] == pytest.approx((0.20 + 0.204 + 0.20) / 3)


@pytest.mark.parametrize("value, centre, better, flagged", [
    (0.206, 0.20, "smaller", False),  # 1.03x: not beyond it
    (0.207, 0.20, "smaller", True),
    (97.5, 100.0, "bigger", False),   # samples/s 2.5 % fewer
    (96.0, 100.0, "bigger", True),
    (50.0, None, "bigger", True),     # no clean peer to compare with: the canary decides
])
def test_a_canary_flag_needs_the_figure_to_bear_it_out(value, centre, better, flagged):
    assert disturbance.canary_confirmed(value, centre, better) is flagged


def test_peak_memory_counts_every_first_round_worker_while_latency_counts_the_clean_ones():
    rows = iter([(0.20, 300), (0.21, 300), (0.40, 100), (0.19, 300), (0.22, 300), (0.20, 50)])

    def script(task, s):
        p50, mib = next(rows)
        p = payload((s.model, s.mode), p50, load={"cpu_per_wall": 1.0, "stall": 0.5, "steal": 0.0}
                    if p50 == 0.40 else None)
        p["result"].update(latency={"p50_ms": p50, "p90_ms": p50, "p99_ms": p50, "mean_ms": p50, "calls": 200,
                                    "path": "predict_on_batch"},
                           memory={"host_peak_bytes": mib << 20, "device_peak_bytes": None})
        return p

    r = pool.run_backend([spec("mlp", "latency")], 5, FakeWorkers(script))[""].results[0]
    assert r["workers"][2]["disturbed"] is True  # the 0.40 ms worker, rerun as the sixth
    assert r["latency"]["p50_ms"] == 0.2  # median of the clean 0.20, 0.21, 0.19, 0.22, 0.20
    # the headline: the clean workers' p50s 0.20, 0.21, 0.19, 0.22, 0.20 (the rerun) without the best
    # and the worst (the disturbed 0.40 worker counts in none)
    assert (r["value"], r["estimator"]) == (pytest.approx(0.61 / 3), "trimmed")
    # the least of the first round's five, the disturbed one's 100 MiB too (a slow CPU
    # moves no peak); of the clean ones it would be 300, with the rerun's 50
    assert r["memory"]["host_peak_bytes"] == 100 << 20


def test_a_spread_beyond_the_limit_is_flagged_unstable_with_the_reason():
    values = iter([100.0, 130.0, 80.0])
    r = pool.run_backend([spec("mlp", "train")], 3,
                         FakeWorkers(lambda t, s: payload((s.model, s.mode), next(values))))[""].results[0]
    assert r["unstable"] is True and "±30.0%" in r["unstable_why"]


def test_a_crashed_worker_is_recorded_with_its_kind_and_the_other_workers_still_count():
    def script(task, s):
        if task.worker == 1 and s.model == "cnn" and s.mode == "predict":
            return "crash"
        return payload((s.model, s.mode), 100.0 + task.worker)

    fake = FakeWorkers(script)
    out = pool.run_backend([spec(*k) for k in KEYS], 3, fake)[""].results
    # worker 1 runs cnn/predict first: it crashes there, and the rest of its list runs in a fresh process
    assert fake.calls[1][1][0][:2] == ("cnn", "predict")
    assert [k[:2] for k in fake.calls[2][1]] == [("mlp", "train"), ("mlp", "predict"), ("cnn", "train")]
    cnn_predict = out[1]
    assert cnn_predict["status"] == "ok" and cnn_predict["failed_workers"] == 1
    assert [w["status"] for w in cnn_predict["workers"]] == ["ok", "failed", "ok"]
    assert cnn_predict["workers"][1]["error"]["kind"] == "crash"
    assert "SIGSEGV" in cnn_predict["workers"][1]["error"]["message"]
    assert cnn_predict["value"] == 101.0  # workers 0 and 2 only: the mean of 100 and 102
    assert all(r["status"] == "ok" and len(r["workers"]) == 3 for r in out)


def test_a_benchmark_whose_every_worker_fails_is_failed_with_the_first_kind():
    fake = FakeWorkers(lambda t, s: "hang" if s.mode == "train" else payload((s.model, s.mode), 5.0))
    out = pool.run_backend([spec("mlp", "train"), spec("mlp", "predict")], 2, fake)[""].results
    assert out[0]["status"] == "failed" and out[0]["error"]["kind"] == "timeout"
    assert out[1]["status"] == "ok"


def test_an_install_failure_stops_the_side_and_unsupported_modes_never_start():
    fake = FakeWorkers(lambda t, s: payload((s.model, s.mode), 0, ok=False, kind="install"))
    out = pool.run_backend([spec("mlp", "train", "openvino"), spec("mlp", "predict", "openvino")], 3, fake,
                           supports=lambda mode: mode == "predict")[""].results
    assert len(fake.calls) == 1 and fake.calls[0][1] == [("mlp", "predict", None)]
    assert out[0]["status"] == "skipped" and out[0]["error"]["kind"] == "unsupported"
    assert out[1]["status"] == "failed" and out[1]["error"]["kind"] == "install"
    assert [w["error"]["message"].startswith("not run") for w in out[1]["workers"]] == [False, True, True]


def test_ab_sides_interleave_share_the_fixed_work_and_give_two_sets_of_results():
    fake = FakeWorkers(lambda t, s: payload((s.model, s.mode), 100.0 if t.side == "a" else 90.0,
                                            steps=s.steps or 7))
    out = pool.run_backend([spec("mlp", "predict")], 3, fake, sides=("a", "b"))
    assert [(t.side, t.worker) for t, _ in fake.calls] == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert [c[1][0][2] for c in fake.calls] == [None, 7, 7, 7, 7, 7]
    assert out["a"].results[0]["value"] == 100.0 and out["b"].results[0]["value"] == 90.0


def test_a_duet_calibrates_alone_then_runs_each_pair_at_once_on_swapped_cpu_halves():
    groups = schedule.duet(KEYS[:2], 3)
    assert [[(t.side, t.worker, t.calibration) for t in g] for g in groups] == [
        [("a", 0, True)], [("a", 0, False), ("b", 0, False)], [("a", 1, False), ("b", 1, False)],
        [("a", 2, False), ("b", 2, False)]]
    assert groups[2][0].keys == groups[2][1].keys == (KEYS[1], KEYS[0])
    pair = schedule.halves({3, 0, 2, 1, 7})
    assert pair == ((0, 1), (2, 3)) and schedule.halves({5}) is None
    cpus = [[schedule.duet_cpus(t, pair) for t in g] for g in groups]
    assert cpus == [[(0, 1)], [(0, 1), (2, 3)], [(2, 3), (0, 1)], [(0, 1), (2, 3)]]


def test_duet_reruns_take_both_sides_for_a_benchmark_disturbed_on_either():
    groups = schedule.duet_reruns({("a", KEYS[0]): 1, ("b", KEYS[1]): 2}, 5, KEYS[:2])
    assert [[(t.side, t.worker, t.keys, t.rerun) for t in g] for g in groups] == [
        [("a", 5, KEYS[:2], True), ("b", 5, KEYS[:2], True)], [("a", 6, (KEYS[1],), True), ("b", 6, (KEYS[1],), True)]]


def test_a_duet_runs_both_workers_of_a_pair_at_the_same_time_with_the_calibrated_work():
    both_running = threading.Barrier(2, timeout=10)  # broken unless A i and B i run at once

    def script(task, s):
        if not task.calibration:
            both_running.wait()
        value = 500.0 if task.calibration else (100.0 if task.side == "a" else 90.0)
        return payload((s.model, s.mode), value, steps=s.steps or 7)

    fake = FakeWorkers(script)
    out = pool.run_backend([spec("mlp", "predict")], 3, fake, sides=("a", "b"), duet=True)
    assert fake.calls[0][0].calibration and fake.calls[0][1] == [("mlp", "predict", None)]
    assert sorted((t.side, t.worker, st[0][2]) for t, st in fake.calls[1:]) == [
        ("a", 0, 7), ("a", 1, 7), ("a", 2, 7), ("b", 0, 7), ("b", 1, 7), ("b", 2, 7)]
    a, b = out["a"].results[0], out["b"].results[0]
    assert [w.get("calibration", False) for w in a["workers"]] == [True, False, False, False]
    assert a["workers"][0]["value"] == 500.0  # kept in the record, but in no headline
    assert (a["value"], b["value"], a["spread"], len(b["workers"])) == (100.0, 90.0, 0.0, 3)
    from bench.records.workers import worker_values
    assert worker_values(a) == (100.0, 100.0, 100.0) and worker_values(b) == (90.0, 90.0, 90.0)


def test_a_duet_worker_that_dies_leaves_its_leftovers_alone_out_of_headline_and_pairs():
    def script(task, s):
        if task.side == "a" and task.worker == 2 and not task.calibration and s.model == "cnn":
            return "crash"
        return payload((s.model, s.mode), 100.0 if task.side == "a" else 90.0, steps=s.steps or 7)

    fake = FakeWorkers(script)
    out = pool.run_backend([spec("cnn", "predict"), spec("mlp", "predict")], 3, fake, sides=("a", "b"), duet=True)
    # A's worker 3 runs cnn first (rotated by 2 of 2) and dies there; its mlp runs after, without B
    a_cnn, a_mlp = out["a"].results
    from bench.records.workers import worker_values
    alone = [w for w in a_mlp["workers"] if w.get("alone")]
    assert len(alone) == 1 and alone[0]["value"] == 100.0
    assert worker_values(a_mlp) == (100.0, 100.0, None)
    assert [w["status"] for w in a_cnn["workers"]] == ["ok", "ok", "ok", "failed"]  # calibration first
    assert a_cnn["failed_workers"] == 1 and a_mlp["value"] == 100.0


def test_duet_needs_both_sides():
    with pytest.raises(ValueError, match="duet needs the sides"):
        pool.run_backend([spec("mlp", "predict")], 2, FakeWorkers(lambda t, s: payload(("mlp", "predict"), 1.0)),
                         duet=True)


def test_worker_outcome_knows_the_benchmark_it_died_in():
    out = pool.WorkerOutcome(-9, True, 5.0, ({"start": ["cnn", "train"]}, {"done": ["cnn", "train"], "payload": {}},
                                              {"start": ["mlp", "train"]}), timeout=30.0)
    assert out.stuck() == ("mlp", "train")
    assert out.failure().kind == "timeout" and "30 s" in out.failure().message


def test_a_worker_process_runs_with_its_specs_env(tmp_path):
    # A stand-in python that writes down the environment it was started with:
    # the harness's malloc settings reach the worker process itself.
    seen = tmp_path / "env.txt"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nenv > {seen}\n")
    fake.chmod(0o755)
    s = replace(spec("mlp", "train"), env={"MALLOC_MMAP_THRESHOLD_": "33554432", "BENCH_THREADS": "1",
                                           "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"})
    out = pool.spawn_worker(schedule.Task("", 0, (("mlp", "train"),)), [s], timeout=30, python=str(fake))
    assert out.returncode == 0
    lines = seen.read_text().splitlines()
    assert "MALLOC_MMAP_THRESHOLD_=33554432" in lines and "KERAS_BACKEND=jax" in lines
    assert "GLIBC_TUNABLES=glibc.malloc.tcache_count=0" in lines


# -- the machine lock ----------------------------------------------------------

def test_a_second_run_waits_for_the_lock_and_says_so(tmp_path):
    where = tmp_path / "bench.lock"
    said, order = [], []
    first_in = threading.Event()

    def first():
        with lock.held(where, said.append, "first run"):
            first_in.set()
            time.sleep(0.3)
            order.append("first done")

    t = threading.Thread(target=first)
    t.start()
    first_in.wait(5)
    with lock.held(where, said.append, "second run"):
        order.append("second in")
    t.join()
    assert order == ["first done", "second in"]
    assert len(said) == 1 and "waiting for the machine lock" in said[0] and "held by first run" in said[0]


def test_the_lock_path_comes_from_bench_lock(tmp_path):
    assert lock.path({"BENCH_LOCK": str(tmp_path / "x.lock")}) == tmp_path / "x.lock"
    assert lock.path({}).name == "keras-nightly-bench.lock"


# -- bench check and device resources ------------------------------------------

READINGS = {
    "cpu": {"logical_cpus": 2, "governor": "powersave", "frequency_mhz": {"current": 2000, "min": 800, "max": 3600},
            "load_average": [3.0, 2.0, 1.0], "pressure": {"some_avg10": 40.0, "some_avg60": 20.0},
            "steal_percent": 0.0},
    "swap": {"total_bytes": 2**30, "used_bytes": 2**28},
    "gpu": {"devices": [{"index": 0, "processes": [{"pid": 1, "name": "other-job", "used_bytes": 10}]}]},
    "environ": {}, "affinity": [0, 1],
}


def test_check_findings_say_what_to_change():
    items = {i["topic"]: i for i in check.findings(READINGS)}
    assert {t: i["status"] for t, i in items.items()} == {
        "governor": "warn", "frequency": "warn", "load": "warn", "cpu_pressure": "warn", "steal": "ok",
        "swap": "warn", "gpu_processes": "warn", "threads": "warn"}
    assert "performance governor" in items["governor"]["advice"]
    assert "256 MiB swapped out" in items["swap"]["advice"]
    assert "1 other process(es) on the GPU" in items["gpu_processes"]["advice"]
    assert check.findings(READINGS, threads=2, cpus=(0, 1))[-1]["status"] == "ok"
    assert "warn    governor" in check.render(list(items.values()))


def test_threads_or_cpus_that_do_not_exist_are_named_by_key():
    assert check.resources(2, (0, 1), {0, 1}, "devices.local-cpu") is None
    assert check.resources(None, (0, 3), {0, 1}, "devices.local-cpu") == (
        "key 'devices.local-cpu.cpus' is [0, 3]; CPU(s) [3] do not exist here (expected ids among [0, 1])")
    assert check.resources(4, None, {0, 1}, "devices.x") == (
        "key 'devices.x.threads' is 4; this machine gives the workers 2 CPU(s) (expected 1..2)")
    assert "devices.x.threads" in check.resources(2, (1,), {0, 1}, "devices.x")


def test_worker_cpus_beyond_the_machine_or_below_threads_are_named_by_key():
    assert check.resources(1, None, {0, 1}, "devices.local-cpu", worker_cpus=1) is None
    assert check.resources(None, None, {0, 1}, "devices.x", worker_cpus=3) == (
        "key 'devices.x.worker_cpus' is 3; this machine gives the workers 2 CPU(s) (expected 1..2)")
    assert check.resources(2, None, {0, 1}, "devices.x", worker_cpus=1) == (
        "key 'devices.x.threads' is 2; this machine gives the workers 1 CPU(s) (expected 1..1)")
    assert check.resources(None, None, None, "devices.x", worker_cpus=1) == (
        "key 'devices.x.worker_cpus' is 1; this OS cannot pin CPUs (no sched_setaffinity)")


def test_with_worker_cpus_each_worker_takes_the_next_slice_of_the_cpus():
    tasks = [schedule.Task("", w, KEYS) for w in range(5)]
    assert [schedule.worker_slice(t, {0, 1}, 1) for t in tasks] == [(0,), (1,), (0,), (1,), (0,)]
    assert [schedule.worker_slice(t, (4, 5, 6), 2) for t in tasks[:3]] == [(4, 5), (6, 4), (5, 6)]


def test_bench_run_refuses_missing_cpus_before_any_benchmark(tmp_path, monkeypatch, capsys):
    from bench import cli
    from bench.commands import run as run_cmd

    cfg = (tmp_path / "b.yaml")
    import os
    text = open(os.environ["BENCH_CONFIG"]).read()
    cfg.write_text(text.replace("  local-cpu:\n", "  local-cpu:\n    cpus: [0, 999]\n", 1))
    monkeypatch.setattr(run_cmd.pool, "run_backend", lambda *a, **k: pytest.fail("no benchmark may start"))
    code = cli.main(["--config", str(cfg), "run", "--device", "local-cpu", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "devices.local-cpu.cpus" in err and "[999]" in err and "Traceback" not in err


def test_bench_run_ab_runs_a_duet_on_cpu_halves_or_says_why_it_runs_turns(monkeypatch, capsys):
    from types import SimpleNamespace
    from bench import config
    from bench.commands import run as run_cmd

    device = config.Device("box", (), (), "cpu", True, {}, {}, threads=4, cpus=None)
    args = SimpleNamespace(ab=("/a/python", "/b/python"), reference=None, ab_mode="duet")
    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1, 2, 3})
    narrowed, pair = run_cmd._duet(args, device)
    assert pair == ((0, 1), (2, 3)) and narrowed.threads == 2
    assert "devices.box.threads 4 -> 2" in capsys.readouterr().err
    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0})
    assert run_cmd._duet(args, device) == (device, None)
    assert "runs in turns: a duet needs 2 CPUs to pin, this machine offers 1" in capsys.readouterr().err
    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: None)  # macOS: no sched_setaffinity
    assert run_cmd._duet(args, device) == (device, None)
    assert "this platform cannot pin CPUs" in capsys.readouterr().err
    assert run_cmd._duet(SimpleNamespace(ab=args.ab, reference=None, ab_mode="turns"), device) == (device, None)
    assert run_cmd._duet(SimpleNamespace(ab=None, reference=None, ab_mode="duet"), device) == (device, None)


def test_a_nightly_worker_runs_on_its_slice_with_worker_cpus_else_on_the_devices_cpus(monkeypatch):
    from bench import config
    from bench.commands import run as run_cmd

    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1})
    sliced = config.Device("box", (), (), "cpu", True, {}, {}, threads=1, worker_cpus=1)
    tasks = [schedule.Task("", w, KEYS) for w in range(3)]
    assert [run_cmd._worker_cpus(t, sliced) for t in tasks] == [(0,), (1,), (0,)]
    pinned = config.Device("box", (), (), "cpu", True, {}, {}, threads=1, cpus=(1,))
    assert run_cmd._worker_cpus(tasks[0], pinned) == (1,)
    assert run_cmd._worker_cpus(tasks[0], config.Device("box", (), (), "cpu", True, {}, {})) is None


def test_bench_run_ab_auto_runs_a_duet_on_a_cpu_device_and_turns_on_a_gpu(monkeypatch, capsys):
    from types import SimpleNamespace
    from bench import config
    from bench.commands import run as run_cmd

    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1})
    auto = SimpleNamespace(ab=("/a/python", "/b/python"), reference=None, ab_mode="auto")
    cpu = config.Device("box", (), (), "cpu", True, {}, {}, threads=1)
    gpu = config.Device("rtx", (), (), "gpu", False, {}, {})
    assert run_cmd._duet(auto, cpu) == (cpu, ((0,), (1,)))
    assert run_cmd._duet(auto, gpu) == (gpu, None)
    assert "runs in turns on gpu device rtx: a duet would share its one accelerator" in capsys.readouterr().err
    assert run_cmd._duet(SimpleNamespace(ab=auto.ab, reference=None, ab_mode="duet"), gpu)[1] == ((0,), (1,))
    # a reference build beside the nightly is paired the same way
    beside = SimpleNamespace(ab=None, reference="/r/python", ab_mode="auto")
    assert run_cmd._duet(beside, cpu) == (cpu, ((0,), (1,))) and run_cmd._duet(beside, gpu) == (gpu, None)
    assert "bench run: --reference runs in turns on gpu device rtx" in capsys.readouterr().err


# -- what was timed ------------------------------------------------------------

def reference():
    logits = np.array([[2.0, 0.0], [0.0, 3.0], [1.0, -1.0]])
    return gate.Reference((), logits, 1.0, "ref.npz")


def test_the_last_timed_predict_must_match_the_reference_row_by_row():
    ref = reference()
    good = ref.logits[np.arange(7) % 3]
    assert verify.timed_predict(good + 0.01, ref).passed
    wrong = good.copy()
    wrong[4] = [0.0, 0.0]  # held-out digit 1 (row 4 = 4 mod 3) computed wrongly
    v = verify.timed_predict(wrong, ref)
    assert not v.passed and "differ from the reference by up to 3" in v.message
    assert "non-finite" in verify.timed_predict(good * np.nan, ref).message
    assert "shape" in verify.timed_predict(np.zeros(3), ref).message


def test_after_timed_training_the_loss_is_finite_and_accuracy_still_passes():
    assert verify.timed_train(0.3, 0.95).passed
    assert "loss is nan" in verify.timed_train(float("nan"), 0.95).message
    assert "held-out accuracy 0.500" in verify.timed_train(0.3, 0.5).message


# -- what bench run prints -----------------------------------------------------

def test_the_summary_flags_an_unstable_result_pyperf_style():
    from bench.measure.summary import summary_table
    from tests.helpers import make_record, ok

    r = dict(ok("mlp", "predict", 1000.0), workers=[{"value": 1000.0, "samples": [1000.0], "status": "ok",
                                                     "disturbed": False}] * 3,
             disturbed_workers=1, failed_workers=0, unstable=True,
             unstable_why="the workers spread ±30.0% around their median (over ±10%)")
    text = summary_table([make_record([r], backend="jax")])
    assert "3 workers, 1 disturbed (rerun), may be unstable" in text
    assert text.splitlines()[-1] == (
        "WARNING: jax mlp predict: the result may be unstable: the workers spread ±30.0% around their median "
        "(over ±10%); rerun on a quieter machine (bench check) or with more --workers")


def test_threads_reach_each_backends_own_settings(monkeypatch):
    from bench.measure.backends import jax as jax_backend

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "XLA_FLAGS"):
        monkeypatch.delenv(var, raising=False)
    assert jax_backend.prepare({}) == {}
    applied = jax_backend.prepare({"BENCH_THREADS": "1"})
    assert applied["OMP_NUM_THREADS"] == "1" and "intra_op_parallelism_threads=1" in applied["XLA_FLAGS"]
    import os
    assert os.environ["XLA_FLAGS"] == applied["XLA_FLAGS"]  # set before jax is imported in the worker


def test_bench_check_prints_every_topic_with_its_status(capsys):
    from bench import cli

    assert cli.main(["check", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert {"governor", "load", "swap", "gpu_processes", "threads"} <= {i["topic"] for i in items}
    assert all(i["status"] in ("ok", "warn", "unknown") for i in items)


def test_a_hog_over_most_workers_still_flags_them_against_the_best_one():
    # measured shape (bench_stability.py --hog): 1 quiet worker at 1.75 CPU/s, 2 under the hog at ~1.0
    figures = [{"cpu_per_wall": 1.75, "stall": 0.30, "steal": 0.0},
               {"cpu_per_wall": 0.998, "stall": 0.51, "steal": 0.0},
               {"cpu_per_wall": 0.993, "stall": 0.51, "steal": 0.0}]
    why = disturbance.flag_workers(figures)
    assert why[0] is None and all(w and "vs the best worker's 1.75" in w for w in why[1:])


def test_quick_workers_run_together_and_a_disturbed_one_is_flagged_without_a_rerun():
    # bench run --quick on a device that gives each worker its own CPUs: the workers of
    # a group run at the same time (a barrier that breaks unless both wait at once)
    both_running = threading.Barrier(2, timeout=10)

    def script(task, s):
        both_running.wait()
        load = {"cpu_per_wall": 1.0, "stall": 0.5, "steal": 0.0} if task.worker == 1 else None
        return payload((s.model, s.mode), 60.0 if task.worker == 1 else 100.0, load=load)

    fake = FakeWorkers(script)
    r = pool.run_backend([spec("mlp", "predict")], 4, fake, together=2, rerun=False)[""].results[0]
    assert sorted(t.worker for t, _ in fake.calls) == [0, 1, 2, 3] and not any(t.rerun for t, _ in fake.calls)
    assert [w["disturbed"] for w in r["workers"]].count(True) == 1 and r["value"] == 100.0


def test_together_groups_the_plan_in_order():
    tasks = schedule.plan(KEYS[:1], 3)
    assert schedule.together(tasks, 2) == [(tasks[0], tasks[1]), (tasks[2],)]
    assert schedule.together(tasks, 1) == [(t,) for t in tasks]
    with pytest.raises(ValueError, match="size is 0"):
        schedule.together(tasks, 0)


def test_quick_runs_workers_together_only_where_each_has_cpus_of_its_own(monkeypatch):
    from types import SimpleNamespace

    from bench import config
    from bench.commands import run as run_cmd

    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1})
    sliced = config.Device("box", (), (), "cpu", True, {}, {}, threads=1, worker_cpus=1)
    quick = SimpleNamespace(quick=True, ab=None, reference=None)
    assert run_cmd._together(quick, sliced, 2) == 2
    assert run_cmd._together(quick, sliced, 5) == 2  # two CPUs hold two workers
    assert run_cmd._together(SimpleNamespace(quick=False, ab=None, reference=None), sliced, 5) == 1  # the nightly
    assert run_cmd._together(quick, config.Device("box", (), (), "cpu", True, {}, {}), 2) == 1  # unpinned


def test_the_eta_says_what_is_left_at_the_pace_so_far():
    from bench.measure.summary import Eta, eta_line

    now = [0.0]
    eta = Eta(10, clock=lambda: now[0])
    assert eta.left() == "time left: estimating"
    for _ in range(4):
        eta.started()
        eta.finished()
    now[0] = 40.0  # 10 s a benchmark, 6 to go
    assert eta.left() == "~1m00s left"
    eta.started(extra=True)  # a rerun the plan did not count
    assert eta_line("jax", 2, 4, "worker 1 (rerun)", "cnn", "train", eta) == \
        "jax 2/4, worker 1 (rerun), cnn/train: 4/11 done, ~1m10s left"
    now[0] = 4.0
    assert eta.left() == "~7s left"
