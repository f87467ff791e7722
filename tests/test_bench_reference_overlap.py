"""studies/bench_reference.py's overlap view, on made-up duet records: which
pairs it forms (first-round workers in run order, as the ratio pairs them) and
how much of their timed windows they share."""

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
import bench_reference as br  # noqa: E402


def worker(value, timed, **flags):
    # the benchmark's whole window starts 20 s before its timed repeats
    return {"value": value, "status": "ok", "disturbed": False, "window": [timed[0] - 20, timed[1]],
            "timed_window": list(timed), **flags}


def record(side, workers, mode="train"):
    return {"results": [{"model": "mlp", "mode": mode, "status": "ok", "workers": workers}],
            "run": {"ab": {"side": side}}}


@pytest.mark.parametrize("a, b, share", [
    ((0, 10), (0, 10), 1.0),
    ((0, 10), (5, 15), 5 / 15),
    ((0, 10), (10, 20), 0.0),
    ((0, 10), (30, 40), 0.0),  # apart: never negative
])
def test_overlap_is_the_shared_share_of_the_union(a, b, share):
    assert br._overlap(a, b) == pytest.approx(share)


def test_pairs_are_first_round_workers_in_order_and_use_the_timed_window():
    a = record("a", [worker(100.0, (0, 1), calibration=True),  # alone before the pairs
                     worker(100.0, (10, 20)), worker(100.0, (40, 50)),
                     worker(100.0, (90, 95), rerun=True)])      # after the pairs: pairs with nothing
    b = record("b", [worker(110.0, (10, 20)), worker(50.0, (45, 55))])
    rows = br.pair_overlaps([("jax", a, b)])
    assert [(m, round(o, 3)) for m, o, _ in rows] == [("train", 1.0), ("train", round(5 / 15, 3))]
    assert [d for _, _, d in rows] == pytest.approx([math.log(1.1), math.log(2.0)])


def test_latency_without_timed_windows_pairs_on_the_whole_window(capsys):
    def lat(value, window):
        return {"value": value, "status": "ok", "disturbed": False, "window": list(window)}
    a = record("a", [lat(0.2, (0, 1)), lat(0.2, (10, 11))], mode="latency")
    b = record("b", [lat(0.2, (0, 1)), lat(0.3, (20, 21))], mode="latency")
    br.overlap_report([[("jax", a, b)]])
    assert capsys.readouterr().out.splitlines() == [
        "single pairs by how much the two sides' timed windows overlapped:",
        "  latency  overlap >= 1/2     1 pairs: median |log ratio| 0.000, 0 % beyond 10 %",
        "  latency  overlap < 1/2      1 pairs: median |log ratio| 0.405, 100 % beyond 10 %",
    ]


def test_the_overlapping_pairs_ratio_reads_only_pairs_sharing_half_their_windows():
    a = record("a", [worker(100.0, (0, 10)), worker(100.0, (20, 30)), worker(100.0, (40, 50))])
    b = record("b", [worker(110.0, (0, 10)), worker(130.0, (21, 31)), worker(50.0, (48, 58))])
    # the third pair shares 2 s of 18: left out; the median of 1.1 and 1.3
    assert br.overlapping_ratio(a["results"][0], b["results"][0]) == (pytest.approx(1.2), 2)
    apart = record("b", [worker(110.0, (100, 110)), worker(90.0, (200, 210))])
    # no pair overlaps: every pair counts
    assert br.overlapping_ratio(a["results"][0], apart["results"][0]) == (pytest.approx(1.0), 2)


def test_a_flat_folder_of_several_invocations_is_told_apart_by_run_id(tmp_path):
    # studies/bench_turns.sh ... --reference writes every invocation of one checkout into one folder
    import json

    def rec(run_id, side, value):
        return {"run": {"ab": {"id": run_id, "side": side, "reference": True}}, "target": {"backend": "jax"},
                "results": [{"model": "mlp", "mode": "train", "status": "ok", "value": value, "workers": []}]}

    for run_id, a, b in (("r1", 100.0, 99.0), ("r2", 80.0, 81.0)):
        for side, value in (("a", a), ("b", b)):
            (tmp_path / f"jax--local-cpu--{run_id}-{side}-1.json").write_text(json.dumps(rec(run_id, side, value)))
    got = br.invocations(tmp_path)
    assert [name for name, _ in got] == ["r1", "r2"]
    assert [[(backend, a["results"][0]["value"], b["results"][0]["value"]) for backend, a, b in sides]
            for _, sides in got] == [[("jax", 100.0, 99.0)], [("jax", 80.0, 81.0)]]
    (tmp_path / "00").mkdir()  # run's layout: one sub-folder per invocation wins
    (tmp_path / "00" / "x.json").write_text(json.dumps(rec("r3", "a", 1.0)))
    assert [name for name, _ in br.invocations(tmp_path)] == ["00"]
