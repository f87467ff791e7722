"""studies/bench_host_phases.py on made-up kept records: the reference workload
minute by minute and the longest slow stretch."""

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_host_phases.py"
spec = importlib.util.spec_from_file_location("bench_host_phases", SCRIPT)
phases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(phases)


def write(folder: Path, refs_by_minute: list[list[float]]):
    """One record whose workers start 10 s into each minute, with these reference times."""
    folder.mkdir(parents=True, exist_ok=True)
    workers = [{"status": "ok", "value": 1.0, "reference_seconds": ref, "window": [1000.0 + 60 * m + 10, 1000.0 + 60 * m + 20]}
               for m, refs in enumerate(refs_by_minute) for ref in refs]
    record = {"target": {"backend": "jax"}, "run": {"started_at": "2026-12-06T01:00:00Z"}, "results": [{"workers": workers}]}
    (folder / "jax--local-cpu--run1-1.json").write_text(json.dumps(record))


def test_minutes_over_the_fast_level_and_the_longest_slow_stretch(tmp_path):
    # ten workers at 2.0 ms make the 10th percentile 2.0; minutes 2-4 read 2.5 ms (1.25x),
    # minute 6 2.4 ms (1.20x); the rest 2.1 (1.05x), inside 1.15
    write(tmp_path / "set", [[2.0] * 5, [2.1, 2.1, 2.0, 2.0, 2.0], [2.5] * 3, [2.5] * 3, [2.5] * 3,
                             [2.1] * 3, [2.4] * 3, [2.1] * 3])
    assert phases.report(tmp_path / "set", 1.15) == [
        "set: 28 workers over 8 minutes; slow (over 1.15x the fast level) 4 minutes, longest 3 in a row (minutes 2-4)",
        "  1.00 1.00 1.25 1.25 1.25 1.05 1.20 1.05"]


def test_a_set_without_slow_minutes_and_a_missing_folder(tmp_path, capsys):
    write(tmp_path / "calm", [[2.0] * 4, [2.1] * 4])
    assert phases.report(tmp_path / "calm", 1.15)[0].endswith("slow (over 1.15x the fast level) 0 minutes, "
                                                               "longest 0 in a row (none)")
    assert phases.main([str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"bench_host_phases: not a folder: {tmp_path / 'nope'}\n"
