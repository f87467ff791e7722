"""scripts/bench_stability.py --hog's scoring, on made-up worker entries: which
workers count as under the hog (by their timed repeats), and the in-run moves;
and --from's time per mode."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import bench_stability as bs  # noqa: E402

HOG = (1000.0, 1100.0)


def worker(value, timed, disturbed=False, rerun=False):
    # the whole worker starts 30 s before its timed repeats (imports, data, compile)
    return {"value": value, "status": "ok", "disturbed": disturbed, "window": [timed[0] - 30, timed[1]],
            "timed_window": list(timed), **({"rerun": True} if rerun else {})}


def test_workers_count_as_hogged_by_their_timed_repeats_and_the_headline_by_the_untouched(capsys):
    workers = [
        worker(100.0, (900.0, 960.0)),                   # before the hog
        worker(48.0, (1010.0, 1070.0), disturbed=True),  # under it, flagged
        worker(50.0, (1040.0, 1095.0), disturbed=True),  # under it, flagged
        worker(99.0, (1105.0, 1160.0)),  # set-up under the hog, timed repeats after it: not hogged
        worker(102.0, (1170.0, 1230.0)),
        worker(101.0, (1240.0, 1300.0), rerun=True),
        worker(97.0, (1310.0, 1370.0), rerun=True),
    ]
    quiet = {("mlp", "predict"): {"value": 105.0}}
    hogged = {("mlp", "predict"): {"value": 100.0, "workers": workers}}  # median of the five clean ones
    score = bs.report_hog("jax", quiet, hogged, HOG)
    assert (score.overlapped, score.flagged) == (2, 2)
    assert score.between_runs == pytest.approx(5 / 105)
    assert score.in_run == 0.0  # the headline rests on the untouched workers only
    assert score.unprotected == pytest.approx(1 - 99.0 / 100.0)  # median of 100, 48, 50, 99, 102
    assert "from the 5 workers the hog never reached" in capsys.readouterr().out


def test_an_unflagged_hogged_worker_shows_as_an_in_run_move(capsys):
    workers = [worker(100.0, (900.0, 960.0)), worker(60.0, (1010.0, 1070.0)), worker(80.0, (1020.0, 1090.0)),
               worker(104.0, (1170.0, 1230.0))]
    hogged = {("mlp", "train"): {"value": 90.0, "workers": workers}}  # what the run reported
    score = bs.report_hog("torch", {("mlp", "train"): {"value": 100.0}}, hogged, HOG)
    assert (score.overlapped, score.flagged) == (2, 0)
    assert score.in_run == pytest.approx(1 - 90.0 / 102.0)
    capsys.readouterr()


def test_time_per_mode_sums_every_workers_window_and_gives_latencys_share(capsys):
    def result(mode, *windows):
        return {"mode": mode, "workers": [{"window": list(w)} for w in windows] + [{"status": "failed"}]}
    records = [{"results": [result("train", (0, 100), (200, 260)), result("latency", (100, 120))]},
               {"results": [result("train", (0, 140)), result("predict", (140, 180)), result("latency", (180, 220))]}]
    assert bs.mode_seconds(records) == {"train": 300.0, "latency": 60.0, "predict": 40.0}
    bs.print_mode_time("jax", records)
    # per run: train 150, predict 20, latency 30 -> 30 / 170
    assert capsys.readouterr().out == ("jax: seconds in workers per run, by mode: latency 30, predict 20, "
                                       "train 150; latency adds 18 % to the rest\n")
