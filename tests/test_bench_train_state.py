"""studies/bench_train_state.py: train calls trained on against calls from the committed start."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_run_backends import needs

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_train_state.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@needs("jax")
def test_prints_each_call_both_ways_with_its_denormal_share():
    proc = run("--backend", "jax", "--model", "mlp", "--steps", "3", "--calls", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "jax mlp/train, 2 calls of 3 steps each way"
    assert [line for line in lines if not line.startswith("  ")] == [lines[0], "trained on:", "from the committed start:"]
    calls = [line for line in lines if line.startswith("  call")]
    assert len(calls) == 4
    assert all(re.fullmatch(r"  call  [12]: +[\d,]+ samples/s  denormal +\d+\.\d\d %  loss \d\.\de[-+]\d\d", c) for c in calls)
    loss = [c.rsplit("loss ", 1)[1] for c in calls]
    assert loss[0] != loss[1]  # trained on: the second call starts where the first stopped
    assert loss[2] == loss[3]  # from the committed start: the same work twice


def test_rejects_a_step_count_below_one_in_one_line():
    proc = run("--steps", "0")
    assert proc.returncode != 0
    assert proc.stderr.strip() == "--steps 0 --calls 12: expected whole numbers >= 1"
