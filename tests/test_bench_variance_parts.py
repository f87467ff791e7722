"""studies/bench_variance_parts.py on made-up kept sets: a row's move between invocations
against what its workers' own spread explains."""

import importlib.util
import json
import math
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_variance_parts.py"
spec = importlib.util.spec_from_file_location("bench_variance_parts", SCRIPT)
parts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(parts)

WORKERS = (0.98, 1.0, 1.02, 1.0)  # each invocation's workers about its level
REPEATS = (0.99, 1.01)  # each worker's two samples about its figure


def write_set(folder: Path, levels, repeats=REPEATS):
    """One torch record per invocation: mlp/train's workers spread about that invocation's level."""
    folder.mkdir(parents=True)
    for i, level in enumerate(levels):
        workers = [{"status": "ok", "value": level * f, "disturbed": False, "samples": [level * f * r for r in repeats]}
                   for f in WORKERS]
        workers.append({"status": "ok", "value": level * 0.5, "disturbed": True})  # not counted
        workers.append({"status": "ok", "value": level * 0.5, "disturbed": False, "rerun": True})  # nor this
        result = {"model": "mlp", "mode": "train", "status": "ok", "value": level, "workers": workers}
        record = {"target": {"backend": "torch"}, "run": {"started_at": f"2026-12-06T01:0{i}:00Z"},
                  "results": [result]}
        (folder / f"torch--local-cpu--run{i}-1.json").write_text(json.dumps(record))


def sd_of_logs(xs):
    logs = [math.log(x) for x in xs]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def test_an_invocation_level_move_is_more_than_the_workers_explain(tmp_path):
    write_set(tmp_path / "set", [1000.0, 1100.0, 1000.0, 900.0])
    between, from_workers = sd_of_logs([1000.0, 1100.0, 1000.0, 900.0]), sd_of_logs(WORKERS) / 2
    from_repeats = sd_of_logs(REPEATS) / math.sqrt(2) / 2  # a worker's 2 samples, then the 4 workers
    assert parts.report([tmp_path / "set"]) == [
        "1 rows; sd of the log headline across invocations (between) against the workers' sd within one "
        "over sqrt(workers) (from workers), and their repeats' (from repeats)",
        "mode      rows   between   from workers   between / from workers   from repeats",
        f"train     1      {between * 100:<9.1f} {from_workers * 100:<14.1f} {between / from_workers:<24.2f} "
        f"{from_repeats * 100:.1f}"]
    # the level moved, not the workers, and not a worker's repeats
    assert (round(between * 100, 1), round(from_workers * 100, 1), round(from_repeats * 100, 1)) == (8.2, 0.8, 0.5)


def test_a_row_in_one_invocation_or_with_too_few_workers_is_left_out(tmp_path):
    write_set(tmp_path / "one", [1000.0])
    assert parts.report([tmp_path / "one"])[0].startswith("no row with 3 clean workers in 2 invocations")


def test_workers_with_one_sample_each_leave_from_repeats_blank(tmp_path):
    write_set(tmp_path / "set", [1000.0, 1100.0], repeats=(1.0,))
    assert parts.report([tmp_path / "set"])[2].endswith(" -")
