"""studies/bench_host_probes.py's report on made-up rounds: which probe's fitted share
takes a workload's drift out, and by how much."""

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_host_probes.py"
spec = importlib.util.spec_from_file_location("bench_host_probes", SCRIPT)
probes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probes)


def rounds(host, flat):
    """Two rounds a minute; the host factor for each minute: mlp/predict moves with half
    of the memory probe's move, cnn/train with all of the canary's, latency not at all."""
    out = []
    for minute, (h, f) in enumerate(zip(host, flat)):
        for half in (0, 30):
            out.append({"t": 1000.0 + 60 * minute + half, "canary": 0.002 * h, "memory": 0.2 * h * h,
                        "native": 0.2 * f, "steal": 0.0, "mlp/predict": 0.25 * h,
                        "cnn/train": 0.3 * h, "mlp/latency": 0.0005})
    return out


def test_bins_take_each_minutes_median():
    binned = probes.bins([{"t": 0.0, "x": 1.0}, {"t": 10.0, "x": 3.0}, {"t": 59.0, "x": 2.0},
                          {"t": 61.0, "x": 5.0}], 60)
    assert binned == [{"t": 10.0, "x": 2.0}, {"t": 61.0, "x": 5.0}]


def test_explained_fits_the_probe_share():
    r, slope, raw, left = probes.explained([1.0, 1.1, 1.21], [1.0, 1.21, 1.4641])
    assert (round(r, 6), round(slope, 6), round(raw, 1), round(left, 6)) == (1.0, 0.5, 10.0, 0.0)
    # a workload that does not move: nothing to explain, nothing fitted
    assert probes.explained([2.0, 2.0], [1.0, 1.3]) == (0.0, 0.0, 0.0, 0.0)


def test_report_names_the_probe_that_follows(tmp_path):
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"backend": "torch", "cpu": 0, "calls": {},
                                "rounds": rounds([1.0, 1.1, 1.21], [1.0, 1.1, 1.0])}))
    lines = probes.report(path, 60)
    assert lines[0] == f"{path} (torch, CPU 0): 6 rounds, 3 bins of 60 s"
    assert lines[1] == "  probes' own spread: canary ±10.0%, memory ±21.0%, native ±10.0%, steal 0.0%-0.0%"
    assert lines[2].startswith("  mlp/predict  ±10.0% raw; canary r +1.00 slope 1.00 left ±0.0%; "
                               "memory r +1.00 slope 0.50 left ±0.0%; native r ")
    assert lines[3].startswith("  cnn/train    ±10.0% raw; canary r +1.00 slope 1.00 left ±0.0%")
    assert lines[4].startswith("  mlp/latency  ±0.0% raw; canary r +0.00 slope 0.00 left ±0.0%")


def test_report_reads_the_probes_a_file_has(tmp_path):
    """A file from after the dispatch probes were added reports them in PROBES' order;
    the file above, from before, reports only its own four (its lines are literal)."""
    path = tmp_path / "jax.json"
    host, flat = [1.0, 1.1, 1.21], [1.0, 1.0, 1.0]
    got = rounds(host, flat)
    for r, h in zip(got, [h for h in host for _ in (0, 30)]):
        r.update({"native1": 0.01 * h, "small": 0.02, "python": 0.1 * h * h})
    path.write_text(json.dumps({"backend": "jax", "cpu": 1, "calls": {}, "rounds": got}))
    lines = probes.report(path, 60)
    assert lines[1] == ("  probes' own spread: canary ±10.0%, memory ±21.0%, native ±0.0%, native1 ±10.0%, "
                        "small ±0.0%, python ±21.0%, steal 0.0%-0.0%")
    assert ("native1 r +1.00 slope 1.00 left ±0.0%; small r +0.00 slope 0.00 left ±10.0%; "
            "python r +1.00 slope 0.50 left ±0.0%") in lines[3]
