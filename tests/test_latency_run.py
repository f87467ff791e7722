"""Mode "latency" for real: `bench run --modes latency` on jax (a subprocess, ~30 s)."""

import importlib.util

import pytest

from bench import config

from tests.test_run_backends import bench_run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="not installed: jax")]


def test_latency_mode_records_percentiles_memory_energy_and_the_machine(tmp_path):
    (rec,), _ = bench_run(tmp_path, "--backend", "jax", "--models", "mlp", "--modes", "latency",
                          "--quick", "--workers", "2")
    (r,) = rec.data["results"]
    assert (r["status"], r["unit"], r["better"], r["batch_size"]) == ("ok", "ms", "smaller", 1)
    lat = r["latency"]
    ok = [w for w in r["workers"] if w["status"] == "ok"]
    # the clean workers' blocks (a worker in a slow CPU state throughout is flagged and rerun)
    assert lat["path"] == "predict_on_batch" and 1 <= lat["workers"] <= len(ok)
    # --quick: quick_repeats clean rounds of 200 calls per worker (all rounds when fewer were clean)
    wanted = config.load().harness.quick_repeats  # the tests' config (tests/fixtures/benchmarks.yaml)
    assert lat["rounds"] >= wanted * lat["workers"] and lat["calls"] == 200 * lat["rounds"], \
        (lat, [(w["status"], w.get("disturbed"), w.get("samples")) for w in r["workers"]])
    assert 0 < lat["p50_ms"] <= lat["p90_ms"] <= lat["p99_ms"]
    assert len(r["samples"]) == lat["rounds"]  # one p50 per kept round of the clean workers
    assert all(w["samples"] for w in ok)
    assert r["quality"]["held_out_accuracy"] >= 0.9  # the committed weights, gated before timing
    mem = r["memory"]
    assert mem["host_peak_bytes"] > 50 * 2**20 and mem["device_peak_bytes"] is None  # jax on CPU
    assert "device" in mem["unavailable"]
    assert set(r["energy"]) in ({"unavailable"}, {"joules_per_1000_samples", "source"})
    env = rec.environment
    assert env["keras_config"]["floatx"] == "float32"
    assert set(env["gpu"]) == {"unavailable"} or "devices" in env["gpu"]
    assert env["cpu_state"]["logical_cpus"] >= 1 and "cpu_state" in env["telemetry_end"]
