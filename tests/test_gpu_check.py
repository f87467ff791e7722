"""studies/gpu_check.sh: the GPU check for a lent machine, with a fake interpreter
that logs each `bench` call and writes a record where `bench run` would."""

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

from bench import config

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "gpu_check.sh"
FAKE = f"""#!/usr/bin/env bash
case "$1" in
  -) exec {sys.executable} "$@" ;;          # the config step runs for real
  -c) echo "fake jax and torch"; exit 0 ;;
esac
echo "$BENCH_DEVICE $*" >> "$GPU_LOG"
if [ "$3" = run ]; then echo '{{}}' > "$7/record-$(wc -l < "$GPU_LOG").json"; fi
"""


def run(tmp_path, *args):
    fake = tmp_path / "python"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    env = {**os.environ, "PYTHON": str(fake), "GPU_LOG": str(tmp_path / "calls.txt")}
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], env=env, capture_output=True, text=True)


def test_check_then_a_quick_run_on_a_gpu_device_with_everything_in_few_files(tmp_path):
    out = tmp_path / "out"
    done = run(tmp_path, out, 0)  # no seconds left for nightly invocations
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "calls.txt").read_text().splitlines() == [
        "gpu-check -m bench check", "gpu-check -m bench check --json",
        f"gpu-check -m bench run --backend jax,torch --out {out}/records --quick"]
    assert sorted(p.name for p in out.iterdir()) == ["check.json", "check.txt", "log.txt", "records.tar.gz"]
    with tarfile.open(out / "records.tar.gz") as tar:
        assert sorted(tar.getnames()) == ["benchmarks.yaml", "records", "records/record-3.json"]
        tar.extract("benchmarks.yaml", tmp_path)
    # the device it ran as is a valid gpu device of the project's own config
    device = config.load(tmp_path / "benchmarks.yaml").devices["gpu-check"]
    assert (device.backends, device.accelerator, device.local_only, device.threads) == (("jax", "torch"), "gpu", True, None)
    assert "0 nightly invocations after the first" in (out / "log.txt").read_text()


def test_bad_arguments_get_one_line_naming_them(tmp_path):
    usage = "gpu_check: usage: gpu_check.sh OUT [SECONDS [nightly|quick]]\n"
    assert (run(tmp_path).returncode, run(tmp_path).stderr) == (2, usage)
    done = run(tmp_path, tmp_path / "out", "five")
    assert (done.returncode, done.stderr) == (2, "gpu_check: SECONDS is 'five'; expected a whole number of seconds\n")
    done = run(tmp_path, tmp_path / "out", 60, "full")
    assert (done.returncode, done.stderr) == (2, "gpu_check: the protocol is 'full'; expected nightly or quick\n")
    assert not (tmp_path / "calls.txt").exists()
