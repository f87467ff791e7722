"""The confirm loop (bench.compare.confirm) on fake pair sources whose effect is
set by how they are built, the `bench confirm` verb with an injected source,
and what its result does to an alert issue (bench.ci.confirm_alert,
`bench comment confirm` with the fake gh)."""

import argparse
import json
import math
import os
import random
import subprocess
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from bench.ci import confirm_alert
from bench.commands.confirm import run_confirm
from bench.compare import confirm
from bench.config import Compare
from bench.errors import UsageError
from tests.helpers import fake_gh

ROOT = Path(__file__).resolve().parent.parent


def source(effect, noise, seed, *, drift=0.05):
    """k more (A, B) pairs: B = A * (1 + effect), each pair with the host's shared
    drift and its own log-normal noise per side (noise / sqrt 2 each)."""
    rng = random.Random(seed)

    def draw(k):
        out = []
        for _ in range(k):
            host = 1000.0 * math.exp(rng.gauss(0, drift))
            out.append((host * math.exp(rng.gauss(0, noise / math.sqrt(2))),
                        host * (1 + effect) * math.exp(rng.gauss(0, noise / math.sqrt(2)))))
        return out
    return draw


def answers(effect, noise, trials=20, **plan):
    outs = [confirm.run(source(effect, noise, seed), confirm.Plan(**plan), "bigger") for seed in range(trials)]
    return [o.answer for o in outs], outs


def test_three_percent_slower_is_different_and_identical_builds_same():
    # The issue's goals, on made-up pairs with 2 % noise per pair ratio.
    slow, outs = answers(-0.03, 0.02)
    assert slow.count("DIFFERENT") >= 19 and all(o.direction == "slower" for o in outs if o.answer == "DIFFERENT")
    same, _ = answers(0.0, 0.02)
    assert same.count("SAME") >= 19 and same.count("DIFFERENT") <= 1


def test_the_plan_holds_the_goals_where_a_pair_moves_5_percent():
    # What the default plan is sized for: this VM's duet pairs move 6.5-8.3 %;
    # at 5 % its 8 looks over up to 64 pairs still call 3 % and identical builds,
    # within a 20-minute budget at 17 s a pair.
    def timed(effect):
        outs = []
        for seed in range(20):
            now, draw = [0.0], source(effect, 0.05, seed)

            def paced(k, now=now, draw=draw):
                now[0] += 17.0 * k
                return draw(k)
            outs.append(confirm.run(paced, confirm.Plan(budget_s=1200.0), "bigger", clock=lambda now=now: now[0]))
        return [o.answer for o in outs], outs

    slow, outs = timed(-0.03)
    assert slow.count("DIFFERENT") >= 19 and all(o.direction == "slower" for o in outs if o.answer == "DIFFERENT")
    same, outs = timed(0.0)
    assert same.count("SAME") >= 19 and same.count("DIFFERENT") <= 1 and max(o.seconds for o in outs) <= 1200.0


def test_noisier_pairs_need_more_pairs_and_may_end_unknown():
    _, quiet = answers(0.0, 0.01, trials=5)
    _, noisy = answers(0.0, 0.04, trials=5)
    assert sum(o.pairs for o in quiet) < sum(o.pairs for o in noisy)
    # Very noisy: the plan's pairs run out before either answer; it says UNKNOWN, never guesses.
    loud, outs = answers(-0.03, 0.20, trials=3, max_pairs=24)
    assert "UNKNOWN" in loud and all(o.stopped for o in outs)


def test_no_different_before_enough_pairs_for_the_split_alpha():
    plan = confirm.Plan()  # 8 looks: DIFFERENT needs p < 0.01 / 8
    assert plan.looks == 8 and plan.low == pytest.approx(0.01 / 8)
    assert plan.first_callable() == 11  # 2 / 2^11 < 0.00125 <= 2 / 2^10
    out = confirm.run(source(-0.20, 0.001, 1), plan, "bigger")
    # 8 pairs cannot reach it; the next look, at 8 + 8, does
    assert out.answer == "DIFFERENT" and out.pairs == 16 and [k.answer for k in out.looks] == ["UNKNOWN", "DIFFERENT"]


def test_the_budget_stops_the_loop_before_a_batch_that_would_pass_it():
    now = [0.0]

    def slow_source(k):  # 30 s a pair; ratios +-10 %, alternating: never decided
        now[0] += 30.0 * k
        return [(1000.0, 1000.0 * math.exp(0.1 * (-1) ** i - 0.01)) for i in range(k)]

    out = confirm.run(slow_source, confirm.Plan(budget_s=600.0), "bigger", clock=lambda: now[0])
    assert out.answer == "UNKNOWN" and out.stopped == "the next batch would pass the budget of 600 s"
    assert out.pairs == 16 and now[0] == 480.0  # 8 + 8 pairs: 480 s; 8 more would pass it


def test_a_source_that_gives_nothing_ends_the_loop():
    out = confirm.run(lambda k: [], confirm.Plan(), "bigger")
    assert (out.answer, out.pairs, out.stopped) == ("UNKNOWN", 0, "two batches in a row gave no usable pair")


def test_smaller_is_better_reads_a_rise_as_slower():
    out = confirm.run(source(0.10, 0.001, 2), confirm.Plan(), "smaller")
    assert (out.answer, out.direction) == ("DIFFERENT", "slower")


def test_bad_plans_and_pairs_are_refused_with_the_value():
    with pytest.raises(confirm.ConfirmError, match="Plan.first is 1; expected at least 2 pairs"):
        confirm.Plan(first=1)
    with pytest.raises(confirm.ConfirmError, match="Plan.max_pairs is 4"):
        confirm.Plan(max_pairs=4)
    with pytest.raises(confirm.ConfirmError, match=r"pair \(1.0, -2.0\); expected two finite figures > 0"):
        confirm.run(lambda k: [(1.0, -2.0)] * k, confirm.Plan(), "bigger")


def _args(tmp_path, **kw):
    a = dict(series="jax/local-cpu/mlp/train.vs-ref", good="3.16.0.dev2026102604", bad="3.16.0.dev2026102704",
             work=str(tmp_path / "work"), out=None, budget_minutes=20.0, first=8, step=4, max_pairs=40, config=None)
    a.update(kw)
    return argparse.Namespace(**a)


def test_the_verb_writes_the_result_record(tmp_path, capsys):
    asked = []

    class Source:
        better = "bigger"

        def __init__(self, key, good, bad):
            asked.append((key, good, bad))
            self.draw = source(-0.05, 0.01, 4)

        def __call__(self, k):
            return self.draw(k)

    assert run_confirm(_args(tmp_path), Compare(), Source) == 0
    assert asked == [(("jax", "local-cpu", "mlp", "train"), "3.16.0.dev2026102604", "3.16.0.dev2026102704")]
    result = json.loads((tmp_path / "work" / "confirm.json").read_text())
    assert (result["kind"], result["format"], result["answer"], result["direction"]) == \
        ("confirm", 1, "DIFFERENT", "slower")
    assert result["plan"]["low"] == pytest.approx(0.01 / 9) and result["pairs"] == len(result["looks"]) * 4 + 4
    assert capsys.readouterr().out.startswith("jax/local-cpu/mlp/train.vs-ref: 3.16.0.dev2026102704 against "
                                              "3.16.0.dev2026102604: DIFFERENT (slower): B against A -5.")
    with pytest.raises(UsageError, match="--good is 'x; rm'; expected a keras-nightly version"):
        run_confirm(_args(tmp_path, good="x; rm"), Compare(), Source)


# -- the alert's side -------------------------------------------------------

def _result(tmp_path, **kw):
    r = {"format": 1, "kind": "confirm", "series": "jax/local-cpu/mlp/train", "good": "3.16.0.dev2026102604",
         "bad": "3.16.0.dev2026102704", "answer": "DIFFERENT", "direction": "slower", "delta": -0.041,
         "interval": [-0.06, -0.02], "p_value": 0.0004, "pairs": 16, "stopped": "decided at look 3 <b>"}
    r.update(kw)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(r))
    return path


def _comment(tmp_path, path):
    root, bindir = fake_gh(tmp_path)
    env = {**os.environ, "FAKE_GH_ROOT": str(root), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "ISSUE": "7", "GITHUB_REPOSITORY": "o/r", "RUN_URL": "https://github.example/run/1"}
    done = subprocess.run([sys.executable, "-m", "bench", "comment", "confirm", str(path)],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    return done, root


def test_a_confirmed_slowdown_comments_and_dispatches_bisect(tmp_path):
    done, root = _comment(tmp_path, _result(tmp_path))
    assert done.returncode == 0, done.stderr
    [c] = json.loads((root / "comments" / "7.json").read_text())
    assert c["body"].startswith("**Confirm** (https://github.example/run/1): DIFFERENT: the same-machine A/B "
                                "confirms the slowdown")
    assert "-4.1% (interval -6.0% … -2.0%), p=0.0004, 16 worker pairs" in c["body"]
    assert "<b>" not in c["body"]
    [run] = [json.loads(line) for line in (root / "workflow-runs.jsonl").read_text().splitlines()]
    assert run["workflow"] == "bisect.yml" and run["inputs"] == {
        "series": "jax/local-cpu/mlp/train", "good": "3.16.0.dev2026102604", "bad": "3.16.0.dev2026102704",
        "issue": "7"}


def test_same_labels_the_issue_as_the_machines_and_dispatches_nothing(tmp_path):
    done, root = _comment(tmp_path, _result(tmp_path, answer="SAME", direction=None, delta=0.002))
    assert done.returncode == 0, done.stderr
    issue = json.loads((root / "issues" / "7.json").read_text())
    assert confirm_alert.MACHINE_LABEL in [lb["name"] for lb in issue["labels"]]
    assert not (root / "workflow-runs.jsonl").exists()


def test_an_unreadable_result_is_said_and_nothing_follows(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"kind": "confirm", "format": 1, "answer": "DIFFERENT", "direction": "slower",
                                "delta": "NaN", "pairs": 3}))
    done, root = _comment(tmp_path, path)
    assert done.returncode == 0
    [c] = json.loads((root / "comments" / "7.json").read_text())
    assert "left no readable result" in c["body"] and not (root / "workflow-runs.jsonl").exists()


def test_confirm_inputs_name_the_last_good_and_first_bad_nightly():
    from bench.analyse.series import Point, Series
    from bench.analyse.window import Nightly, Window
    from bench.present.table import Row

    when = datetime(2026, 11, 1, tzinfo=timezone.utc)
    points = [Point(date(2026, 11, d), 100.0, when, 1, f"r{d}", f"3.16.0.dev202611{d:02d}01", None)
              for d in range(1, 8)]
    series = Series(("jax", "local-cpu", "mlp", "train"), "samples/s", "bigger", tuple(points), (), (), when)
    watch = Row("jax", "local-cpu", "mlp", "train", 90.0, -0.1, "", 7, "Watch", "samples/s", "bigger", None, None)
    assert confirm_alert.confirm_inputs(watch, series) == {
        "series": "jax/local-cpu/mlp/train", "good": "3.16.0.dev2026110501", "bad": "3.16.0.dev2026110601"}
    window = Window(Nightly.of(points[2]), Nightly.of(points[3]), "https://x", "date")
    regressed = Row("jax", "local-cpu", "mlp", "train", 90.0, -0.1, "", 7, "Regressed", "samples/s", "bigger",
                    None, None, window=window)
    assert confirm_alert.confirm_inputs(regressed, series) == {
            "series": "jax/local-cpu/mlp/train", "good": "3.16.0.dev2026110301", "bad": "3.16.0.dev2026110401"}
    steady = Row("jax", "local-cpu", "mlp", "train", 90.0, -0.1, "", 7, "Steady", "samples/s", "bigger", None, None)
    assert confirm_alert.confirm_inputs(steady, series) is None


FAKE_VENV = """#!/bin/bash
# The job venv's python: pip answers as an empty venv; `-m bench confirm` logs its arguments.
if [ "$1 $2 $3" = "-m pip list" ]; then echo '[]'; exit 0; fi
if [ "$1 $2" = "-m pip" ]; then exit 0; fi
if [ "$1 $2 $3" = "-m bench confirm" ]; then printf '%s\\n' "$*" > "$ARGS_LOG"; echo "jax/x/mlp/train: SAME"; exit 0; fi
exec REAL "$@"
"""


def test_run_confirm_installs_bench_then_confirms_and_writes_the_summary(tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(FAKE_VENV.replace("REAL", sys.executable))
    (venv / "python").chmod(0o755)
    out = tmp_path / "bench-out"
    env = {**os.environ, "BENCH_VENV": str(tmp_path / "venv"), "BENCH_SKIP_INSTALL": "1",
           "BENCH_OUT": str(out / "records"), "ARGS_LOG": str(tmp_path / "args"), "SERIES": "jax/x/mlp/train",
           "GOOD": "3.16.0.dev2026102604", "BAD": "3.16.0.dev2026102704", "CONFIRM_MINUTES": "15"}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "run-confirm.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "args").read_text() == (
        f"-m bench confirm --series jax/x/mlp/train --good 3.16.0.dev2026102604 --bad 3.16.0.dev2026102704 "
        f"--work {out / 'confirm'} --out {out / 'confirm' / 'result.json'} --budget-minutes 15\n")
    assert (out / "confirm.md").read_text() == "### confirm jax/x/mlp/train\n\njax/x/mlp/train: SAME\n"
    assert json.loads((out / "confirm" / "install-bench.json").read_text())["skipped_install"] is True
