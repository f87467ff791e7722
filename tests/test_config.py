from pathlib import Path

import pytest
import yaml

from bench import config


def test_the_tests_config_describes_the_homelab():
    c = config.load()  # tests/fixtures/benchmarks.yaml ($BENCH_CONFIG, tests/conftest.py)
    assert c.path.parent.name == "fixtures"
    assert c.device("rtx-5070-ti").backends == ("jax", "torch")
    assert c.device("apple-m4").backends == ("mlx",)
    assert c.device("apple-m4-cpu").backends == ("mlx-main",)
    assert c.device("ryzen-5800x3d").backends == ("openvino",)
    assert c.device("local-cpu").local_only
    assert c.backend("mlx-main").keras_backend == "mlx"
    assert c.trends.min_points == 5 and c.trends.stale_days == 3


def test_the_shipped_config_is_valid_and_is_the_packages_default(tmp_path, monkeypatch):
    shipped = config.load(config.DEFAULT_PATH)
    assert shipped.devices and shipped.backends
    # local-cpu: one CPU per worker process (benchmarks.yaml says why)
    assert (shipped.devices["local-cpu"].worker_cpus, shipped.harness.canary_tolerance) == (1, 3.0)
    assert shipped.harness.spread_goal is None  # no extra repeats for disagreement (benchmarks.yaml: why)
    # every worker with glibc's malloc thresholds fixed (benchmarks.yaml: why)
    assert shipped.harness.worker_env() == {"MALLOC_MMAP_THRESHOLD_": "33554432",
                                            "MALLOC_TRIM_THRESHOLD_": "1073741824",
                                            "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}
    # bench/benchmarks.yaml is a link to the repository's file users edit: one file.
    assert config.DEFAULT_PATH.resolve() == config.REPO_ROOT / "benchmarks.yaml"
    monkeypatch.delenv(config.ENV_VAR)
    monkeypatch.chdir(tmp_path)
    assert config.default_path() == config.DEFAULT_PATH
    (tmp_path / "benchmarks.yaml").write_text("version: 1\n")
    assert config.default_path() == tmp_path / "benchmarks.yaml"
    monkeypatch.setenv(config.ENV_VAR, "/elsewhere.yaml")
    assert config.default_path() == config.Path("/elsewhere.yaml")


def _raw():
    return yaml.safe_load(config.default_path().read_text())


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["devices"]["apple-m4"].update(backends="mlx"), "key 'devices.apple-m4.backends' is 'mlx'; expected a list"),
    (lambda r: r["devices"]["apple-m4"].update(backends=["nope"]), "'devices.apple-m4.backends' names 'nope'"),
    (lambda r: r["models"]["cnn"].update(batch_size=0), "key 'models.cnn.batch_size' is 0; expected a positive integer"),
    (lambda r: r["trends"].update(min_change="5%"), "key 'trends.min_change' is '5%'; expected a positive number"),
    (lambda r: r["backends"]["jax"].pop("keras_backend"), "'backends.jax.keras_backend' is None"),
    (lambda r: r.update(version=9), "key 'version' is 9"),
    (lambda r: r["devices"]["local-cpu"].update(colour="red"), "unknown key 'devices.local-cpu.colour'"),
    (lambda r: r["devices"]["apple-m4"].update(install={"jax": ["jax[metal]"]}),
     "key 'devices.apple-m4.install' names 'jax'; expected one of this device's backends "
     "(devices.apple-m4.backends): mlx"),
    (lambda r: r["devices"]["local-cpu"].update(reference=3.13),
     "key 'devices.local-cpu.reference' is 3.13; expected a keras-nightly version in quotes"),
    (lambda r: r["devices"]["local-cpu"].update(reference="3.13; rm -rf /"),
     "key 'devices.local-cpu.reference' is '3.13; rm -rf /'"),
    (lambda r: r["devices"]["local-cpu"].update(worker_cpus=0),
     "key 'devices.local-cpu.worker_cpus' is 0; expected a positive integer"),
    (lambda r: r["harness"].update(spread_goal=0),
     "key 'harness.spread_goal' is 0; expected a positive number"),
    (lambda r: r["harness"].update(canary_tolerance=1),
     "key 'harness.canary_tolerance' is 1; expected a number above 1 (times the fastest canary)"),
    (lambda r: r["harness"].update(malloc_mmap_threshold="32M"),
     "key 'harness.malloc_mmap_threshold' is '32M'; expected a positive integer"),
    (lambda r: r["harness"].update(malloc_trim_threshold=1.5),
     "key 'harness.malloc_trim_threshold' is 1.5; expected a positive integer"),
    (lambda r: r["harness"].update(malloc_tcache_count=-1),
     "key 'harness.malloc_tcache_count' is -1; expected a whole number, 0 or more"),
    (lambda r: r["harness"].update(malloc_tcache_count=True),
     "key 'harness.malloc_tcache_count' is True; expected a whole number, 0 or more"),
    (lambda r: r["devices"]["local-cpu"].update(native="yes"),
     "key 'devices.local-cpu.native' is 'yes'; expected true or false"),
])
def test_malformed_config_is_refused_with_key_and_form(mutate, message):
    raw = _raw()
    mutate(raw)
    with pytest.raises(config.ConfigError) as e:
        config.parse(raw, "benchmarks.yaml")
    assert message in str(e.value)


def test_malloc_settings_become_worker_env_only_when_set():
    raw = _raw()
    raw["harness"].pop("malloc_mmap_threshold", None)
    raw["harness"].pop("malloc_trim_threshold", None)
    raw["harness"].pop("malloc_tcache_count", None)
    assert config.parse(raw, "benchmarks.yaml").harness.worker_env() == {}
    raw["harness"]["malloc_trim_threshold"] = 4096
    assert config.parse(raw, "benchmarks.yaml").harness.worker_env() == {"MALLOC_TRIM_THRESHOLD_": "4096"}
    # a count of 0 is a setting (the cache off), carried as a glibc tunable
    raw["harness"]["malloc_tcache_count"] = 0
    assert config.parse(raw, "benchmarks.yaml").harness.worker_env() == {
        "MALLOC_TRIM_THRESHOLD_": "4096", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}


def test_unknown_label_lists_valid_ones():
    with pytest.raises(config.ConfigError, match="unknown backend 'jaxx'; expected one of: jax, torch"):
        config.load().backend("jaxx")


def test_a_device_reference_build_reaches_the_matrix():
    from bench.ci.matrix import build_matrix

    raw = _raw()
    raw["devices"]["ryzen-5800x3d"]["reference"] = "3.13.0.dev2026110103"
    cfg = config.parse(raw, "benchmarks.yaml")
    assert cfg.device("ryzen-5800x3d").reference == "3.13.0.dev2026110103"
    assert {e.device: e.to_json()["reference"] for e in build_matrix(cfg)}["ryzen-5800x3d"] == "3.13.0.dev2026110103"
    assert {e.to_json()["reference"] for e in build_matrix(config.load())} == {""}  # the tests' config: none


def test_the_repositorys_every_matrix_device_runs_beside_a_published_keras_nightly():
    """Issue 53: a reference on by default, named by a real keras-nightly version
    (3.16.0.dev2026092004 is installed beside this VM's nightly); the Quick start's
    local-cpu opts in (docs/protocol.md, "The reference build")."""
    from bench.ci.matrix import build_matrix

    shipped = config.load(Path(__file__).resolve().parents[1] / "benchmarks.yaml")
    assert {e.device: e.to_json()["reference"] for e in build_matrix(shipped)} == {
        d: "3.16.0.dev2026092004" for d in ("rtx-5070-ti", "apple-m4", "apple-m4-cpu", "ryzen-5800x3d")}
    assert shipped.device("local-cpu").reference is None
