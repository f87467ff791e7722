"""Many rows in one A/B comparison: Benjamini–Hochberg across them, honest
"sees", and `--fail-on slower` on the adjusted verdicts. The pairs are made up
here; which rows changed is set by how they are built, never by the rule."""

import json
import math
import random

from bench import cli
from bench.compare.baseline import baseline_from_records
from bench.compare.head import head_from_records
from bench.compare.verdicts import compare
from bench.config import Compare
from bench.records.record import RunRecord
from tests.helpers import make_record, ok

SETTINGS = Compare(nights=7, min_change=0.03, alpha=0.01)
ROWS = [(m, mode) for m in ("cnn", "mlp") for mode in ("train", "predict", "latency", "fit", "eval", "step")]


def ab_pair(factors, pairs, rng, noise=0.01, ab_id="ab-1", mode="turns"):
    """(A record, B record) of one A/B run: one row per ROWS entry; B's row k is
    A's times factors[k], each pair with its own log-normal noise, the host's
    drift shared by both workers of a pair."""
    sides = {"a": [], "b": []}
    for (model, mode_name), f in zip(ROWS, factors):
        drift = [math.exp(rng.gauss(0, 0.05)) for _ in range(pairs)]
        for name, k in (("a", 1.0), ("b", f)):
            values = [1000.0 * d * k * math.exp(rng.gauss(0, noise)) for d in drift]
            workers = [{"value": v, "samples": [v], "status": "ok", "disturbed": False} for v in values]
            sides[name].append(ok(model, mode_name, sorted(values)[pairs // 2], values, workers=workers))
    out = []
    for name in ("a", "b"):
        data = json.loads(make_record(sides[name], run_id=f"{ab_id}-{name}", event="workflow_dispatch").to_json())
        data["run"]["ab"] = {"id": ab_id, "side": name, "python": f"/v/{name}/bin/python", "mode": mode}
        out.append(RunRecord.from_dict(data, f"{name}.json"))
    return out


def rows(a, b):
    return {r.key[2:]: r for r in compare(baseline_from_records([a], "a"), head_from_records([b]), SETTINGS)}


def test_one_row_that_a_lone_test_would_call_is_held_back_among_twelve(tmp_path, capsys):
    rng = random.Random(1)
    factors = [0.90] + [1.0] * 11  # only cnn/train is 10 % slower
    a, b = ab_pair(factors, 8, rng, noise=0.002)
    found = rows(a, b)
    slow = found[("cnn", "train")]
    # Alone, 8 pairs all on the slow side give p = 2/256 < 0.01; among 12 rows BH asks for 0.01/12.
    assert slow.p_value == 2 / 256 and slow.level == 0.01 / 12
    assert slow.verdict == "unchanged" and "Benjamini–Hochberg" in slow.reason
    assert slow.detectable is None  # 8 pairs cannot reach 0.00083 at all: "sees" says nothing
    (tmp_path / "a.json").write_text(a.to_json())
    (tmp_path / "b.json").write_text(b.to_json())
    code = cli.main(["compare", "--base", str(tmp_path / "a.json"), "--head", str(tmp_path / "b.json"),
                     "--fail-on", "slower"])
    out = capsys.readouterr().out
    assert code == 0  # --fail-on slower reads the adjusted verdicts
    assert "too few repeats to see 3% in jax/local-cpu/cnn/train: it could call no change at all" in out


def test_with_twelve_pairs_the_lone_slow_row_is_called_and_fails_the_check(tmp_path, capsys):
    rng = random.Random(2)
    a, b = ab_pair([0.90] + [1.0] * 11, 12, rng, noise=0.002)
    found = rows(a, b)
    assert found[("cnn", "train")].verdict == "slower"
    assert all(r.verdict == "unchanged" for k, r in found.items() if k != ("cnn", "train"))
    (tmp_path / "a.json").write_text(a.to_json())
    (tmp_path / "b.json").write_text(b.to_json())
    assert cli.main(["compare", "--base", str(tmp_path / "a.json"), "--head", str(tmp_path / "b.json"),
                     "--fail-on", "slower"]) == 1


def test_when_every_row_moves_bh_calls_them_all_at_eight_pairs():
    a, b = ab_pair([0.90] * 12, 8, random.Random(3), noise=0.002)
    found = rows(a, b)
    assert all(r.verdict == "slower" and r.level == 0.01 for r in found.values())


def test_made_up_comparisons_false_calls_and_power():
    # 40 comparisons where nothing changed (each of 12 rows, 12 pairs): a false
    # "slower" in any row of a comparison at most about alpha of the time; and 40
    # where 3 rows are 6 % slower: those rows found, the 9 others left alone.
    rng = random.Random(20261207)
    false_comparisons, found, missed, wrong = 0, 0, 0, 0
    for _ in range(40):
        a, b = ab_pair([1.0] * 12, 12, rng, noise=0.015)
        false_comparisons += any(r.verdict == "slower" for r in rows(a, b).values())
    for _ in range(40):
        changed = set(rng.sample(range(12), 3))
        a, b = ab_pair([0.94 if k in changed else 1.0 for k in range(12)], 12, rng, noise=0.015)
        got = rows(a, b)
        for k, key in enumerate(ROWS):
            slow = got[key].verdict == "slower"
            found += slow and k in changed
            missed += (not slow) and k in changed
            wrong += slow and k not in changed
    assert false_comparisons <= 2  # alpha 0.01 x 40 = 0.4 expected
    assert wrong <= 2 and found >= 0.9 * (found + missed)


def test_a_duet_keeps_its_disturbed_pairs():
    a, b = ab_pair([1.0] * 12, 8, random.Random(4), mode="duet")
    data = json.loads(b.to_json())
    data["results"][0]["workers"][3]["disturbed"] = True
    duet = rows(a, RunRecord.from_dict(data, "b.json"))[ROWS[0]]
    data["run"]["ab"]["mode"] = "turns"
    turns = rows(a, RunRecord.from_dict(data, "b.json"))[ROWS[0]]
    assert (duet.head_n, duet.pairs_left_out) == (8, 0)
    assert (turns.head_n, turns.pairs_left_out) == (7, 1)
