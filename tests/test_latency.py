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
