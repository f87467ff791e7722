"""studies/bench_turns.sh: two checkouts' `bench run`s in turns, with a fake
interpreter that logs where and how it was started."""

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_turns.sh"
FAKE = """#!/usr/bin/env bash
echo "$(basename "$PWD") $*" >> "$TURNS_LOG"
[ "$(basename "$PWD")" != broken ]
"""


def checkout(root: Path, name: str) -> Path:
    (root / name / "bench").mkdir(parents=True)
    (root / name / "bench" / "__main__.py").write_text("")
    return root / name


def run(tmp_path, *args, backends=""):
    fake = tmp_path / "python"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    env = {**os.environ, "BENCH_PYTHON": str(fake), "TURNS_LOG": str(tmp_path / "calls.txt"), "BACKENDS": backends}
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], env=env, capture_output=True, text=True)


def test_the_checkouts_take_turns_each_from_its_own_folder_into_its_own_records(tmp_path):
    old, new = checkout(tmp_path, "old"), checkout(tmp_path, "new")
    done = run(tmp_path, old, new, tmp_path / "out", 2, "--modes", "latency", backends="jax openvino")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls == [f"{where} -m bench run --device local-cpu --backend {b} --out {out}/{side} --modes latency"
                     for _ in range(2) for where, side in (("old", "a"), ("new", "b")) for b in ("jax", "openvino")]
    assert [line.split(" wall=")[0] for line in done.stdout.splitlines()] == [
        f"round {r} {side} {b}: rc=0" for r in (1, 2) for side in "ab" for b in ("jax", "openvino")]


def test_a_failing_run_is_reported_and_the_turns_go_on(tmp_path):
    broken, new = checkout(tmp_path, "broken"), checkout(tmp_path, "new")
    done = run(tmp_path, broken, new, tmp_path / "out", 1)
    assert done.returncode == 0
    assert [line.split(" wall=")[0] for line in done.stdout.splitlines()] == ["round 1 a all: rc=1", "round 1 b all: rc=0"]
    assert (tmp_path / "calls.txt").read_text().splitlines()[1] == f"new -m bench run --device local-cpu --out {tmp_path}/out/b"


def test_bad_arguments_get_one_line_naming_them(tmp_path):
    new = checkout(tmp_path, "new")
    done = run(tmp_path, tmp_path / "nope", new, tmp_path / "out", 1)
    assert (done.returncode, done.stderr) == (2, f"bench_turns: {tmp_path}/nope is not a checkout of this project "
                                                  "(no bench/__main__.py)\n")
    done = run(tmp_path, new, new, tmp_path / "out", "three")
    assert (done.returncode, done.stderr) == (2, "bench_turns: ROUNDS is 'three'; expected a whole number, 1 or more\n")
    assert run(tmp_path, new).returncode == 2
    assert not (tmp_path / "calls.txt").exists()
