"""The timing protocol (bench/measure/harness.py), driven by a fake clock."""

import statistics
from pathlib import Path

import pytest

from bench import config
from bench.measure.harness import Protocol, Repeat, Timing, benchmark, setup_seconds, spread

BATCH = 100
CANARY = 0.001  # seconds the canary takes on a CPU at full speed


class FakeMachine:
    """A fake clock plus a workload and a canary that advance it.

    `step_seconds` per step at full speed; `slow` is a list of (start, end,
    factor) windows of fake time during which everything runs `factor` x slower.
    `jitter` multiplies the n-th run call's duration (cycled).
    """

    def __init__(self, step_seconds=0.01, slow=(), jitter=(1.0,), call_overhead=0.0):
        self.now = 0.0
        self.call_overhead = call_overhead  # fixed seconds per run call (Keras's per-fit set-up)
        self.step_seconds = step_seconds
        self.slow = list(slow)
        self.jitter = list(jitter)
        self.calls = []  # (steps, start, end) of every run call

    def clock(self):
        return self.now

    def factor(self):
        return max([f for s, e, f in self.slow if s <= self.now < e], default=1.0)

    def work(self, seconds):
        """Advance the clock by `seconds` of full-speed work, slower inside slow windows."""
        start = self.now
        while seconds > 1e-12:
            edges = [t for s, e, _ in self.slow for t in (s, e) if t > self.now]
            horizon = min(edges, default=float("inf")) - self.now
            f = self.factor()
            done = min(seconds, horizon / f)
            self.now += done * f
            seconds -= done
        return self.now - start

    def run(self, steps):
        start = self.now
        self.work(self.call_overhead + steps * self.step_seconds * self.jitter[len(self.calls) % len(self.jitter)])
        self.calls.append((steps, start, self.now))

    def canary(self):
        return self.work(CANARY)


def protocol(**kw):
    base = dict(repeats=5, min_repeat_seconds=0.5, warmup_steps=2)
    base.update(kw)
    return Protocol(**base)


def test_calibration_makes_every_repeat_last_at_least_the_minimum():
    m = FakeMachine(step_seconds=0.013)
    t = benchmark(m.run, BATCH, protocol(), clock=m.clock, canary=m.canary)
    assert t.steps * 0.013 >= 0.5
    assert all(r.seconds >= 0.5 for r in t.repeats)
    # calibration trials grow from one step; the last trial is the chosen count
    assert t.calibration[0][0] == 1 and t.calibration[-1][0] == t.steps
    assert t.value == pytest.approx(BATCH / 0.013)  # samples/s


def test_headline_is_the_median_and_every_repeat_is_a_sample():
    # Calls: warm-up, 2 calibration trials, then 5 repeats with these factors.
    factors = [1.0, 1.0, 1.0, 1.0, 1.3, 0.9, 1.1, 1.05]
    m = FakeMachine(step_seconds=0.01, jitter=factors)
    t = benchmark(m.run, BATCH, protocol(spread_goal=0.5), clock=m.clock, canary=m.canary)
    assert len(t.calibration) == 2 and t.steps == 55  # 1 step = 0.01 s -> aim at 0.55 s
    timed = factors[3:]
    expected = [t.steps * BATCH / (t.steps * 0.01 * f) for f in timed]
    assert list(t.samples) == pytest.approx(expected)
    assert t.value == pytest.approx(statistics.median(expected))
    assert t.summary()["repeat_seconds"] == pytest.approx([round(t.steps * 0.01 * f, 6) for f in timed])


def test_warmup_and_canaries_stay_outside_the_timed_region():
    m = FakeMachine(step_seconds=0.01)
    t = benchmark(m.run, BATCH, protocol(warmup_steps=3), clock=m.clock, canary=m.canary)
    assert m.calls[0][0] == 3  # the warm-up call comes first
    assert t.warmup_seconds == pytest.approx(0.03)
    # each repeat's time is exactly its run call: the canary's 1 ms is not in it
    timed = m.calls[-5:]
    assert [r.seconds for r in t.repeats] == pytest.approx([end - start for _, start, end in timed])


def test_a_ten_times_slower_burst_is_redone_and_does_not_move_the_headline():
    clean = FakeMachine(step_seconds=0.01)
    reference = benchmark(clean.run, BATCH, protocol(), clock=clean.clock, canary=clean.canary)
    # The same machine, with a 1.5 s burst at 10x from near the end of the
    # second repeat: it slows repeats 2 and 3 and the canaries between them.
    m = FakeMachine(step_seconds=0.01)
    t0 = clean.calls[-4][1] + 0.5
    m.slow = [(t0, t0 + 1.5, 10.0)]
    t = benchmark(m.run, BATCH, protocol(), clock=m.clock, canary=m.canary)
    assert len(t.samples) == 5
    assert t.value == pytest.approx(reference.value)
    assert t.summary()["canary"]["disturbed_samples"], "the burst's repeats are recorded as disturbed"
    assert min(t.summary()["canary"]["disturbed_samples"]) < reference.value / 2  # the slowed one
    assert t.summary()["canary"]["kept"] == "clean"


def test_repeats_that_disagree_get_more_repeats_up_to_the_budget():
    # Calls: warm-up, 2 calibration trials, then repeats 1.0, 2.0, 1.0, 1.05,
    # 1.0, 0.98: the 2.0 stays far (> 10 %) from the median, so repeats go on
    # to the budget of 3 + 3, and the median ignores the slow one.
    m = FakeMachine(step_seconds=0.01, jitter=[1, 1, 1, 1.0, 2.0, 1.0, 1.05, 1.0, 0.98, 7.0])
    t = benchmark(m.run, BATCH, protocol(repeats=3, max_extra_repeats=3), clock=m.clock, canary=m.canary)
    assert len(t.repeats) == 6
    assert t.value == pytest.approx(t.steps * BATCH / (t.steps * 0.01 * 1.0))
    # agreeing repeats stop at the wanted number
    calm = FakeMachine(step_seconds=0.01, jitter=[1, 1, 1, 1.0, 1.05, 0.97, 1.0])
    assert len(benchmark(calm.run, BATCH, protocol(repeats=3), clock=calm.clock, canary=calm.canary).repeats) == 3


def test_without_a_spread_goal_disagreeing_repeats_get_no_extra_repeats():
    # The same disagreeing repeats as above: with spread_goal None (the shipped
    # throughput setting) the wanted 3 clean repeats end the timing.
    m = FakeMachine(step_seconds=0.01, jitter=[1, 1, 1, 1.0, 2.0, 1.0, 1.05, 1.0, 0.98, 7.0])
    t = benchmark(m.run, BATCH, protocol(repeats=3, max_extra_repeats=3, spread_goal=None),
                  clock=m.clock, canary=m.canary)
    assert len(t.repeats) == 3
    assert t.value == pytest.approx(t.steps * BATCH / (t.steps * 0.01 * 1.0))


def test_a_burst_between_the_canaries_is_outvoted_by_the_median():
    # Slow only inside repeat 3's run call (the canaries either side are fast).
    m = FakeMachine(step_seconds=0.01, jitter=[1, 1, 1, 1, 1, 8.0, 1, 1])
    t = benchmark(m.run, BATCH, protocol(), clock=m.clock, canary=m.canary)
    assert min(t.samples) < t.value / 5  # the slow repeat is there ...
    assert t.value == pytest.approx(BATCH / 0.01)  # ... and the median ignores it


def test_a_cpu_slow_for_longer_than_the_redo_budget_counts_every_repeat():
    m = FakeMachine(step_seconds=0.01, slow=[(1.0, 1e9, 10.0)])  # slow from t=1 s on, for good
    t = benchmark(m.run, BATCH, protocol(repeats=3, max_extra_repeats=2), clock=m.clock, canary=m.canary)
    assert len(t.repeats) == 5  # 3 wanted + 2 redos, then it gives up
    assert t.summary()["canary"]["kept"] == "all"
    assert len(t.samples) == 5 and t.summary()["canary"]["disturbed_samples"] == []


def test_calibration_retries_a_trial_slowed_by_a_burst():
    m = FakeMachine(step_seconds=0.01, slow=[(0.0, 0.4, 10.0)])  # slow while calibration starts
    t = benchmark(m.run, BATCH, protocol(warmup_steps=0), clock=m.clock, canary=m.canary)
    assert t.steps * 0.01 >= 0.5  # not fooled into too few steps by the slow start


def test_timing_reports_samples_per_second():
    t = Timing(steps=10, samples_per_step=32, repeats=(Repeat(0.5, CANARY, CANARY), Repeat(0.4, CANARY, CANARY),
                                                      Repeat(0.8, CANARY, CANARY)),
               canary_baseline=CANARY, canary_tolerance=3.0, wanted=3)
    assert t.samples == pytest.approx((640.0, 800.0, 400.0))
    assert t.value == pytest.approx(640.0)


@pytest.mark.parametrize("kw, message", [
    ({"repeats": 0}, "Protocol.repeats is 0"),
    ({"min_repeat_seconds": -1}, "Protocol.min_repeat_seconds is -1"),
    ({"canary_tolerance": 1.0}, "Protocol.canary_tolerance is 1.0"),
    ({"spread_goal": 0}, "Protocol.spread_goal is 0"),
])
def test_protocol_rejects_bad_values_showing_them(kw, message):
    with pytest.raises(ValueError, match=message):
        protocol(**kw)


def test_protocol_from_config_quick_and_full():
    h = config.load().harness
    quick, full = Protocol.from_config(h, quick=True), Protocol.from_config(h, quick=False)
    assert (quick.repeats, quick.min_repeat_seconds) == (h.quick_repeats, h.quick_min_repeat_seconds)
    assert (full.repeats, full.min_repeat_seconds) == (h.repeats, h.min_repeat_seconds)
    assert full.spread_goal is h.spread_goal is None  # the tests' config sets none: no extra repeats
    goal = Protocol.from_config(config.Harness(**{**h.__dict__, "spread_goal": 0.1}), quick=False)
    assert goal.spread_goal == 0.1
    # The shipped protocol (the tests' own config keeps quick runs short).
    shipped = config.load(Path(__file__).resolve().parents[1] / "benchmarks.yaml").harness
    assert shipped.quick_repeats >= 3 and shipped.repeats >= 5


def test_spread_is_the_largest_distance_from_the_median():
    assert spread([100, 104, 97]) == pytest.approx(0.04)


@pytest.mark.parametrize("tolerance, protected", [(3.0, True), (1e9, False)])
def test_quick_runs_need_the_canary_against_a_burst_longer_than_a_repeat(tolerance, protected):
    # --quick: 3 short repeats. A 2 s burst at 10x spans the canary after
    # repeat 1 and everything up to repeat 3's: without the canary
    # (tolerance 1e9) two of three repeats are slow and the median is wrong.
    quick = dict(repeats=3, min_repeat_seconds=0.25, warmup_steps=0)
    clean = FakeMachine(step_seconds=0.01)
    reference = benchmark(clean.run, BATCH, protocol(**quick), clock=clean.clock, canary=clean.canary)
    m = FakeMachine(step_seconds=0.01)
    first_repeat_start = clean.calls[-3][1]
    m.slow = [(first_repeat_start + 0.2, first_repeat_start + 2.2, 10.0)]
    isolated = protocol(canary_tolerance=tolerance, spread_goal=10.0, **quick)  # the canary alone
    t = benchmark(m.run, BATCH, isolated, clock=m.clock, canary=m.canary)
    assert (t.value == pytest.approx(reference.value)) is protected


def test_calibration_amortises_a_fixed_per_call_cost():
    # torch on a small CPU: a fit call costs 0.35 s before its first step; one
    # step alone already exceeds min_repeat_seconds, but timing one step would
    # report the call overhead, not the throughput (320 instead of ~5k samples/s).
    m = FakeMachine(step_seconds=0.03, call_overhead=0.35)
    t = benchmark(m.run, BATCH, protocol(min_repeat_seconds=0.25), clock=m.clock, canary=m.canary)
    steady = BATCH / m.step_seconds
    assert t.steps >= 16
    assert t.value == pytest.approx(steady, rel=0.5)
    assert t.value > 0.6 * steady  # the overhead is at most ~40 % of a repeat, not ~90 %


class TrainingMachine(FakeMachine):
    """A model that runs `slowdown` x slower once it has trained `onset` steps
    (torch's weights and Adam's moments going denormal), and `reset()`, which
    puts it back to the state it started from and costs `reset_seconds`."""

    def __init__(self, onset, slowdown, reset_seconds=0.05, **kw):
        super().__init__(**kw)
        self.onset, self.slowdown, self.reset_seconds = onset, slowdown, reset_seconds
        self.trained = 0
        self.resets = []  # fake times of the resets

    def run(self, steps):
        start = self.now
        self.work(self.call_overhead)
        for _ in range(steps):
            self.work(self.step_seconds * (self.slowdown if self.trained >= self.onset else 1.0))
            self.trained += 1
        self.calls.append((steps, start, self.now))

    def reset(self):
        self.work(self.reset_seconds)
        self.trained = 0
        self.resets.append(self.now)


def test_trained_on_call_after_call_the_later_repeats_time_another_model():
    m = TrainingMachine(onset=200, slowdown=1.25, step_seconds=0.01)
    t = benchmark(m.run, BATCH, protocol(repeats=7, spread_goal=None), clock=m.clock, canary=m.canary)
    assert t.samples[0] == pytest.approx(BATCH / 0.01)
    assert t.samples[-1] == pytest.approx(BATCH / 0.0125)  # past the onset: the slow model


def test_a_reset_before_every_timed_call_times_the_same_work_and_stays_untimed():
    m = TrainingMachine(onset=200, slowdown=1.25, step_seconds=0.01)
    t = benchmark(m.run, BATCH, protocol(repeats=7, spread_goal=None), clock=m.clock, canary=m.canary,
                  reset=m.reset)
    assert list(t.samples) == pytest.approx([BATCH / 0.01] * 7)
    # one reset before each calibration trial and each repeat, none before the warm-up
    assert len(m.resets) == len(t.calibration) + len(t.repeats)
    timed = m.calls[-7:]
    assert all(r < start for r, (_, start, _) in zip(m.resets[-7:], timed))  # each just before its call
    assert [r.seconds for r in t.repeats] == pytest.approx([end - start for _, start, end in timed])


def test_setup_seconds_resets_before_each_one_step_call():
    m = TrainingMachine(onset=10**6, slowdown=1.0, step_seconds=0.01, call_overhead=0.2)
    t = benchmark(m.run, BATCH, protocol(), clock=m.clock, canary=m.canary, reset=m.reset)
    before = len(m.resets)
    assert setup_seconds(m.run, t, m.clock, calls=3, reset=m.reset) == pytest.approx(0.2)
    assert len(m.resets) - before == 3
