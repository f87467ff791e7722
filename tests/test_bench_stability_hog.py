"""studies/bench_stability.py --hog's scoring, on made-up worker entries: which
workers count as under the hog (by their timed repeats), and the in-run moves;
and --from's time per mode, and the tables over sets of kept runs (--estimators,
--workers-curve, --time-spread, --span-curve, --flags)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
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


def test_with_a_quiet_run_after_the_move_is_against_both_quiet_runs(capsys):
    # the host drifted 8 % faster from the quiet run before to the one after; the
    # hogged run between reads their geometric mean (sqrt(100 * 108) = 103.9)
    workers = [worker(104.0, (900.0, 960.0)), worker(50.0, (1010.0, 1070.0), disturbed=True),
               worker(104.0, (1170.0, 1230.0))]
    hogged = {("mlp", "train"): {"value": 104.0, "workers": workers}}
    score = bs.report_hog("jax", {("mlp", "train"): {"value": 100.0}}, hogged, HOG,
                          {("mlp", "train"): {"value": 108.0}})
    assert score.between_runs == pytest.approx(104.0 / (100.0 * 108.0) ** 0.5 - 1)  # +0.07 %, not +4.0 %
    assert "jax: mlp/train      quiet 100, after 108  hog        104  moved +0.1%" in capsys.readouterr().out


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


def test_the_in_run_moves_use_the_records_own_estimator(capsys):
    # a workers v6 record: the headline is the best clean worker; a hogged worker is
    # slow, so even with no flag it never becomes the best, and the headline does not move
    workers = [worker(100.0, (900.0, 960.0)), worker(60.0, (1010.0, 1070.0)), worker(104.0, (1170.0, 1230.0))]
    hogged = {("mlp", "train"): {"value": 104.0, "estimator": "best", "workers": workers}}
    score = bs.report_hog("torch", {("mlp", "train"): {"value": 100.0}}, hogged, HOG)
    assert (score.overlapped, score.flagged, score.in_run, score.unprotected) == (1, 0, 0.0, 0.0)
    capsys.readouterr()


def record(backend, values, latency):
    """A kept run record: mlp/train with these clean worker figures (each worker's
    repeats 1 below and above it), mlp/latency with one worker whose fastest round
    read 0.19 ms."""
    return {"target": {"backend": backend}, "run": {"started_at": f"2026-12-05T0{len(values)}:00:00Z"},
            "results": [{"model": "mlp", "mode": "train", "status": "ok", "better": "bigger",
                         "workers": [{"value": v, "samples": [v - 1, v + 1], "status": "ok", "disturbed": False}
                                     for v in values]},
                        {"model": "mlp", "mode": "latency", "status": "ok", "better": "smaller",
                         "workers": [{"value": latency, "samples": [latency, 0.19], "status": "ok",
                                      "disturbed": False}]}]}


def kept_set(folder, records):
    """A --keep folder: the records as invocations an hour apart, in this order."""
    import json

    folder.mkdir()
    for i, rec in enumerate(records):
        rec["run"]["started_at"] = f"2026-12-05T0{i}:00:00Z"
        (folder / f"r{i}.json").write_text(json.dumps(rec))
    return str(folder)


def test_estimators_compares_each_headline_over_sets_of_kept_runs(tmp_path, capsys):
    for name, runs in (("set1", [[100.0, 90.0, 110.0], [100.0, 80.0, 112.0]]),
                       ("set2", [[100.0, 100.0, 100.0], [96.0, 96.0, 96.0]])):
        # a 0.0 worker: the trimmed mean's outlier
        kept_set(tmp_path / name, [record("jax", values + [0.0] * i, 0.2 + i / 100) for i, values in enumerate(runs)])
    assert bs.main(["--estimators", str(tmp_path / "set1"), str(tmp_path / "set2")]) == 0
    # set1: median 100, 90 (±5.3 %), best 110, 112 (±0.90 %), trimmed 100, 90 (±5.3 %),
    # fastest 111, 113 (±0.89 %); set2: median, best, trimmed 100, 96 (±2.04 %), fastest
    # 101, 97 (±2.02 %); latency 0.20, 0.21 in both (±2.4 %), fastest 0.19 in both (±0.0 %)
    assert capsys.readouterr().out.splitlines() == [
        "throughput median   within ±5 %: 1/2, ±3 %: 1/2; spread median ±3.7 %, worst ±5.3 %; the tightest in 0",
        "throughput best     within ±5 %: 2/2, ±3 %: 2/2; spread median ±1.5 %, worst ±2.0 %; the tightest in 0",
        "throughput trimmed  within ±5 %: 1/2, ±3 %: 1/2; spread median ±3.7 %, worst ±5.3 %; the tightest in 0",
        "throughput fastest  within ±5 %: 2/2, ±3 %: 2/2; spread median ±1.5 %, worst ±2.0 %; the tightest in 2",
        "latency    median   within ±5 %: 2/2, ±3 %: 2/2; spread median ±2.4 %, worst ±2.4 %; the tightest in 0",
        "latency    best     within ±5 %: 2/2, ±3 %: 2/2; spread median ±2.4 %, worst ±2.4 %; the tightest in 0",
        "latency    trimmed  within ±5 %: 2/2, ±3 %: 2/2; spread median ±2.4 %, worst ±2.4 %; the tightest in 0",
        "latency    fastest  within ±5 %: 2/2, ±3 %: 2/2; spread median ±0.0 %, worst ±0.0 %; the tightest in 2",
    ]
    with pytest.raises(SystemExit, match="--estimators: no such folder: .*nope"):
        bs.main(["--estimators", str(tmp_path / "nope")])


def test_workers_curve_gives_the_headlines_spread_for_every_count_of_kept_workers(tmp_path, capsys):
    # the latency results (one worker each) are left out: throughput only
    folder = kept_set(tmp_path / "set", [record("torch", values, 0.2) for values in ([100.0, 90.0], [100.0, 80.0])])
    assert bs.main(["--workers-curve", folder]) == 0
    # the shipped headline (workers v9: trimmed; of one or two workers, their mean). One
    # worker: the first's 100, 100 (±0.0 %), the second's 90, 80 (±5.9 % of their median
    # 85); both workers: 95, 90 (±2.7 % of 92.5)
    assert capsys.readouterr().out.splitlines() == [
        "1 worker   within ±5 %: 1/2 (50 %), ±3 %: 1/2; spread median ±2.9 %",
        "2 workers  within ±5 %: 1/1 (100 %), ±3 %: 1/1; spread median ±2.7 %",
    ]
    with pytest.raises(SystemExit, match="--workers-curve: no such folder: .*nope"):
        bs.main(["--workers-curve", str(tmp_path / "nope")])


def test_time_spread_recomputes_the_headline_from_workers_taken_from_different_invocations(tmp_path, capsys):
    # the second invocation on a slow host; the latency results are left out: throughput only
    folder = kept_set(tmp_path / "set", [record("torch", values, 0.2) for values in ([100.0, 94.0], [86.0, 80.0])])
    assert bs.main(["--time-spread", folder]) == 0
    # the shipped headline (workers v9: trimmed; of two workers, their mean). As run: 97
    # and 83 (±7.8 % of their median 90); spread out, the first headline takes the first
    # invocation's first worker and the second's second (100, 80: 90), the other the
    # first's second and the second's first (94, 86: 90), ±0.0 %
    assert capsys.readouterr().out.splitlines() == [
        "as run                   within ±5 %: 0/1 (0 %), ±3 %: 0/1; spread median ±7.8 %",
        "spread over invocations  within ±5 %: 1/1 (100 %), ±3 %: 1/1; spread median ±0.0 %",
        "outside ±5 % (sets), as run / spread over invocations; how far apart one invocation's workers are "
        "(their own figures, max/min - 1, the median invocation):",
        "  torch mlp/train: 1/1 / 0/1; 6.9 % apart",  # 100/94 - 1 and 86/80 - 1: 6.4 and 7.5 %
    ]
    with pytest.raises(SystemExit, match="--time-spread: no such folder: .*nope"):
        bs.main(["--time-spread", str(tmp_path / "nope")])


def test_span_curve_takes_each_headlines_workers_from_adjacent_invocations(tmp_path, capsys):
    # three invocations an hour apart, the second on a slow host; worker w's timed
    # repeats run from minute w to w + 1 of its invocation
    records = []
    for i, value in enumerate((100.0, 80.0, 100.0)):
        rec = record("jax", [value] * 3, 0.2)
        t0 = 1796567400 + 3600 * i
        for w, worker in enumerate(rec["results"][0]["workers"]):
            worker["timed_window"] = [t0 + 60 * w, t0 + 60 * w + 60]
        records.append(rec)
    assert bs.main(["--span-curve", kept_set(tmp_path / "set", records)]) == 0
    # one invocation: 100, 80, 100 (±20.0 % of 100), workers over 3 minutes. Two: the
    # first headline takes workers 0 and 2 of the first invocation and worker 1 of the
    # second (100, 80, 100: the trimmed mean 100), the other workers 0 and 2 of the
    # second and 1 of the third (80, 100, 80: 80), ±11.1 % of 90, from minute 0 of the
    # first to minute 2 of the second (62 minutes); as run, (100, 80) and (80, 100)
    assert capsys.readouterr().out.splitlines() == [
        "1 invocation  (3.0 min)  within ±5 %: 0/1 (0 %), ±3 %: 0/1; spread median ±20.0 %  |  "
        "as run: within ±5 %: 0/1 (0 %), ±3 %: 0/1; spread median ±20.0 %",
        "2 invocations (62.0 min)  within ±5 %: 0/1 (0 %), ±3 %: 0/1; spread median ±11.1 %  |  "
        "as run: within ±5 %: 0/2 (0 %), ±3 %: 0/2; spread median ±11.1 %",
    ]
    with pytest.raises(SystemExit, match="--span-curve: no such folder: .*nope"):
        bs.main(["--span-curve", str(tmp_path / "nope")])


def test_flags_says_which_rule_flagged_whom_and_whether_they_were_slow(tmp_path, capsys):
    def w(value, cpu, why=None, rerun=False):
        return {"value": value, "status": "ok", "disturbed": why is not None, "disturbance": {"cpu_per_wall": cpu},
                **({"disturbed_why": why} if why else {}), **({"rerun": True} if rerun else {})}

    cpu_why = "CPU per wall second 0.75 vs the best worker's 1.00"
    latency = {"model": "mlp", "mode": "latency", "status": "ok", "better": "smaller", "workers": [
        w(0.20, 1.00), w(0.22, 0.98), w(0.21, 0.75, cpu_why),  # a false alarm: as quick as the clean ones
        w(0.30, 0.99, "the in-process canary stayed slow for every repeat"),  # a slow state, caught
        w(0.21, 1.00, rerun=True), w(0.21, 0.80, f"{cpu_why}; CPU stall 45% vs the best worker's 10%", rerun=True)]}
    train = {"model": "mlp", "mode": "train", "status": "ok", "better": "bigger",
             "workers": [w(100.0, 1.0), w(80.0, 0.7, cpu_why), w(102.0, 1.0), w(90.0, 1.0)]}  # 90: missed
    folder = kept_set(tmp_path / "set", [{"target": {"backend": "jax"}, "run": {}, "results": [latency, train]}])
    assert bs.main(["--flags", folder]) == 0
    # latency: clean median 0.21 (0.20, 0.22, 0.21); flagged 0.21, 0.30, 0.21 -> 1.00, 1.43, 1.00;
    # least CPU share 0.75 of 1.00; no clean worker 10 % slower (0.22: 1.05x). train: clean
    # median 100, the flagged 80 -> 1.25x slower; the unflagged 90 is 1.11x slower: missed
    assert capsys.readouterr().out.splitlines() == [
        "set jax latency: 4 workers, flagged by cpu 1, canary 1; reruns 2, flagged again 1; "
        "least CPU share 0.75x the best (lowest 0.75); flagged figures 1.00x the clean median (1.00-1.43); "
        "unflagged 10 % or more slower: 0",
        "set jax train: 4 workers, flagged by cpu 1; reruns 0, flagged again 0; "
        "least CPU share 0.70x the best (lowest 0.70); flagged figures 1.25x the clean median (1.25-1.25); "
        "unflagged 10 % or more slower: 1",
    ]
    assert bs.rules_of("CPU per wall second 0.8 vs 1.0; steal 12% of CPU ticks vs 0%") == ["cpu", "steal"]


def test_a_latency_line_shows_its_milliseconds(capsys):
    workers = [worker(0.104, (900.0, 960.0)), worker(0.2, (1010.0, 1070.0), disturbed=True),
               worker(0.102, (1170.0, 1230.0))]
    hogged = {("mlp", "latency"): {"value": 0.103, "estimator": "trimmed", "better": "smaller", "workers": workers}}
    bs.report_hog("jax", {("mlp", "latency"): {"value": 0.1}}, hogged, HOG)
    assert ("jax: mlp/latency    quiet        0.1  hog      0.103  moved +3.0%  workers under the hog 1, flagged 1"
            "  (grazed 0, flagged 0)") in capsys.readouterr().out.splitlines()


def test_the_reference_line_says_when_the_host_itself_moved_beyond_the_goal():
    def run(ms):
        return {("mlp", "train"): {"workers": [{"reference_seconds": ms / 1000}, {"reference_seconds": ms / 1000}]}}

    still = [run(2.30), run(2.36), run(2.25)]
    assert bs.reference_line("torch", still) == "torch: reference workload per run (ms): 2.30, 2.36, 2.25; ±2.6%"
    stepped = [run(2.28), run(2.28), run(1.97), run(1.97), run(1.98)]
    assert bs.reference_line("jax", stepped, "ms, the host's own speed") == (
        "jax: reference workload per run (ms, the host's own speed): 2.28, 2.28, 1.97, 1.97, 1.98; ±15.2%: "
        "the host itself moved beyond ±5 %, so these runs cannot show the protocol's own stability")
    assert bs.reference_line("jax", [run(2.3)]) == "jax: reference workload per run (ms): 2.30"


def test_the_steady_runs_are_picked_by_the_reference_workload_alone():
    def run(ms, train, latency):
        workers = [{"reference_seconds": ms / 1000}]
        return {("mlp", "train"): {"value": train, "workers": workers},
                ("mlp", "latency"): {"value": latency, "workers": workers}}

    # the third run's host was 12 % slower (and its headlines with it); the second run's
    # train headline is off although its host was not: it stays in
    runs = [run(2.00, 100.0, 0.100), run(2.02, 94.0, 0.101), run(2.24, 88.0, 0.112), run(2.01, 101.0, 0.099)]
    assert bs.steady_line("jax", runs) == (
        "jax: over the steady runs (1, 2, 4; reference workload within 5 % of the fastest): mlp/train ±6.0%, "
        "mlp/latency ±1.0%; within ±5 %: 1 of 2, ±3 %: 1")
    assert bs.steady_line("jax", [run(2.00, 100.0, 0.1), run(2.04, 90.0, 0.1)]) is None  # the host held still
