"""Eight `python -m bench publish` processes race on one local bare repository.

A pre-receive hook holds the first pushes until two have arrived, so at least
two publishers push on the same tip and one of them must be rejected and
retry: the race is certain, not left to the scheduler.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from bench.records.record import load, write
from tests.helpers import T0, make_record, ok
from tests.test_publish import BRANCH, commit_count, files_on_branch, git, tip

PUBLISHERS, PER_PUBLISHER = 8, 5
REPO_ROOT = Path(__file__).resolve().parents[1]

BARRIER_HOOK = """#!/bin/sh
# pre-receive: hold each push until two pushes are in (at most 20 s).
cat >/dev/null
touch "{arrivals}/$$"
i=0
while [ "$(ls "{arrivals}" | wc -l)" -lt 2 ] && [ "$i" -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
exit 0
"""


def publisher_folders(root: Path) -> list[Path]:
    folders = []
    for p in range(PUBLISHERS):
        folder = root / f"publisher-{p}"
        for i in range(PER_PUBLISHER):
            rec = make_record([ok("cnn", "train", 100.0 + 10 * p + i)], backend=f"b{p}",
                              run_id=f"run{p}-{i}", started_at=T0 + timedelta(days=i))
            write(rec, folder)
        folders.append(folder)
    return folders


def start(bare: Path, folder: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bench", "publish", "--repo", str(bare), str(folder)],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(300)
def test_eight_racing_publishers_land_all_forty_records_exactly_once(tmp_path):
    bare = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    (tmp_path / "arrivals").mkdir()
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(BARRIER_HOOK.format(arrivals=tmp_path / "arrivals"))
    hook.chmod(0o755)
    folders = publisher_folders(tmp_path)

    procs = [start(bare, f) for f in folders]
    outcomes = [(p.wait(timeout=240), *p.communicate()) for p in procs]

    for code, out, err in outcomes:
        assert code == 0, err
        assert [ln.split()[0] for ln in out.splitlines()].count("added") == PER_PUBLISHER
    retries = sum(err.count("push rejected") for _, _, err in outcomes)
    assert retries >= 1  # the barrier made two pushes race: one was rejected and retried

    expected = {}
    for folder in folders:
        for f in sorted(folder.glob("*.json")):
            rec = load(f)
            expected[rec.relpath()] = rec.to_json()
    assert len(expected) == PUBLISHERS * PER_PUBLISHER
    assert sorted(files_on_branch(bare)) == sorted(expected)
    for path, text in expected.items():
        assert git(bare, "show", f"{BRANCH}:{path}") + "\n" == text
    # Each record was added by exactly one commit and never touched again.
    touched = Counter(git(bare, "log", "--format=", "--name-only", BRANCH).split())
    assert set(touched.values()) == {1} and len(touched) == 40
    assert commit_count(bare) == PUBLISHERS

    # A repeat of one publisher's call is a no-op: success, no commit.
    before = tip(bare)
    again = start(bare, folders[3])
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert out.count("already there") == PER_PUBLISHER and "nothing new" in out
    assert tip(bare) == before and commit_count(bare) == PUBLISHERS
