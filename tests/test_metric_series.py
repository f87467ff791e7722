"""Issue 13 on the analyse and present side: metric series (latency p99, peak
memory, energy), each point's environment and what changed, the site's data."""

from datetime import datetime, timedelta, timezone

from bench.analyse import envsummary
from bench.analyse.series import all_series, build_series, is_headline, metric_group, metric_series
from bench.config import Trends
from bench.present.site import site_index, write_site
from bench.present.table import build_rows
from tests.helpers import T0, failed, make_record, ok

NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)


def latency(model, p50, p99, host=400_000_000, device=None, energy=None):
    r = ok(model, "latency", p50, samples=[p50 * 0.9, p50, p50 * 1.1, p50 * 1.3], unit="ms", better="smaller",
           latency={"p50_ms": p50, "p90_ms": p50 * 1.2, "p99_ms": p99, "mean_ms": p50, "calls": 200,
                    "path": "predict_on_batch"},
           memory={"host_peak_bytes": host, "device_peak_bytes": device,
                   "unavailable": {} if device else {"device": "cpu"}})
    r["energy"] = {"joules_per_1000_samples": energy} if energy else {"unavailable": "rapl: no powercap"}
    return r


def gpu_env(driver="570.86.10", sm=2452, cuda="12.8"):
    return {"driver": driver, "accelerator": {"kind": "gpu", "cuda": cuda, "cudnn": "91002"},
            "backend_versions": {"keras-nightly": "3.16.0", "jax": "0.10.2"},
            "gpu": {"driver": driver, "devices": [{"name": "RTX 5070 Ti", "sm_clock_mhz": sm,
                                                    "memory_clock_mhz": 14001, "temperature_c": 50,
                                                    "throttle_reasons": [], "processes": [
                                                        {"pid": 7, "used_bytes": 2**30, "name": "x"}]}]},
            "cpu_state": {"model": "Ryzen", "load_average": [0.5, 0.4, 0.3]},
            "keras_config": {"floatx": "float32", "dtype_policy": "float32"}, "thread_settings": {"backend_threads": 8}}


def nights():
    """Three nights of jax on a GPU: train throughput plus latency; the driver changes on night 3."""
    recs = []
    for i, (p50, p99, dev, drv) in enumerate([(1.0, 2.0, 5_000_000, "570.86.10"), (1.1, 2.5, 5_000_000, "570.86.10"),
                                             (1.05, 2.2, 6_000_000, "575.51.02")]):
        recs.append(make_record([ok("cnn", "train", 1000.0 + i), latency("cnn", p50, p99, device=dev, energy=0.5 + i)],
                                device="rtx", started_at=T0 + timedelta(days=i), environment=gpu_env(driver=drv)))
    recs.append(make_record([ok("cnn", "train", 1100.0), failed("cnn", "latency", "timeout", "ran past 900 s")],
                            device="rtx", started_at=T0 + timedelta(days=3), environment=gpu_env()))
    return recs


def test_metric_series_keep_the_headline_series_as_they_are():
    recs = nights()
    headline = build_series(recs)
    assert sorted(headline) == [("jax", "rtx", "cnn", "latency"), ("jax", "rtx", "cnn", "train")]
    lat = headline[("jax", "rtx", "cnn", "latency")]
    assert (lat.unit, lat.better, lat.values()) == ("ms", "smaller", [1.0, 1.1, 1.05])
    assert lat.latest_failed()  # night 4 timed out: recorded as timeout, like any benchmark
    derived = metric_series(recs)
    assert sorted(k[3] for k in derived) == ["latency.device-memory", "latency.energy",
                                             "latency.host-memory", "latency.p99"]
    p99 = derived[("jax", "rtx", "cnn", "latency.p99")]
    assert (p99.unit, p99.better, p99.values()) == ("ms", "smaller", [2.0, 2.5, 2.2])
    assert p99.latest_failed() and p99.failures[-1].kind == "timeout"
    mem = derived[("jax", "rtx", "cnn", "latency.device-memory")]
    assert (mem.unit, mem.values()) == ("bytes", [5e6, 5e6, 6e6])
    assert derived[("jax", "rtx", "cnn", "latency.energy")].unit == "J/1000 samples"
    assert list(all_series(recs)) == sorted({**headline, **derived})


def test_missing_or_unavailable_figures_make_no_points():
    # (a figure of the wrong type never gets this far: the record reader refuses it)
    none = latency("mlp", 1.0, 2.0)
    del none["latency"]
    none["memory"] = {"host_peak_bytes": None, "device_peak_bytes": None, "unavailable": {"host": "x", "device": "y"}}
    rec = make_record([none, ok("mlp", "predict", 50.0)], started_at=T0)  # an old-style result: no metrics
    assert metric_series([rec]) == {}


def test_a_new_memory_estimator_starts_the_memory_series_alone_afresh():
    # 3 nights whose peaks were a median of workers, then 3 whose peaks are the least
    # worker's (run.protocol.memory "least", 5 % lower): only the memory points change protocol.
    recs = [make_record([ok("cnn", "train", 1000.0, memory={"host_peak_bytes": host, "device_peak_bytes": None,
                                                            "unavailable": {"device": "cpu"}})],
                        started_at=T0 + timedelta(days=i),
                        run={"protocol": {"name": "workers", "version": 3, **({"memory": "least"} if i >= 3 else {})}})
            for i, host in enumerate([800 << 20] * 3 + [760 << 20] * 3)]
    mem = metric_series(recs)[("jax", "local-cpu", "cnn", "train.host-memory")]
    assert [p.protocol for p in mem.points] == ["workers v3"] * 3 + ["workers v3, memory least"] * 3
    assert [p.protocol for p in build_series(recs)[("jax", "local-cpu", "cnn", "train")].points] == ["workers v3"] * 6


def test_metric_names_and_groups():
    assert [metric_group(m) for m in ("train", "latency", "latency.p99", "predict.host-memory", "train.energy")] \
        == ["throughput", "latency", "latency", "memory", "energy"]
    assert is_headline("latency") and is_headline("predict") and not is_headline("latency.p99")


def test_env_summary_reads_new_and_old_records():
    new = dict(envsummary.summary(gpu_env(), {"protocol": {"name": "workers", "version": 2}}))
    assert new["driver"] == "570.86.10" and new["cuda"] == "12.8" and new["cudnn"] == "91002"
    assert new["gpu"] == "RTX 5070 Ti" and new["sm_clock_mhz"] == "2452" and new["throttle"] == "none"
    assert new["gpu_processes"] == "1 (1024 MiB)" and new["backend"] == "jax 0.10.2"
    assert new["protocol"] == "workers v2" and new["threads"] == "8" and new["load"] == "0.5"
    # Before issue 13 the CUDA runtime sat under "driver": read as cuda, not as the driver.
    old = dict(envsummary.summary({"driver": "cuda 12.8", "cpu": "AMD EPYC", "gpu": "not a dict"}))
    assert old == {"cuda": "12.8", "cpu": "AMD EPYC"}


def test_changes_list_what_moved_but_not_what_moves_every_night():
    a = envsummary.summary(gpu_env())
    b = envsummary.summary({**gpu_env(driver="575.51.02", sm=1800),
                            "cpu_state": {"model": "Ryzen", "load_average": [3.0]}})
    assert envsummary.changes(a, b) == [("driver", "570.86.10", "575.51.02"), ("sm_clock_mhz", "2452", "1800")]
    # workers v4: the malloc thresholds every worker ran with are a change too
    c = envsummary.summary({**gpu_env(), "settings": v4_settings()})
    assert envsummary.changes(a, c) == [("malloc", None, "mmap 33554432, trim 1073741824")]
    # workers v8: glibc's tcache turned off through GLIBC_TUNABLES, among other tunables
    d = envsummary.summary({**gpu_env(), "settings": {**v4_settings(),
                                                      "GLIBC_TUNABLES": "glibc.mem.tagging=0:glibc.malloc.tcache_count=0"}})
    assert envsummary.changes(c, d) == [
        ("malloc", "mmap 33554432, trim 1073741824", "mmap 33554432, trim 1073741824, tcache_count 0")]
    # a hostile value is left out, never trusted
    assert "malloc" not in dict(envsummary.summary({"settings": {"GLIBC_TUNABLES": ["x"]}}))


def v4_settings() -> dict:
    """What a workers v4-v7 record lists as its settings: glibc's malloc thresholds."""
    return {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824", "BENCH_THREADS": "1"}


def test_site_data_has_metric_environment_and_spread():
    series = all_series(nights())
    index = site_index(series, build_rows(series, Trends()), generated_at=NOW)
    by_mode = {e["mode"]: e for e in index["series"]}
    assert {m: e["metric"] for m, e in by_mode.items()} == {
        "train": "throughput", "latency": "latency", "latency.p99": "latency", "latency.host-memory": "memory",
        "latency.device-memory": "memory", "latency.energy": "energy"}
    lat = by_mode["latency"]
    envs = [index["envs"][i] for i in _undelta(lat["env"])]
    assert [e["driver"] for e in envs] == ["570.86.10", "570.86.10", "575.51.02"]
    # the latest point's samples 0.945, 1.05, 1.155, 1.365 ms: quartiles 0.97125 and 1.3125
    assert lat["iqr"] == [0.97125, 1.3125] and lat["spread"] == round((1.3125 - 0.97125) / 1.1025, 6)
    assert index["env_changes"] == list(envsummary.CHANGES)


def test_the_sites_table_md_keeps_the_headline_rows_only(tmp_path):
    series = all_series(nights())
    write_site(tmp_path / "site", series, build_rows(series, Trends()), generated_at=NOW, plots=False)
    table = (tmp_path / "site" / "data" / "table.md").read_text()
    assert "| latency |" in table and "| train |" in table and "latency.p99" not in table


def _undelta(xs):
    out, acc = [], 0
    for x in xs:
        acc += x
        out.append(acc)
    return out
