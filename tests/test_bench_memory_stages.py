"""studies/bench_memory_stages.py: reading a memory trace, and the trace a real worker writes."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.measure import usage

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
import bench_memory_stages as ms  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# Two processes of the rotated order: 11 ran cnn/predict then mlp/train, 12 only cnn/predict,
# whose heap jumped in its second call.
TRACE = """\
11 reset:cnn/predict 358400 184320 546816 2
11 build 502784 194560 697344 2
11 compile 519168 204800 723968 2
11 gate 519168 204800 724992 2
11 call:126 519168 204800 724992 2
11 call:126 522240 205824 728064 2
11 verify 522240 205824 728064 2
12 reset:cnn/predict 358400 184320 546816 2
12 build 502784 194560 697344 2
half a line
12 compile 519168 204800 723968 2
12 gate 519168 204800 724992 2
12 call:126 519168 204800 724992 3
12 call:126 774144 205824 980992 2
12 verify 774144 205824 980992 2
11 reset:mlp/train 227328 204800 432128 2
11 build 350208 204800 555008 2
"""


def test_the_report_shows_where_the_workers_part(capsys):
    workers = ms.parse(TRACE.splitlines(), "t.txt")
    assert capsys.readouterr().err == (
        "t.txt:10: not a trace line (pid tag RssAnon RssFile VmHWM Threads): 'half a line'\n")
    assert ms.report(workers) == [
        "cnn/predict: RssAnon MiB after each stage; calls: first -> last call; peak: VmHWM",
        "  11: reset 350  build 491  compile 507  gate 507  calls 507 -> 510 (2)  verify 510  peak 711  threads 2",
        "  12: reset 350  build 491  compile 507  gate 507  calls 507 -> 756 (2)  verify 756  peak 958  threads 2-3",
        "  reset    350-350 MiB over 2 workers",
        "  build    491-491 MiB over 2 workers",
        "  compile  507-507 MiB over 2 workers",
        "  gate     507-507 MiB over 2 workers",
        "  calls    510-756 MiB over 2 workers",
        "  verify   510-756 MiB over 2 workers",
        "  peak     711-958 MiB",
        "mlp/train: RssAnon MiB after each stage; calls: first -> last call; peak: VmHWM",
        "  11: reset 222  build 342  peak 542  threads 2",
        "  reset    222-222 MiB over 1 workers",
        "  build    342-342 MiB over 1 workers",
        "  peak     542-542 MiB",
    ]


def test_from_a_missing_or_empty_trace_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match=r"--from .*nope.txt: no such trace file"):
        ms.main(["--from", str(tmp_path / "nope.txt")])
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(SystemExit, match="no worker traced a benchmark"):
        ms.main(["--from", str(tmp_path / "empty.txt")])


CHILD = r'''
import sys
from bench.measure import child
spec = child.Spec(backend="jax", keras_backend="jax", model="mlp", mode="predict", batch_size=256, repeats=3,
                  min_repeat_seconds=0.05, warmup_steps=1, result_path="")
print(child.execute(spec)["result"]["status"])
'''


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="not installed: jax")
def test_a_worker_traces_every_stage_and_call_of_its_benchmark(tmp_path):
    trace = tmp_path / "trace.txt"
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "KERAS_BACKEND": "jax", usage.TRACE_VAR: str(trace)})
    assert proc.returncode == 0 and proc.stdout.split()[-1] == "ok", proc.stderr[-3000:]
    (w,) = ms.parse(trace.read_text().splitlines())
    assert w.bench == "mlp/predict" and set(w.anon) == set(ms.STAGES)
    assert len(w.calls) >= 3 + 1  # warm-up, (calibration,) 3 timed repeats
    assert w.peak >= max(w.anon.values()) > 100 * 1024


def test_speed_pairs_each_traced_worker_with_its_figure_backend_by_backend(tmp_path, capsys):
    # Two runs as bench_stability keeps them: jax's first, then torch's; each 4 workers of
    # cnn/predict, traced in the order they ran. jax's heap barely moves; torch's grows
    # in the workers that read slower.
    def record(name, backend, started, medians):
        workers = [{"samples": [m, m], "status": "ok"} for m in medians]
        (tmp_path / name).write_text(json.dumps({
            "run": {"started_at": started}, "target": {"backend": backend},
            "results": [{"model": "cnn", "mode": "predict", "workers": workers},
                        {"model": "mlp", "mode": "train", "workers": workers}]}))

    record("b.json", "jax", "2026-12-06T01:20:00Z", [20e3, 21e3, 22e3, 23e3])
    record("a.json", "torch", "2026-12-06T01:23:00Z", [21e3, 20e3, 17e3, 16e3])
    (tmp_path / "broken.json").write_text("{")
    growth_mib = [0, 1, 2, 3, 0, 2, 100, 250]
    trace = []
    for pid, grown in enumerate(growth_mib):
        trace += [f"{pid} reset:cnn/predict 358400 0 546816 2", f"{pid} gate 512000 0 724992 2",
                  f"{pid} call:126 {512000 + grown * 1024} 0 980992 2"]
    speeds = ms.record_workers(tmp_path)
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'broken.json'}: skipped, not a record")
    assert ms.speed_lines(ms.parse(trace), speeds) == [
        "jax cnn/predict: 4 workers, heap growth over the timed calls against speed: Spearman's rho +1.00 "
        "(p 0.000); grew 0-1 MiB: 20.0-21.0k samples/s; grew 2-3 MiB: 22.0-23.0k",
        "torch cnn/predict: 4 workers, heap growth over the timed calls against speed: Spearman's rho -1.00 "
        "(p 0.000); grew 0-2 MiB: 20.0-21.0k samples/s; grew 100-250 MiB: 16.0-17.0k",
        "mlp/train: 0 traced workers against 8 in the records; not paired",
    ]
