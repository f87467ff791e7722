"""studies/bench_extra_repeats.py on made-up records: the headline had each worker
stopped at its first N repeats, and the seconds its extra repeats took."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
import bench_extra_repeats as ber  # noqa: E402


def worker(samples, timed=(0.0, 10.0), disturbed=False):
    return {"value": sorted(samples)[len(samples) // 2], "samples": samples, "status": "ok",
            "disturbed": disturbed, "timed_window": list(timed)}


def record(hour, value, workers):
    """One run record of 100 s wall."""
    return {"target": {"backend": "jax"},
            "run": {"started_at": f"2026-12-04T0{hour}:00:00Z", "finished_at": f"2026-12-04T0{hour}:01:40Z"},
            "results": [{"model": "mlp", "mode": "train", "status": "ok", "value": value, "workers": workers},
                        {"model": "mlp", "mode": "latency", "status": "ok", "value": 0.2, "workers": []}]}


def test_a_worker_stopped_at_its_first_repeats_and_what_its_extra_ones_cost():
    # 3 repeats wanted; the first worker took 6 (its last three slow), over a 12 s window
    long = worker([100, 102, 98, 60, 61, 62], timed=(0.0, 12.0))
    r = {"workers": [long, worker([99, 100, 101], timed=(20.0, 26.0)),
                     worker([10, 10, 10], disturbed=True)]}  # a disturbed worker counts in no headline
    assert ber.first_n_headline(r, 3) == pytest.approx(100.0)  # medians 100 and 100
    timed, extra = ber.extra_seconds(r, 3)
    assert (timed, extra) == (pytest.approx(12 + 6 + 10), pytest.approx(6.0))  # half of the 12 s window


def test_the_report_gives_both_spreads_and_the_share_of_wall_time(tmp_path):
    runs = [record(1, 100.0, [worker([100, 100, 100, 50, 50, 50], timed=(0.0, 12.0))]),
            record(2, 110.0, [worker([110, 110, 110])])]
    lines = ber.report({"jax": runs}, 3)
    assert lines[0] == "jax mlp/train: headline ±4.8% as recorded, ±4.8% with the first 3 repeats"
    assert lines[1] == "jax: per run 11 s timed, 3 s of it past the first 3 repeats, wall 100 s"
    assert lines[2] == "all: 6 s past the first 3 repeats = 3 % of 200 s wall"
