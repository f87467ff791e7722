"""bench publish / bench.records.store: records reach the data branch exactly once.

Every test runs real git against a local bare repository in tmp_path.
Races are made deterministic with a pre-receive hook that moves the branch
('a rival publisher won') before our push lands, and a fake sleep.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from bench import cli
from bench.records.record import RunRecord, write
from bench.records.store import IDENTITY, PublishError, Retry, _redact, publish, record_files
from tests.helpers import T0, make_record, ok

BRANCH = "gh-pages"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "LC_ALL": "C"}
    return subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, text=True,
                          check=True, env=env).stdout.strip()


def tip(repo: Path) -> str | None:
    proc = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "--verify", "-q", f"refs/heads/{BRANCH}"],
                          capture_output=True, text=True)
    return proc.stdout.strip() or None


def files_on_branch(repo: Path) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", BRANCH).splitlines()


def commit_count(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", BRANCH))


@pytest.fixture
def bare(tmp_path) -> Path:
    repo = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    return repo


def records(n: int, run: str = "r", value: float = 100.0) -> list[RunRecord]:
    return [make_record([ok("cnn", "train", value + i)], run_id=f"{run}{i}",
                        started_at=T0 + timedelta(hours=i)) for i in range(n)]


def no_sleep(calls: list[float]):
    return calls.append


# -- the happy path and idempotency ---------------------------------------------

def test_first_publish_creates_the_branch_as_an_orphan_with_every_record(bare):
    recs = records(3)
    result = publish(recs, str(bare), BRANCH)
    assert result.commit == tip(bare)
    assert git(bare, "rev-list", "--parents", "-n1", BRANCH).split() == [result.commit]  # no parent
    assert sorted(files_on_branch(bare)) == sorted(r.relpath() for r in recs)
    for r in recs:
        assert git(bare, "show", f"{BRANCH}:{r.relpath()}") + "\n" == r.to_json()
    assert [p.status for p in result.placed] == ["added"] * 3


def test_publishing_the_same_records_again_adds_no_commit(bare):
    recs = records(3)
    first = publish(recs, str(bare), BRANCH)
    again = publish(recs, str(bare), BRANCH)
    assert again.commit is None and again.tip == first.commit == tip(bare)
    assert [p.status for p in again.placed] == ["already there"] * 3
    assert commit_count(bare) == 1


def test_a_mix_of_new_and_present_records_commits_only_the_new_ones(bare):
    recs = records(4)
    publish(recs[:2], str(bare), BRANCH)
    result = publish(recs, str(bare), BRANCH)
    assert [p.status for p in result.placed] == ["already there"] * 2 + ["added"] * 2
    assert commit_count(bare) == 2
    assert git(bare, "diff-tree", "--no-commit-id", "--name-only", "-r", BRANCH).splitlines() == \
        sorted(r.relpath() for r in recs[2:])


def test_files_already_on_the_branch_are_kept(bare, tmp_path):
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", BRANCH, str(work)], check=True)
    (work / "index.html").write_text("<html></html>\n")
    subprocess.run(["git", "-C", str(work), "add", "index.html"], check=True)
    subprocess.run(["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "site"],
                   check=True)
    subprocess.run(["git", "-C", str(work), "push", "-q", str(bare), BRANCH], check=True)
    before = tip(bare)
    result = publish(records(2), str(bare), BRANCH)
    assert git(bare, "rev-parse", f"{result.commit}^") == before
    assert "index.html" in files_on_branch(bare)


def test_same_path_with_other_content_is_refused_naming_both(bare):
    (rec,) = records(1)
    publish([rec], str(bare), BRANCH)
    before = tip(bare)
    edited = make_record([ok("cnn", "train", 999.0)], run_id="r0", started_at=T0)
    edited = RunRecord(edited.data, "edited.json")
    assert edited.relpath() == rec.relpath()
    result = publish([edited], str(bare), BRANCH)
    (refusal,) = result.refused
    assert refusal.source == "edited.json" and f"differs from {BRANCH}:{rec.relpath()}" in refusal.reason
    assert result.commit is None and result.placed == () and tip(bare) == before


def test_the_same_data_in_another_layout_counts_as_already_there(bare, tmp_path):
    (rec,) = records(1)
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", BRANCH, str(work)], check=True)
    target = work / rec.relpath()
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(rec.data))          # one line, unsorted: an older writer
    subprocess.run(["git", "-C", str(work), "add", "."], check=True)
    subprocess.run(["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "old"],
                   check=True)
    subprocess.run(["git", "-C", str(work), "push", "-q", str(bare), BRANCH], check=True)
    result = publish([rec], str(bare), BRANCH)
    assert result.commit is None and [p.status for p in result.placed] == ["already there"]


def test_two_inputs_for_one_path_with_different_content_keep_the_first_and_refuse_the_second(bare):
    a = RunRecord(make_record([ok("cnn", "train", 1.0)], run_id="x").data, "a.json")
    b = RunRecord(make_record([ok("cnn", "train", 2.0)], run_id="x").data, "b.json")
    result = publish([a, b], str(bare), BRANCH)
    assert [p.source for p in result.placed] == ["a.json"]
    (refusal,) = result.refused
    assert refusal.source == "b.json" and refusal.reason.startswith(f"goes to {a.relpath()} like a.json")
    assert files_on_branch(bare) == [a.relpath()]


# -- validation first -----------------------------------------------------------

def test_an_invalid_record_is_refused_and_the_good_ones_are_published(bare, tmp_path, capsys):
    publish(records(1, run="seed"), str(bare), BRANCH)
    before, count = tip(bare), commit_count(bare)
    folder = tmp_path / "in"
    for r in records(3):
        write(r, folder)
    bad = json.loads(records(1, run="bad")[0].to_json())
    bad["results"][0]["value"] = -5
    (folder / "zz-bad.json").write_text(json.dumps(bad))
    code = cli.main(["publish", "--repo", str(bare), str(folder)])
    err = capsys.readouterr().err
    assert code == 3
    assert f"bench publish: refused {folder / 'zz-bad.json'}: field results[0].value" in err
    assert "1 of 4 record file(s) refused (named above); the rest were published" in err
    assert commit_count(bare) == count + 1
    assert sorted(f for f in files_on_branch(bare) if "--r" in f) == sorted(r.relpath() for r in records(3))


def test_a_truncated_record_file_is_refused_with_its_name(bare, tmp_path, capsys):
    (tmp_path / "cut.json").write_text(records(1)[0].to_json()[:40])
    assert cli.main(["publish", "--repo", str(bare), str(tmp_path / "cut.json")]) == 3
    err = capsys.readouterr().err
    assert f"refused {tmp_path / 'cut.json'}: not valid JSON" in err and "nothing was published" in err
    assert tip(bare) is None


def test_usage_errors_exit_2(bare, tmp_path, capsys):
    assert cli.main(["publish", "--repo", str(bare), str(tmp_path / "missing.json")]) == 2
    (tmp_path / "empty").mkdir()
    assert cli.main(["publish", "--repo", str(bare), str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err and "holds no *.json" in err


def test_cli_prints_one_line_per_record_and_the_commit(bare, tmp_path, capsys):
    for r in records(2):
        write(r, tmp_path / "in")
    assert cli.main(["publish", "--repo", str(bare), str(tmp_path / "in")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["added", "added", "commit"]
    assert tip(bare) in lines[-1]
    assert cli.main(["publish", "--repo", str(bare), str(tmp_path / "in")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [ln[:13] for ln in out[:2]] == ["already there"] * 2 and out[-1].startswith("nothing new")


def test_record_files_reads_folders_recursively_in_order(tmp_path):
    for i, r in enumerate(records(3)):
        write(r, tmp_path / f"artifact-{i}")
    (tmp_path / "artifact-0" / ".tmp-half.json").write_text("{")
    found = record_files([tmp_path])
    assert [f.parent.name for f in found] == ["artifact-0", "artifact-1", "artifact-2"]


# -- races: retried with backoff, bounded ---------------------------------------

RIVAL_HOOK = """#!{python}
# pre-receive: a rival publisher moves the branch before our push lands,
# the first {limit} times; receive-pack then refuses our stale update.
import os, pathlib, subprocess, sys
sys.stdin.read()
counter = pathlib.Path({counter!r})
n = int(counter.read_text()) if counter.exists() else 0
if n < {limit}:
    counter.write_text(str(n + 1))
    env = {{"PATH": os.environ["PATH"], "GIT_DIR": {bare!r}, "GIT_INDEX_FILE": {index!r}, "LC_ALL": "C"}}
    def g(*a, input=None):
        return subprocess.run(["git", "-c", "user.name=rival", "-c", "user.email=rival@example.com", *a],
                              env=env, input=input, capture_output=True, text=True, check=True).stdout.strip()
    old = g("rev-parse", "refs/heads/{branch}")
    blob = g("hash-object", "-w", "--stdin", input=f"rival {{n}}\\n")
    g("read-tree", old)
    g("update-index", "--add", "--cacheinfo", f"100644,{{blob}},rival/{{n}}.txt")
    new = g("commit-tree", g("write-tree"), "-p", old, "-m", f"rival {{n}}")
    g("update-ref", "refs/heads/{branch}", new, old)
"""


def install_rival(bare: Path, tmp_path: Path, limit: int) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(RIVAL_HOOK.format(python=sys.executable, limit=limit, counter=str(tmp_path / "rivals"),
                                      bare=str(bare), index=str(tmp_path / "rival-index"), branch=BRANCH))
    hook.chmod(0o755)


def test_a_rejected_push_is_retried_on_the_new_tip_with_growing_backoff(bare, tmp_path):
    publish(records(1, run="seed"), str(bare), BRANCH)
    install_rival(bare, tmp_path, limit=2)
    sleeps: list[float] = []
    retry = Retry(attempts=5, base=0.1, cap=10)
    recs = records(3)
    result = publish(recs, str(bare), BRANCH, retry=retry, sleep=no_sleep(sleeps), rng=random.Random(7))
    assert result.attempts == 3 and result.commit == tip(bare)
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.1 and 0 <= sleeps[1] <= 0.2  # within a doubling window
    on_branch = files_on_branch(bare)
    assert {"rival/0.txt", "rival/1.txt"} <= set(on_branch)       # the rivals' work is kept
    assert {r.relpath() for r in recs} <= set(on_branch)
    assert git(bare, "log", "--format=%s", BRANCH).splitlines()[:3] == \
        ["bench publish: 3 record(s)", "rival 1", "rival 0"]


def test_the_final_error_says_how_many_attempts_were_made(bare, tmp_path):
    publish(records(1, run="seed"), str(bare), BRANCH)
    install_rival(bare, tmp_path, limit=1000)
    sleeps: list[float] = []
    with pytest.raises(PublishError, match=r"gave up after 4 attempts") as e:
        publish(records(2), str(bare), BRANCH, retry=Retry(attempts=4, base=0.01), sleep=no_sleep(sleeps))
    assert "rejected 4 times" in str(e.value)
    assert len(sleeps) == 3
    assert not any(f.startswith("runs/2026/11/01/jax--local-cpu--r") for f in files_on_branch(bare))


class Extreme(random.Random):
    """An rng that always draws the top (or bottom) of the range: shows the window."""

    def __init__(self, top: bool):
        super().__init__(0)
        self.top = top

    def uniform(self, a, b):
        return b if self.top else a


def test_a_push_the_server_declines_fails_at_once_and_moves_nothing(bare, tmp_path):
    publish(records(1, run="seed"), str(bare), BRANCH)
    before = tip(bare)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'branch is protected' >&2\nexit 1\n")
    hook.chmod(0o755)
    sleeps: list[float] = []
    with pytest.raises(PublishError, match="branch is protected"):
        publish(records(2), str(bare), BRANCH, sleep=no_sleep(sleeps))
    assert sleeps == [] and tip(bare) == before


def test_backoff_window_doubles_up_to_the_cap():
    retry = Retry(attempts=10, base=0.5, cap=4)
    assert [retry.delay(n, Extreme(top=True)) for n in range(1, 7)] == [0.5, 1, 2, 4, 4, 4]
    assert [retry.delay(n, Extreme(top=False)) for n in range(1, 4)] == [0, 0, 0]  # full jitter
    rng = random.Random(1)
    assert all(0 <= retry.delay(n, rng) <= 4 for n in range(1, 30))
    with pytest.raises(ValueError, match="attempts is 0"):
        Retry(attempts=0)


# -- environments -----------------------------------------------------------------

def test_works_without_any_git_config_and_leaves_the_users_config_alone(bare, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    publish(records(1), str(bare), BRANCH)
    assert git(bare, "log", "-1", "--format=%an <%ae>", BRANCH) == f"{IDENTITY[0]} <{IDENTITY[1]}>"
    assert list(home.iterdir()) == []


def test_a_missing_repository_fails_at_once_naming_it(tmp_path):
    sleeps: list[float] = []
    with pytest.raises(PublishError, match="nope.git"):
        publish(records(1), str(tmp_path / "nope.git"), BRANCH, sleep=no_sleep(sleeps))
    assert sleeps == []


def test_a_token_in_the_repository_url_is_never_printed():
    # Port 9 on localhost refuses at once: a git failure whose message holds the URL.
    with pytest.raises(PublishError) as e:
        publish(records(1), "http://x-access-token:s3cr3t@127.0.0.1:9/o/r.git", BRANCH)
    assert "s3cr3t" not in str(e.value) and "***@127.0.0.1" in str(e.value)
    assert _redact("https://u:tok@github.com/o/r fetch") == "https://***@github.com/o/r fetch"


# -- a publish's cost does not grow with the history (issue 55) ----------------

def test_a_publish_fetches_the_tips_commit_and_only_the_folders_it_writes_to(tmp_path, monkeypatch):
    # A server that filters (as GitHub does): the publish fetches the tip's
    # commit alone, then the trees of the folders its record goes in, by name;
    # never the history's other trees, which git's own fetch-on-demand of the
    # root tree would bring (every tree below it).
    bare = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(bare, "config", "uploadpack.allowFilter", "true")
    history = [make_record([ok("cnn", "train", 100.0 + i)], run_id=f"h{i}", started_at=T0 - timedelta(days=9 * i))
               for i in range(60)]  # 60 nights over 18 months: 80 trees
    publish(history, str(bare), BRANCH)
    trees = git(bare, "rev-list", "--objects", "--filter=blob:none", BRANCH).count("\n")
    assert trees > 60
    kept = tmp_path / "publish"
    monkeypatch.setattr("bench.records.store.tempfile.TemporaryDirectory", lambda **_: _Kept(kept))
    new = make_record([ok("cnn", "train", 99.0)], run_id="new", started_at=T0 + timedelta(hours=3))
    result = publish([new], str(bare), BRANCH)
    assert [p.status for p in result.placed] == ["added"]
    objects = subprocess.run(["git", "--git-dir", str(kept / "repo.git"), "cat-file", "--batch-all-objects",
                              "--batch-check=%(objecttype)"], capture_output=True, text=True, check=True).stdout.split()
    # the tip's commit and root, runs/, runs/2026/, runs/2026/11/, runs/2026/11/01/ (fetched),
    # the record's blob, five new trees and the new commit (made here)
    assert len(objects) <= 14, objects
    assert sorted(files_on_branch(bare)) == sorted([r.relpath() for r in history] + [new.relpath()])
    subprocess.run(["git", "--git-dir", str(bare), "fsck", "--no-progress"], check=True, capture_output=True)


class _Kept:
    """A TemporaryDirectory that stays, so the test can look into the publish's repository."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> str:
        self.path.mkdir()
        return str(self.path)

    def __exit__(self, *exc) -> None:
        return None


def test_a_server_that_gives_no_object_by_name_still_gets_the_record(tmp_path, monkeypatch):
    # protocol v0 without uploadpack.allowAnySHA1InWant refuses a tree asked
    # for by name: the publish fetches the tip's trees instead, as it did before.
    bare = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(bare, "config", "uploadpack.allowFilter", "true")
    history = records(3)
    publish(history, str(bare), BRANCH)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.version")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "0")
    new = make_record([ok("cnn", "train", 99.0)], run_id="new", started_at=T0 + timedelta(days=40))
    result = publish([new], str(bare), BRANCH)
    assert result.commit == tip(bare) and [p.status for p in result.placed] == ["added"]
    assert sorted(files_on_branch(bare)) == sorted([r.relpath() for r in history] + [new.relpath()])
