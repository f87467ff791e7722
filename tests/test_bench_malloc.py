"""studies/bench_malloc.py: its glibc-side config, and its report on made-up records."""

import sys
from pathlib import Path

import yaml

from bench import config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
import bench_malloc as bm  # noqa: E402


def test_the_glibc_side_is_the_shipped_config_without_the_malloc_settings(tmp_path):
    path = bm.glibc_config(tmp_path)
    glibc = config.parse(yaml.safe_load(path.read_text()), str(path))
    shipped = config.load(config.DEFAULT_PATH)
    assert glibc.harness.worker_env() == {} and shipped.harness.worker_env()
    assert (glibc.devices, glibc.harness.workers) == (shipped.devices, shipped.harness.workers)


def worker(value, peak_mib):
    return {"value": value, "status": "ok", "disturbed": False, "host_peak_bytes": peak_mib << 20}


def record(hour, fixed, values, peaks):
    settings = {"MALLOC_MMAP_THRESHOLD_": "33554432"} if fixed else {"BENCH_THREADS": "1"}
    return {"target": {"backend": "torch"}, "environment": {"settings": settings},
            "run": {"started_at": f"2026-12-05T0{hour}:00:00Z"},
            "results": [{"model": "cnn", "mode": "predict", "status": "ok", "value": sorted(values)[1],
                         "workers": [worker(v, p) for v, p in zip(values, peaks)]}]}


def test_the_report_splits_runs_by_their_settings_and_compares_the_sides(capsys):
    bm.report([record(1, False, [9000, 20000, 21000], [700, 710, 900]),
               record(2, True, [20000, 20400, 20200], [690, 695, 700]),
               record(3, False, [10000, 12000, 22000], [720, 800, 1000]),
               record(4, True, [20600, 20000, 20400], [692, 700, 705])])
    assert capsys.readouterr().out.splitlines() == [
        "torch cnn/predict",
        "  glibc: 20,000, 12,000 (±25.0%); workers within a run +127% (worst +133%); least peak 700-720 MiB (±1.4%)",
        "  fixed: 20,200, 20,400 (±0.5%); workers within a run +3% (worst +3%); least peak 690-692 MiB (±0.1%)",
        "  fixed against glibc: +26.9% (samples/s)",
    ]
