"""Workers v13 without real backends: stored work per series and its band, the
duet's barrier before every timed repeat, the energy meter outside the timed
call, the reset before the clock, and where the stored work is read from.
Fake clocks, fake workers and fake records throughout."""

import json
import threading
import time

import pytest

from bench import cli
from bench.measure import barrier, pool, schedule, steps
from bench.measure.harness import STEPS_BAND, benchmark, outside_band
from tests.test_harness import BATCH, FakeMachine, protocol
from tests.test_protocol2 import FakeWorkers, payload, spec


# -- stored work and its band ----------------------------------------------------

def test_stored_work_inside_the_band_is_kept_without_calibrating():
    m = FakeMachine(step_seconds=0.01)
    # 60 steps of 0.01 s: a 0.6 s call, inside 0.5-2x of min_repeat_seconds 0.5
    t = benchmark(m.run, BATCH, protocol(repeats=3), clock=m.clock, canary=m.canary, stored=60)
    assert (t.steps, t.steps_source, t.steps_why) == (60, "stored", None)
    assert t.calibration == ((60, pytest.approx(0.6)),)  # the one check call, no growth
    assert [s for s, _, _ in m.calls] == [2, 60, 60, 60, 60]  # warm-up, check, three repeats


@pytest.mark.parametrize("stored, why", [(10, "took 0.1 s, outside 0.5-2x min_repeat_seconds (0.25-1 s)"),
                                         (300, "took 3 s, outside 0.5-2x min_repeat_seconds (0.25-1 s)")])
def test_stored_work_outside_the_band_is_recalibrated_and_says_why(stored, why):
    m = FakeMachine(step_seconds=0.01)
    t = benchmark(m.run, BATCH, protocol(repeats=3), clock=m.clock, canary=m.canary, stored=stored)
    assert t.steps_source == "recalibrated" and why in t.steps_why
    assert t.calibration[0][0] == stored and t.steps != stored
    assert 0.5 <= t.repeats[0].seconds <= 0.5 * 8  # calibrated afresh: at least min_repeat_seconds
    summary = t.summary()
    assert (summary["steps_source"], summary["steps_why"]) == ("recalibrated", t.steps_why)


def test_without_stored_work_it_is_calibrated_and_given_work_is_fixed():
    m = FakeMachine(step_seconds=0.01)
    assert benchmark(m.run, BATCH, protocol(repeats=3), clock=m.clock, canary=m.canary).steps_source == "calibrated"
    t = benchmark(m.run, BATCH, protocol(repeats=3), clock=m.clock, canary=m.canary, steps=70, stored=10)
    assert (t.steps, t.steps_source, t.calibration) == (70, "fixed", ())  # the parent's work wins


def test_the_band_includes_its_ends_and_scales_with_min_repeat_seconds():
    p = protocol(min_repeat_seconds=0.5)
    assert STEPS_BAND == (0.5, 2.0)
    assert outside_band(0.25, p) is None and outside_band(1.0, p) is None
    assert outside_band(0.2499, p) and outside_band(1.0001, p)
    assert outside_band(0.2, protocol(min_repeat_seconds=0.25)) is None


def test_a_check_call_slowed_by_a_burst_is_retried_before_it_decides():
    # the check call runs inside a 10x burst: read alone it would recalibrate
    m = FakeMachine(step_seconds=0.01, slow=[(0.0, 0.9, 10.0)])
    t = benchmark(m.run, BATCH, protocol(repeats=3), clock=m.clock, canary=m.canary, stored=60)
    assert t.steps_source == "stored" and t.steps == 60 and len(t.calibration) >= 2


# -- what happens around each timed call ----------------------------------------

class Recorder:
    """A fake meter and barrier that log when they ran on the fake clock."""

    def __init__(self, machine):
        self.m, self.log = machine, []

    def begin(self):
        self.log.append(("begin", self.m.now))

    def end(self, steps):
        self.log.append(("end", self.m.now))

    def sync(self):
        self.m.work(0.05)  # waiting for the other side takes time, never timed
        self.log.append(("sync", self.m.now))

    def reset(self):
        self.m.work(0.03)
        self.log.append(("reset", self.m.now))


def test_reset_sync_and_meter_run_outside_every_timed_call_in_order():
    m = FakeMachine(step_seconds=0.01)
    r = Recorder(m)
    t = benchmark(m.run, BATCH, protocol(repeats=3, spread_goal=None), clock=m.clock, canary=m.canary, steps=60,
                  reset=r.reset, sync=r.sync, meter=r)
    timed = m.calls[-3:]
    assert [x.seconds for x in t.repeats] == pytest.approx([0.6] * 3)  # no reset, wait or meter read inside
    events = [name for name, _ in r.log]
    assert events == ["reset", "sync", "begin", "end"] * 3
    for i, (_, start, end) in enumerate(timed):
        (_, reset_at), (_, sync_at), (_, begin_at), (_, end_at) = r.log[4 * i:4 * i + 4]
        assert reset_at <= sync_at <= begin_at <= start and end <= end_at


def test_each_timed_repeat_records_its_window_on_the_wall_clock():
    m = FakeMachine(step_seconds=0.01)
    t = benchmark(m.run, BATCH, protocol(repeats=3, spread_goal=None), clock=m.clock, canary=m.canary, steps=60,
                  wall=m.clock)
    assert [(a, b) for a, b in t.windows] == [(s, e) for _, s, e in m.calls[-3:]]
    assert t.summary()["repeat_windows"] == [[round(s, 4), round(e, 4)] for _, s, e in m.calls[-3:]]


# -- the duet's barrier ----------------------------------------------------------

def test_two_sides_leave_each_barrier_together(tmp_path):
    passed = {"a": [], "b": []}

    def side(name, delay):
        b = barrier.Barrier(str(tmp_path), name, "mlp.train")
        for _ in range(3):
            time.sleep(delay)  # one side is slower to reach each repeat (a longer compile, a slower call)
            b.wait()
            passed[name].append(time.monotonic())
        b.end()
        passed[name + "_summary"] = b.summary()

    threads = [threading.Thread(target=side, args=("a", 0.0)), threading.Thread(target=side, args=("b", 0.05))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert all(abs(x - y) < 0.03 for x, y in zip(passed["a"], passed["b"]))  # b arrives 50 ms later each time
    assert passed["a_summary"]["waits"] == 3 and passed["a_summary"]["alone"] == 0
    assert passed["a_summary"]["waited_seconds"] >= 0.1 > passed["b_summary"]["waited_seconds"]


def test_a_side_stops_waiting_when_the_other_ended_its_repeats_or_left(tmp_path):
    a = barrier.Barrier(str(tmp_path), "a", "mlp.train", timeout=5)
    other = barrier.Barrier(str(tmp_path), "b", "mlp.train")
    other.end()  # b needed fewer repeats (or failed before timing)
    a.wait()
    assert a.summary()["alone"] == 1
    later = barrier.Barrier(str(tmp_path), "a", "mlp.predict", timeout=5)
    barrier.gone(str(tmp_path), "b")  # b's process ended
    later.wait()
    assert later.summary()["alone"] == 1 and later.waited < 1


def test_a_partner_that_never_comes_times_out_once_and_the_barrier_turns_off(tmp_path):
    now = [0.0]
    b = barrier.Barrier(str(tmp_path), "a", "mlp.train", timeout=2.0, clock=lambda: now[0],
                        sleep=lambda s: now.__setitem__(0, now[0] + 0.5))
    b.wait()
    b.wait()  # off: no second wait
    assert (b.off, b.summary()["alone"], b.summary()["waited_seconds"]) == (True, 2, 2.5)


def test_a_side_done_with_its_repeats_waits_for_the_other_to_end_its_own(tmp_path):
    """What a side does after its repeats (verify, set-up calls, native pairs, the
    profiled call) must not run beside the other side's remaining repeats."""
    events = []

    def side(name, repeats):
        b = barrier.Barrier(str(tmp_path), name, "mlp.train", timeout=5)
        for i in range(repeats):
            b.wait()
            time.sleep(0.02)  # a timed repeat
            events.append((name, "repeat", i, time.monotonic()))
        b.end()
        b.await_end()
        events.append((name, "after", None, time.monotonic()))

    threads = [threading.Thread(target=side, args=("a", 2)), threading.Thread(target=side, args=("b", 4))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    a_after = next(t for n, what, _, t in events if n == "a" and what == "after")
    b_last = max(t for n, what, _, t in events if n == "b" and what == "repeat")
    assert a_after >= b_last  # a needed 2 repeats, b 4: a's next step waited for b's last


def test_waiting_for_the_others_end_stops_when_it_left_and_times_out_once(tmp_path):
    left = barrier.Barrier(str(tmp_path), "a", "mlp.train", timeout=5)
    barrier.gone(str(tmp_path), "b")
    left.await_end()
    assert left.waited < 1 and not left.off
    now = [0.0]
    alone = barrier.Barrier(str(tmp_path / "x"), "a", "mlp.train", timeout=2.0, clock=lambda: now[0],
                            sleep=lambda s: now.__setitem__(0, now[0] + 0.5))
    (tmp_path / "x").mkdir()
    alone.await_end()
    assert alone.off and alone.summary()["waited_seconds"] == 2.5
    alone.await_end()  # off: no second wait
    assert alone.summary()["waited_seconds"] == 2.5


def test_barrier_sides_are_a_and_b():
    with pytest.raises(ValueError, match="side is 'c'"):
        barrier.Barrier("/tmp", "c", "mlp.train")


def test_a_duet_gives_both_workers_one_barrier_folder_and_marks_each_gone():
    seen = []

    def script(task, s):
        seen.append((task.calibration, task.side, s.sync_dir, s.sync_side))
        return payload((s.model, s.mode), 100.0, steps=s.steps or 7)

    pool.run_backend([spec("mlp", "predict")], 2, FakeWorkers(script), sides=("a", "b"), duet=True)
    calib = [x for x in seen if x[0]]
    assert calib == [(True, "a", None, "")]  # the calibration worker runs alone: no barrier
    pairs = [x for x in seen if not x[0]]
    folders = {x[2] for x in pairs}
    assert len(folders) == 2 and None not in folders  # one folder per duet, both sides in it
    assert sorted((x[1], x[3]) for x in pairs) == [("a", "a"), ("a", "a"), ("b", "b"), ("b", "b")]


def test_workers_side_by_side_in_a_quick_run_get_no_barrier():
    seen = []
    fake = FakeWorkers(lambda t, s: seen.append(s.sync_dir) or payload((s.model, s.mode), 100.0, steps=7))
    pool.run_backend([spec("mlp", "predict")], 2, fake, together=2)
    assert seen == [None, None]


def test_a_duet_with_a_side_that_has_no_barrier_gets_none_on_either_side(tmp_path):
    """pr-ab's base checkout may predate the barrier: its partner must not wait for it."""
    from bench.commands.run import _aligned

    seen = []
    fake = FakeWorkers(lambda t, s: seen.append((t.calibration, s.sync_dir)) or payload((s.model, s.mode), 100.0,
                                                                                        steps=7))
    pool.run_backend([spec("mlp", "predict")], 2, fake, sides=("a", "b"), duet=True, aligned=False)
    assert [d for calibration, d in seen if not calibration] == [None] * 4
    new, old = tmp_path / "new", tmp_path / "old"
    (new / "bench" / "measure").mkdir(parents=True)
    (new / "bench" / "measure" / "barrier.py").write_text("")
    (old / "bench" / "measure").mkdir(parents=True)
    assert _aligned({"a": str(new), "b": str(new)}) and _aligned({})
    assert not _aligned({"a": str(old), "b": str(new)})


def test_beside_a_reference_only_this_builds_side_times_the_native_pairs():
    seen = []
    fake = FakeWorkers(lambda t, s: seen.append((t.side, s.native)) or payload((s.model, s.mode), 100.0, steps=7))
    native_spec = spec("mlp", "train")
    native_spec = type(native_spec)(**{**native_spec.__dict__, "native": 5})
    pool.run_backend([native_spec], 2, fake, sides=("a", "b"), duet=True, native_side="b")
    assert {side: n for side, n in seen if side == "b"} == {"b": 5}
    assert all(n == 0 for side, n in seen if side == "a")


# -- stored work through the pool --------------------------------------------------

def test_the_first_worker_checks_the_stored_work_and_both_sides_do_what_it_settled_on():
    def script(task, s):
        if s.steps is None:  # the first worker: the stored work was outside the band
            assert s.stored_steps == 50
            got = payload((s.model, s.mode), 100.0, steps=80)
            got["result"].update(steps_source="recalibrated", steps_why="a call of the stored work took 0.1 s")
            return got
        assert s.stored_steps is None
        got = payload((s.model, s.mode), 100.0, steps=s.steps)
        got["result"]["steps_source"] = "fixed"
        return got

    fake = FakeWorkers(script)
    out = pool.run_backend([spec("mlp", "train")], 2, fake, sides=("a", "b"), duet=True,
                           stored={("mlp", "train"): 50})
    assert [c[1][0][2] for c in fake.calls] == [None, 80, 80, 80, 80]
    for side in ("a", "b"):
        r = out[side].results[0]
        assert (r["steps_per_call"], r["steps_source"], r["steps_why"]) == (
            80, "recalibrated", "a call of the stored work took 0.1 s")


# -- where the stored work comes from ----------------------------------------------

PROTO = {"name": "workers", "version": 13, "memory": "least, settled"}


def record(started, steps_by_key, protocol=PROTO, backend="jax", device="local-cpu", min_repeat=0.5, attempt=1):
    return {"run": {"started_at": started, "attempt": attempt, "protocol": protocol},
            "target": {"backend": backend, "device": device},
            "results": [{"model": m, "mode": mode, "status": "ok", "batch_size": 256, "steps_per_call": n,
                         "min_repeat_seconds": min_repeat} for (m, mode), n in steps_by_key.items()]}


WANTED = {("mlp", "train"): (256, 0.5), ("mlp", "predict"): (256, 0.5)}


def test_the_newest_matching_record_of_each_series_gives_its_stored_work():
    recs = [record("2026-12-05T03:00:00Z", {("mlp", "train"): 40, ("mlp", "predict"): 90}),
            record("2026-12-06T03:00:00Z", {("mlp", "train"): 44}),
            record("2026-12-06T03:00:00Z", {("mlp", "train"): 46}, attempt=2),  # a rerun supersedes
            record("2026-12-07T03:00:00Z", {("mlp", "train"): 99}, protocol={**PROTO, "version": 12}),
            record("2026-12-07T03:00:00Z", {("mlp", "train"): 98}, backend="torch"),
            record("2026-12-07T03:00:00Z", {("mlp", "train"): 97}, device="rtx-5070-ti"),
            record("2026-12-07T03:00:00Z", {("mlp", "train"): 96}, min_repeat=0.25),  # a --quick run
            {"not": "a record"}]
    got = steps.stored(recs, backend="jax", device="local-cpu", protocol=PROTO, wanted=WANTED)
    assert got == {("mlp", "train"): 46, ("mlp", "predict"): 90}


def test_a_record_whose_protocol_also_names_native_pairs_still_gives_its_stored_work():
    """local-cpu's records name the native pairs in run.protocol; they run after the
    timed work and do not change it."""
    with_native = {**PROTO, "native": {"version": 1, "pairs": 5}}
    recs = [record("2026-12-06T03:00:00Z", {("mlp", "train"): 44}, protocol=with_native)]
    assert steps.stored(recs, backend="jax", device="local-cpu", protocol=PROTO, wanted=WANTED) == {
        ("mlp", "train"): 44}
    other = [record("2026-12-06T03:00:00Z", {("mlp", "train"): 44}, protocol={**with_native, "version": 12})]
    assert steps.stored(other, backend="jax", device="local-cpu", protocol=PROTO, wanted=WANTED) == {}


def test_no_record_of_the_series_means_nothing_stored():
    assert steps.stored([], backend="jax", device="local-cpu", protocol=PROTO, wanted=WANTED) == {}


def test_stored_work_is_read_from_data_branch_folders_and_from_the_out_folder_itself(tmp_path):
    data = tmp_path / "data" / "runs" / "2026" / "12" / "06"
    data.mkdir(parents=True)
    (data / "jax--local-cpu--111-1.json").write_text(json.dumps(record("2026-12-06T03:00:00Z",
                                                                       {("mlp", "train"): 40})))
    (data / "torch--local-cpu--111-1.json").write_text("{broken")  # another series: never read
    out = tmp_path / "out"
    (out / "deeper").mkdir(parents=True)
    (out / "jax--local-cpu--local-1-1.json").write_text(json.dumps(record("2026-12-07T03:00:00Z",
                                                                          {("mlp", "predict"): 70})))
    (out / "deeper" / "jax--local-cpu--local-2-1.json").write_text(json.dumps(record(
        "2026-12-08T03:00:00Z", {("mlp", "predict"): 1})))  # --out is not walked
    (out / "jax--local-cpu--bad-1.json").write_text("not json")
    got = steps.load([str(tmp_path / "data")], backend="jax", device="local-cpu", protocol=PROTO,
                     wanted=WANTED, flat=[str(out)])
    assert got == {("mlp", "train"): 40, ("mlp", "predict"): 70}


def test_bench_run_names_a_steps_from_that_is_not_a_folder(tmp_path, capsys):
    assert cli.main(["run", "--backend", "jax", "--steps-from", str(tmp_path / "nowhere"),
                     "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--steps-from" in err and "nowhere" in err and "expected a folder of run records" in err


def test_the_protocol_is_workers_v13():
    assert (schedule.NAME, schedule.VERSION) == ("workers", 13)
    assert PROTO == schedule.PROTOCOL
