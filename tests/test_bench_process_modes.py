"""studies/bench_process_modes.py's summaries, on made-up process figures: which
spread points at the batches' addresses, the model's memory or the layout."""

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
import bench_process_modes as pm  # noqa: E402


def test_an_offset_the_backend_minds_stands_out_in_every_process_whatever_its_speed():
    processes = [{"median": {"0": 100.0, "16": 90.0, "64": 100.0}},   # a slow process ...
                 {"median": {"0": 200.0, "16": 180.0, "64": 200.0}}]  # ... and a fast one
    assert pm.by_offset(processes) == pytest.approx({"0": 0.0, "16": -0.1, "64": 0.0})
    assert pm.summary("alignment", processes) == [
        "alignment: each offset's median call against its process's, median over 2 processes: "
        "0 +0.0 %, 16 -10.0 %, 64 +0.0 %",
        "alignment: the processes' own medians 100.0 % apart",
    ]


def test_instances_compare_models_within_a_process_with_the_processes():
    processes = [{"median": {"0": 100.0, "1": 102.0}}, {"median": {"0": 120.0, "1": 120.0}}]
    within, between = pm.within_and_between(processes)
    assert within == pytest.approx(0.01)  # the median of 2 % and 0 %
    assert between == pytest.approx(120.0 / 101.0 - 1)
    assert pm.summary("instances", processes) == [
        "instances: models in one process 1.0 % apart (median over 2); the processes 18.8 % apart"]


def test_layout_shows_each_kind_of_process_apart():
    processes = [{"layout": "random", "median": 20_000.0}, {"layout": "fixed", "median": 19_000.0},
                 {"layout": "random", "median": 23_000.0}, {"layout": "fixed", "median": 19_190.0}]
    assert pm.summary("layout", processes) == [
        "layout random: 2 processes, medians 20.0k, 23.0k: 15.0 % apart",
        "layout fixed: 2 processes, medians 19.0k, 19.2k: 1.0 % apart",
    ]
    assert pm.summary("layout", []) == ["layout: no process finished"]


def test_hugepages_compares_each_huge_process_with_the_small_one_just_before_it():
    processes = [{"layout": "small", "median": 20_000.0, "huge_mib": 128.0},
                 {"layout": "huge", "median": 21_000.0, "huge_mib": 320.0},   # +5 %
                 {"layout": "small", "median": 16_000.0, "huge_mib": 130.0},  # a slow moment ...
                 {"layout": "huge", "median": 16_160.0, "huge_mib": 334.0},   # ... for both: +1 %
                 {"layout": "huge", "median": 30_000.0, "huge_mib": 330.0}]   # its small one failed: no pair
    assert pm.summary("hugepages", processes) == [
        "hugepages small: 2 processes, medians 20.0k, 16.0k: 25.0 % apart; AnonHugePages 128-130 MiB",
        "hugepages huge: 3 processes, medians 21.0k, 16.2k, 30.0k: 85.6 % apart; AnonHugePages 320-334 MiB",
        "hugepages: huge against the small process before it, 2 pairs: median +3.0 %, +1.0 to +5.0 %",
    ]


def spawned(monkeypatch, check: str, sides: tuple[str, ...]) -> tuple[list[dict], list[dict]]:
    """Spawn one process of each side through a fake subprocess.run: the environments
    they were given, and what spawn made of their (made-up) figures."""
    seen = []

    def fake_run(cmd, env, **kw):  # a fake measured process: records its env, prints its figures
        seen.append(env)
        return subprocess.CompletedProcess(cmd, 0, stdout='{"median": 20000.0, "huge_mib": 2.0}\n', stderr="")

    monkeypatch.setattr(pm.subprocess, "run", fake_run)
    args = pm.argparse.Namespace(model="cnn", calls=1, backend="torch", timeout=10)
    return seen, [pm.spawn(check, args, side) for side in sides]


def test_only_a_huge_process_asks_glibc_and_torch_for_huge_pages(monkeypatch):
    for var in pm.HUGE_ENV:
        monkeypatch.delenv(var, raising=False)
    seen, (small, huge) = spawned(monkeypatch, "hugepages", ("small", "huge"))
    assert (small["layout"], huge["layout"]) == ("small", "huge")
    # both as the workers run (workers v8: glibc's tcache off); only the huge one asks for huge pages
    assert seen[0]["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=0" and seen[0].get("THP_MEM_ALLOC_ENABLE") is None
    assert seen[1]["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1"
    assert seen[1]["THP_MEM_ALLOC_ENABLE"] == "1"
    assert seen[1]["MALLOC_MMAP_THRESHOLD_"] == seen[0]["MALLOC_MMAP_THRESHOLD_"]  # otherwise as the workers run


def test_callbacks_compares_each_sync_process_with_the_async_one_just_before_it():
    def proc(side, median, threads, anon, peak):
        return {"layout": side, "median": median, "pool_threads": threads, "anon_mib": anon, "peak_mib": peak}

    processes = [proc("async", 20_000.0, 3, 510.0, 720.0), proc("sync", 20_400.0, 0, 508.0, 709.0),   # +2 %
                 proc("async", 17_000.0, 6, 602.0, 802.0), proc("sync", 17_170.0, 0, 508.2, 709.4)]  # +1 %
    assert pm.summary("callbacks", processes) == [
        "callbacks async: 2 processes, medians 20.0k, 17.0k: 17.6 % apart; "
        "pool threads 3-6; RssAnon after the calls 510-602 MiB, peak 720-802 MiB",
        "callbacks sync: 2 processes, medians 20.4k, 17.2k: 18.8 % apart; "
        "pool threads 0-0; RssAnon after the calls 508-508 MiB, peak 709-709 MiB",
        "callbacks: sync against the async process before it, 2 pairs: median +1.5 %, +1.0 to +2.0 %",
    ]


def test_only_a_sync_process_asks_for_callbacks_on_the_main_thread(monkeypatch):
    monkeypatch.delenv(pm.SYNC_VAR, raising=False)
    seen, _ = spawned(monkeypatch, "callbacks", ("async", "sync"))
    assert pm.SYNC_VAR not in seen[0] and seen[1][pm.SYNC_VAR] == "1"
    assert seen[1]["MALLOC_MMAP_THRESHOLD_"] == seen[0]["MALLOC_MMAP_THRESHOLD_"]  # otherwise as the workers run


def test_a_thread_pool_reports_how_many_threads_it_started_as_it_shuts_down(monkeypatch):
    import concurrent.futures as cf
    import threading

    monkeypatch.setattr(cf.ThreadPoolExecutor, "shutdown", cf.ThreadPoolExecutor.shutdown)  # undone after the test
    seen = pm._count_pool_threads()
    gate = threading.Event()
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):  # each task blocks until released, so none is idle when the next arrives
            pool.submit(gate.wait)
        gate.set()
    assert seen == [3]


def test_tcache_shows_each_kinds_heap_against_what_is_in_use():
    def proc(side, median, heap, peak):
        return {"layout": side, "median": median, "heap_mib": heap, "inuse_mib": 170.0, "peak_mib": peak}

    processes = [proc("cached", 18_000.0, 304.0, 871.0), proc("uncached", 19_800.0, 192.0, 759.0),   # +10 %
                 proc("cached", 19_400.0, 192.0, 759.0), proc("uncached", 19_400.0, 187.0, 754.0)]   # +0 %
    assert pm.summary("tcache", processes) == [
        "tcache cached: 2 processes, medians 18.0k, 19.4k: 7.8 % apart; heap 192-304 MiB, in use 170-170 MiB; "
        "peak 759-871 MiB",
        "tcache uncached: 2 processes, medians 19.8k, 19.4k: 2.1 % apart; heap 187-192 MiB, in use 170-170 MiB; "
        "peak 754-759 MiB",
        "tcache: uncached against the cached process before it, 2 pairs: median +5.0 %, +0.0 to +10.0 %",
    ]


def test_a_cached_process_runs_without_the_tunable_whatever_the_config_says(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")  # as workers v8 run
    seen, _ = spawned(monkeypatch, "tcache", ("cached", "uncached"))
    assert "GLIBC_TUNABLES" not in seen[0] and seen[1]["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=0"


def test_the_heap_figures_come_from_glibc_where_it_counts_them():
    heap = pm._heap_mib()
    if heap["heap_mib"] == 0:
        pytest.skip("no mallinfo2 in this C library")
    assert 0 < heap["inuse_mib"] <= heap["heap_mib"]


def test_unknown_checks_are_named_before_anything_runs():
    with pytest.raises(SystemExit, match="--checks: unknown speed; expected some of alignment, instances, layout, hugepages, callbacks, tcache"):
        pm.main(["--checks", "layout,speed"])
    with pytest.raises(SystemExit, match="only the torch backend"):
        pm.main(["--backend", "jax", "--checks", "alignment"])
