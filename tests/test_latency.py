"""bench/measure/latency.py: batch-1 latency percentiles, with a fake clock."""

import pytest

from bench.measure import latency


class StepClock:
    """Each call() advances the clock by the next duration; reading it costs nothing."""

    def __init__(self, durations_ms):
        self.now, self.durations = 0.0, list(durations_ms)

    def __call__(self):
        return self.now

    def call(self):
        self.now += self.durations.pop(0) / 1000.0


def test_percentiles_of_known_calls():
    # warm-up: 3 slow calls (compile) never counted; then 1..100 ms, and one 1000 ms outlier
    clock = StepClock([500, 400, 300] + list(range(1, 101)) + [1000])
    lat = latency.measure(clock.call, calls=101, warmup_calls=3, clock=clock)
    s = lat.summary()
    assert s == {"p50_ms": 51.0, "p90_ms": 91.0, "p99_ms": 100.0, "mean_ms": pytest.approx(59.90099, abs=1e-5),
                 "calls": 101, "path": "predict_on_batch"}
    assert lat.samples_ms[0] == pytest.approx(1.0) and max(lat.samples_ms) == pytest.approx(1000.0)


def test_every_timed_call_is_kept_for_the_record():
    clock = StepClock([2.0] * 205)
    lat = latency.measure(clock.call, calls=200, warmup_calls=5, clock=clock)
    assert len(lat.samples_ms) == 200 and lat.p50_ms == pytest.approx(2.0)


def test_bad_settings_and_values_are_refused_with_the_value():
    with pytest.raises(ValueError, match=r"calls=0, warmup_calls=1; expected calls >= 1"):
        latency.measure(lambda: None, calls=0, warmup_calls=1)
    with pytest.raises(ValueError, match=r"holds \[-1.0\]"):
        latency.Latency((1.0, -1.0))
    with pytest.raises(ValueError, match="empty"):
        latency.Latency(())


def test_workers_combine_to_the_median_worker_figures():
    blocks = [{"p50_ms": p, "p90_ms": p + 1, "p99_ms": p + 5, "mean_ms": p, "calls": 200, "path": "predict_on_batch"}
              for p in (0.30, 0.22, 0.16)]
    assert latency.combine(blocks) == {"p50_ms": 0.22, "p90_ms": 1.22, "p99_ms": 5.22, "mean_ms": 0.22,
                                       "calls": 600, "path": "predict_on_batch", "workers": 3}


class StateMachine:
    """A fake vCPU with speed states: calls and the canary both run `factor` x
    slower while the fake time is inside one of `slow` [(start, end, factor)]."""

    def __init__(self, call_ms=0.2, canary_ms=5.0, slow=()):
        self.now, self.call_ms, self.canary_ms, self.slow = 0.0, call_ms, canary_ms, list(slow)

    def clock(self):
        return self.now

    def _work(self, ms):
        f = max([f for s, e, f in self.slow if s <= self.now < e], default=1.0)
        self.now += ms * f / 1000.0
        return ms * f / 1000.0

    def call(self):
        self._work(self.call_ms)

    def canary(self):
        return self._work(self.canary_ms)


def rounds_on(machine, repeats=5, calls=200):
    return latency.measure_rounds(lambda n: latency.measure(machine.call, n, 0, machine.clock).samples_ms, calls,
                                  latency.protocol(repeats, warmup_calls=20), machine.clock, machine.canary)


def test_rounds_in_a_slow_state_are_left_out_and_redone():
    # 0.2 ms calls; from 0.15 s to 0.3 s of fake time the vCPU runs 1.5x slower
    # (what this VM's states do): the rounds there read 0.3 ms and are redone
    m = StateMachine(slow=[(0.15, 0.30, 1.5)])
    got = rounds_on(m)
    assert got.samples == [pytest.approx(0.2)] * 5  # five clean rounds, as asked
    # the two rounds inside the state, and the one after it whose opening canary ran in it
    assert got.disturbed_samples == [pytest.approx(0.3), pytest.approx(0.3), pytest.approx(0.2)]
    assert got.latency.p50_ms == pytest.approx(0.2) and len(got.latency.samples_ms) == 5 * 200
    assert got.latency.summary(rounds=5)["rounds"] == 5


def test_without_rounds_the_same_state_moves_the_p50():
    # the single 200-call window of workers v2, started inside the slow state
    m = StateMachine(slow=[(0.0, 1.0, 1.5)])
    assert latency.measure(m.call, 200, 20, m.clock).p50_ms == pytest.approx(0.3)


def test_a_worker_slow_throughout_keeps_every_round_and_says_so():
    m = StateMachine(slow=[(0.0, 100.0, 1.5)])
    got = rounds_on(m, repeats=3)
    # the fastest canary is a slow one too: every round reads clean at 0.3 ms
    assert got.samples == [pytest.approx(0.3)] * 3 and got.disturbed_samples == []


def test_the_latency_protocol_waits_out_slow_states_within_its_budget():
    p = latency.protocol(7, warmup_calls=20)
    assert (p.repeats, p.warmup_steps, p.canary_tolerance, p.max_extra_repeats) == (7, 20, 1.25, 21)
    # slow for longer than 7 + 21 rounds: the budget is spent, and the figure is the
    # clean rounds before the slow state, fewer than the 7 asked for (workers v13)
    m = StateMachine(slow=[(0.3, 100.0, 1.5)])
    got = rounds_on(m, repeats=7)
    assert len(got.timing.repeats) == 28 and got.timing.summary()["canary"]["kept"] == "clean"
    assert 1 <= len(got.samples) < 7 and got.samples == [pytest.approx(0.2)] * len(got.samples)


@pytest.mark.parametrize("slow_from", [0.3, 0.6, 1.2, 100.0])
def test_one_rule_whatever_the_number_of_clean_rounds(slow_from):
    # workers v13: the p50 is the fast state's however many clean rounds a worker
    # got before a long slow state (under v12, fewer than 7 kept every round: 0.2
    # with 7 clean, up to 0.3 with fewer, a switch from night to night)
    m = StateMachine(slow=[(slow_from, 1000.0, 1.5)])
    got = rounds_on(m, repeats=7)
    assert got.latency.p50_ms == pytest.approx(0.2)
    assert got.timing.summary()["canary"]["kept"] == "clean"


def test_a_worker_with_no_clean_round_falls_back_to_every_round():
    m = StateMachine(slow=[(0.0, 1000.0, 1.5)])
    got = latency.measure_rounds(lambda n: latency.measure(m.call, n, 0, m.clock).samples_ms, 200,
                                 latency.protocol(3, warmup_calls=20), m.clock, m.canary, canary_floor=0.005)
    assert got.timing.summary()["canary"]["kept"] == "all" and got.latency.p50_ms == pytest.approx(0.3)


def test_each_round_records_its_timed_window_on_the_wall_clock():
    m = StateMachine(slow=[(0.15, 0.30, 1.5)])
    got = latency.measure_rounds(lambda n: latency.measure(m.call, n, 0, m.clock).samples_ms, 200,
                                 latency.protocol(5, warmup_calls=20), m.clock, m.canary, wall=m.clock)
    windows = got.timing.summary()["repeat_windows"]
    assert len(windows) == len(got.samples) == 5  # one per kept round
    # each window spans its round's 200 calls of 0.2 ms (fake wall = fake clock)
    assert [round(b - a, 4) for a, b in windows] == [0.04] * 5
    assert all(a2 >= b1 for (_, b1), (a2, _) in zip(windows, windows[1:]))


def test_a_worker_slow_throughout_is_caught_by_the_runs_fastest_canary():
    # the same worker as above, given the fastest canary an earlier worker of the run saw:
    # every round is now slow, all are kept and the record says so (the pool flags the worker)
    m = StateMachine(slow=[(0.0, 100.0, 1.5)])
    got = latency.measure_rounds(lambda n: latency.measure(m.call, n, 0, m.clock).samples_ms, 200,
                                 latency.protocol(3, warmup_calls=20), m.clock, m.canary, canary_floor=0.005)
    canary = got.timing.summary()["canary"]
    assert (canary["kept"], canary["floor_seconds"], canary["baseline_seconds"]) == ("all", 0.005, pytest.approx(0.0075))
    assert len(got.timing.repeats) == 3 + 9 and got.samples == [pytest.approx(0.3)] * 12
