"""bench bisect on a stand-in git history with one slow commit and a fake
A/B runner (tests/standin.py): found, in few probes, resumable, and honest
when nothing is beyond the noise."""

import argparse
import json
from datetime import timedelta

import pytest

from bench import cli
from bench.commands.bisect import run_bisect
from bench.compare.bisect import BisectError
from tests.helpers import T0, make_record, ok, write_data
from tests.standin import FakeRunner, make_history

SERIES = "jax/local-cpu/cnn/train"


def args(tmp_path, repo, good, bad, **kw):
    a = dict(series=SERIES, good=good, bad=bad, keras_repo=str(repo), data=None,
             work=str(tmp_path / "work"), state=None, out=str(tmp_path / "result.json"), config=None)
    a.update(kw)
    return argparse.Namespace(**a)


@pytest.fixture
def history(tmp_path):
    repo = tmp_path / "keras"
    return repo, make_history(repo, n=64, slow=37)


def test_finds_the_slow_commit_in_seven_probes(tmp_path, history, capsys):
    repo, commits = history
    runner = FakeRunner(repo, seed=3)
    assert run_bisect(args(tmp_path, repo, commits[0], commits[-1]), lambda key, good: runner) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{SERIES}: first slow commit {commits[37]} (")
    assert len(runner.calls) == 7 and runner.calls[0] == commits[-1]  # bad first
    record = json.loads((tmp_path / "result.json").read_text())
    assert record["format"] == 1 and record["kind"] == "bisect" and record["outcome"] == "found"
    assert record["culprit"] == commits[37] and record["last_good"] == commits[36]
    assert record["commits"] == commits[1:] and len(record["probes"]) == 7
    assert [p["commit"] for p in record["probes"]] == runner.calls
    assert record["culprit"] in runner.calls  # a culprit is always measured


def test_an_interrupted_bisect_resumes_from_its_state(tmp_path, history, capsys):
    repo, commits = history
    runner = FakeRunner(repo, seed=3)

    def flaky(commit):
        if len(runner.calls) == 3:
            raise KeyboardInterrupt
        return runner(commit)

    with pytest.raises(KeyboardInterrupt):
        run_bisect(args(tmp_path, repo, commits[0], commits[-1]), lambda key, good: flaky)
    [state] = (tmp_path / "work").glob("state-*.json")
    assert len(json.loads(state.read_text())["probes"]) == 3
    again = FakeRunner(repo, seed=4)
    assert run_bisect(args(tmp_path, repo, commits[0], commits[-1]), lambda key, good: again) == 0
    assert "resuming" in capsys.readouterr().err
    assert len(again.calls) == 4 and not set(again.calls) & set(runner.calls)
    assert json.loads((tmp_path / "result.json").read_text())["culprit"] == commits[37]


def test_nothing_beyond_the_noise_names_no_culprit(tmp_path, capsys):
    repo = tmp_path / "keras"
    commits = make_history(repo, n=64, slow=None)
    runner = FakeRunner(repo, seed=1)
    assert run_bisect(args(tmp_path, repo, commits[0], commits[-1]), lambda key, good: runner) == 0
    out = capsys.readouterr().out
    assert "no commit is slower beyond the noise" in out and "no culprit named" in out
    record = json.loads((tmp_path / "result.json").read_text())
    assert record["outcome"] == "none-beyond-noise" and record["culprit"] is None
    assert runner.calls == [commits[-1]]


def nightly_data(tmp_path, commits):
    """Nightlies on 4 nights: the first two know their commit, the others not."""
    recs = []
    for i in range(4):
        env = {"keras_commit": commits[16 * i]} if i < 2 else {}
        recs.append(make_record([ok("cnn", "train", 1000.0)], started_at=T0 + timedelta(days=i),
                                keras_version=f"3.14.0.dev2026110{i + 1}00", environment=env))
    return write_data(recs, tmp_path / "data")


def test_nightly_versions_resolve_to_commits(tmp_path, history):
    repo, commits = history
    data = nightly_data(tmp_path, commits)
    runner = FakeRunner(repo, seed=5)
    # 3.14.0.dev2026110400 has no commit: the default branch's at its build
    # time (2026-11-04 00:00; a commit every 6 h from 11-01 00:00 -> commit 12)
    a = args(tmp_path, repo, "3.14.0.dev2026110100", "3.14.0.dev2026110400", data=str(data))
    assert run_bisect(a, lambda key, good: runner) == 0
    record = json.loads((tmp_path / "result.json").read_text())
    assert record["good"] == commits[0] and record["bad"] == commits[12]
    assert record["outcome"] == "none-beyond-noise"  # the slow commit (37) is after bad


def test_unknown_nightly_lists_the_ones_the_data_has(tmp_path, history, capsys):
    repo, commits = history
    data = nightly_data(tmp_path, commits)
    assert cli.main(["bisect", "--series", SERIES, "--good", "3.13.0", "--bad", "3.14.0.dev2026110400",
                     "--keras-repo", str(repo), "--data", str(data), "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"bench bisect: error: --good '3.13.0' is not a nightly of {SERIES} in {data}; "
                          "it has: 3.14.0.dev2026110100 (2026-11-01), 3.14.0.dev2026110200 (2026-11-02)")


def test_unreachable_repo_is_one_line(tmp_path, capsys):
    assert cli.main(["bisect", "--series", SERIES, "--good", "a" * 40, "--bad", "b" * 40,
                     "--keras-repo", f"file://{tmp_path}/nowhere.git", "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be reached" in err and "nowhere.git" in err


def test_a_state_of_another_bisect_is_refused(tmp_path, history, capsys):
    repo, commits = history
    state = tmp_path / "state.json"
    runner = FakeRunner(repo, seed=3)
    assert run_bisect(args(tmp_path, repo, commits[0], commits[-1], state=str(state)),
                      lambda key, good: runner) == 0
    with pytest.raises(BisectError, match="state file"):  # the CLI prints it as one line, exit 2
        run_bisect(args(tmp_path, repo, commits[1], commits[-1], state=str(state)), lambda key, good: runner)
    assert len(runner.calls) == 7


def test_the_real_probe_reads_the_two_ab_records_and_judges_the_pairs(tmp_path):
    from bench.compare.bisect_probe import probe_by_loop, read_ab
    from bench.compare.confirm import plan_of
    from bench.config import Compare

    def record(side, values):
        workers = [{"value": v, "samples": [v], "status": "ok", "disturbed": False} for v in values]
        workers[2] = {"value": None, "samples": [], "status": "failed", "disturbed": False,
                      "error": {"kind": "crash", "message": "x"}}
        return {"run": {"id": "1", "ab": {"id": "ab1", "side": side, "python": f"/v{side}/bin/python"}},
                "results": [{"model": "cnn", "mode": "train", "status": "ok", "value": values[0],
                             "better": "bigger", "workers": workers}]}

    good = [1000.0, 1004.0, 990.0, 998.0, 1003.0, 1001.0, 996.0]
    slow = [v * 0.9 for v in good]
    (tmp_path / "a.json").write_text(json.dumps(record("a", good)))
    (tmp_path / "b.json").write_text(json.dumps(record("b", slow)))
    sides = read_ab(tmp_path, "cnn", "train")
    assert sides["a"][2] is None and sides["better"] == "bigger"
    batch = [(a, b) for a, b in zip(sides["a"], sides["b"]) if a is not None]
    # Batches of these 6 pairs until the loop decides: 10 % slower is DIFFERENT once p can pass.
    p = probe_by_loop("abc", lambda k: batch[:k], plan_of(Compare()), "bigger")
    assert p.verdict == "slower" and p.pairs == 12 and p.delta == pytest.approx(-0.1)
    same = [(g, g * (1 + 0.001 * (-1) ** i)) for i, g in enumerate(good)]
    assert probe_by_loop("abc", lambda k: (same * 3)[:k], plan_of(Compare()), "bigger").verdict == "unchanged"


def test_a_midpoint_is_slow_when_nearer_bad_than_good():
    from bench.compare.bisect import Probe, is_slow

    bad = Probe("b", "slower", -0.06, (-0.08, -0.04), 0.001, 7)

    def p(delta):
        return Probe("m", "unchanged", delta, (delta - 0.02, delta + 0.02), 0.2, 7)

    assert is_slow(p(-0.04), bad) and is_slow(p(-0.07), bad)   # not significant alone, still bad's side
    assert not is_slow(p(-0.02), bad) and not is_slow(p(0.01), bad)
    slower_time = Probe("b", "slower", 0.08, (0.05, 0.11), 0.001, 7)  # 'smaller is better': up is slower
    assert is_slow(p(0.06), slower_time) and not is_slow(p(0.02), slower_time)


def test_the_real_probe_installs_from_the_keras_repo_it_was_given(tmp_path):
    from bench.compare.bisect_probe import keras_url

    assert keras_url("https://github.com/keras-team/keras.git") == "https://github.com/keras-team/keras.git"
    assert keras_url(str(tmp_path / "keras")) == f"file://{tmp_path}/keras"
