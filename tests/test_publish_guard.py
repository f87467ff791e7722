"""bench publish against a hostile branch and with provenance: whatever the
data branch holds, the publisher only adds files; a record must match the run
its artifact came from. Real git against a local bare repository."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bench import cli
from bench.records.guard import Gate, Limits, Provenance, Refusal, admit, load_provenance
from bench.records.record import RunRecord, write
from bench.records.store import publish
from tests.helpers import T0, make_record, ok

BRANCH = "gh-pages"


def git(repo: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True,
                          input=input, env={**os.environ, "LC_ALL": "C"}).stdout.strip()


@pytest.fixture
def bare(tmp_path) -> Path:
    repo = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    return repo


def branch_with(bare: Path, files: dict[str, str]) -> str:
    """Make BRANCH hold exactly `files` ({path: text}); returns its tip."""
    index = bare.parent / "index"
    env = {**os.environ, "GIT_DIR": str(bare), "GIT_INDEX_FILE": str(index)}
    run = lambda *a, input=None: subprocess.run(["git", *a], input=input, capture_output=True, text=True,  # noqa: E731
                                                check=True, env=env).stdout.strip()
    entries = "".join(f"100644 {run('hash-object', '-w', '--stdin', input=text)}\t{path}\n"
                      for path, text in files.items())
    run("update-index", "--add", "--index-info", input=entries)
    tree = run("write-tree")
    commit = run("-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree, "-m", "hostile")
    run("update-ref", f"refs/heads/{BRANCH}", commit)
    index.unlink()
    return commit


def listing(bare: Path) -> dict[str, str]:
    out = git(bare, "ls-tree", "-r", BRANCH)
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def rec(device="local-cpu", run_id="1", value=100.0) -> RunRecord:
    return make_record([ok("cnn", "train", value)], device=device, run_id=run_id, started_at=T0)


def test_a_file_where_a_folder_must_be_is_refused_and_kept(bare):
    good, blocked = rec(run_id="1"), rec(run_id="2", device="other")
    day = good.relpath().rsplit("/", 1)[0]                  # runs/2026/11/01
    branch_with(bare, {day: "a file named like the day's folder\n", "README": "keep\n"})
    before = listing(bare)
    result = publish([blocked], str(bare), BRANCH)
    (refusal,) = result.refused
    assert refusal.reason.startswith(f"{BRANCH} has a blob at {day}, where this record needs a folder")
    assert result.commit is None and listing(bare) == before  # git would have deleted the file


def test_a_folder_where_the_record_must_be_is_refused(bare):
    r = rec()
    branch_with(bare, {f"{r.relpath()}/inner.txt": "x\n"})
    before = listing(bare)
    result = publish([r], str(bare), BRANCH)
    assert [x.reason.split(";")[0] for x in result.refused] == [f"{BRANCH} has a tree (not a file) at {r.relpath()}"]
    assert listing(bare) == before


def test_the_good_records_still_go_in_beside_a_conflict_and_nothing_else_changes(bare):
    a, b = rec(run_id="1"), rec(run_id="2")
    blocked = make_record([ok("cnn", "train", 1.0)], run_id="3", started_at=T0 + timedelta(days=1))
    branch_with(bare, {blocked.relpath().rsplit("/", 1)[0]: "file\n", "runs/keep.json": "{}\n"})
    before = listing(bare)
    result = publish([a, b, blocked], str(bare), BRANCH)
    assert [p.source for p in result.added] == ["made-up", "made-up"] and len(result.refused) == 1
    after = listing(bare)
    assert {k: v for k, v in after.items() if k in before} == before  # every old file, same blob
    assert sorted(set(after) - set(before)) == sorted([a.relpath(), b.relpath()])


def test_two_device_labels_for_one_file_name_cannot_both_be_admitted(tmp_path):
    files = []
    for device in ("rtx 5070", "rtx_5070"):
        path = tmp_path / f"{device}.json"
        path.write_text(rec(device=device).to_json())
        files.append(path)
    spaced, plain = (admit(f, Gate()) for f in files)
    assert isinstance(spaced, Refusal) and "field target.device is 'rtx 5070'" in spaced.reason
    assert isinstance(plain, RunRecord)


def cli_publish(bare, *args) -> int:
    return cli.main(["publish", "--repo", str(bare), *map(str, args)])


def test_expect_run_id_refuses_a_record_of_another_run(bare, tmp_path, capsys):
    write(rec(run_id="41"), tmp_path / "a")
    write(rec(run_id="42", device="b"), tmp_path / "a")
    assert cli_publish(bare, "--expect-run-id", "42", "--expect-event", "schedule",
                       "--run-created-at", "2026-11-01T01:59:00Z", tmp_path / "a") == 3
    err = capsys.readouterr().err
    assert "field run.id is '41'; expected '42', the run its artifact came from" in err
    assert list(listing(bare)) == [rec(run_id="42", device="b").relpath()]


def test_run_created_at_bounds_the_dates(bare, tmp_path, capsys):
    write(rec(run_id="42"), tmp_path / "a")  # started 2026-11-01T02:00Z
    assert cli_publish(bare, "--expect-run-id", "42", "--run-created-at", "2026-10-29T00:00:00Z", tmp_path / "a") == 3
    assert ("field run.started_at is 2026-11-01T02:00:00Z, after 2026-10-31T02:00:00Z; its run was created at "
            "2026-10-29T00:00:00Z, and a record may be dated at most 50 h after that") in capsys.readouterr().err


def test_a_job_that_waited_two_days_for_its_runner_is_still_published(bare, tmp_path):
    # GitHub keeps a job queued for an offline self-hosted runner up to 48 h:
    # the device comes back, runs the stale job, and its record is taken
    # (before, 26 h: refused, and every later sweep turned red again).
    write(rec(run_id="43"), tmp_path / "a")  # started 2026-11-01T02:00Z, 47 h after its run was created
    assert cli_publish(bare, "--expect-run-id", "43", "--run-created-at", "2026-10-30T03:00:00Z", tmp_path / "a") == 0
    assert list(listing(bare)) == [rec(run_id="43").relpath()]


def test_a_rerun_attempt_may_be_dated_after_its_newest_start_but_not_before_creation(tmp_path):
    created = datetime(2026, 10, 30, tzinfo=timezone.utc)
    (tmp_path / "r.json").write_text(make_record([ok("cnn", "train", 1.0)], run_id="5", attempt=2,
                                                 started_at=created + timedelta(days=2)).to_json())
    rerun = Provenance("5", created_at=created, run_attempt=2, run_started_at=created + timedelta(days=2))
    assert isinstance(admit(tmp_path / "r.json", Gate(every=rerun)), RunRecord)
    got = admit(tmp_path / "r.json", Gate(every=Provenance("5", created_at=created - timedelta(hours=3),
                                                           run_attempt=2)))
    assert isinstance(got, Refusal) and "its run was created at 2026-10-29T21:00:00Z" in got.reason
    early = Provenance("5", created_at=created + timedelta(days=3), run_started_at=created + timedelta(days=3))
    got = admit(tmp_path / "r.json", Gate(every=early))
    assert isinstance(got, Refusal) and "before its run was created (2026-11-02T00:00:00Z)" in got.reason


def test_provenance_file_maps_folders_to_runs(bare, tmp_path, capsys):
    write(rec(run_id="7"), tmp_path / "dl" / "7" / "record-7-1-local-cpu-jax")
    write(rec(run_id="8", device="x"), tmp_path / "dl" / "8" / "record-8-1-x-jax")
    write(rec(run_id="9", device="y"), tmp_path / "dl" / "9" / "record-9-1-y-jax")  # no entry
    (tmp_path / "dl" / "prov.json").write_text(json.dumps({"format": 1, "artifacts": {  # inside: not a record
        "7": {"run_id": "7", "event": "schedule"}, "8": {"run_id": 8, "event": "workflow_dispatch"}}}))
    assert cli_publish(bare, "--provenance", tmp_path / "dl" / "prov.json", tmp_path / "dl") == 3
    err = capsys.readouterr().err
    assert "prov.json" not in err and err.count("bench publish: refused ") == 2
    assert "run.event is 'schedule'; expected 'workflow_dispatch'" in err
    assert "no provenance entry covers its folder" in err
    assert list(listing(bare)) == [rec(run_id="7").relpath()]


@pytest.mark.parametrize("content, message", [
    ("{", "not JSON"),
    (json.dumps({"format": 2, "artifacts": {}}), 'expected {"format": 1'),
    (json.dumps({"format": 1, "artifacts": {"a": {"run_id": "../x"}}}), "run_id is '../x'"),
    (json.dumps({"format": 1, "artifacts": {"a": {"run_id": "1", "created_at": "soon"}}}), "created_at is 'soon'"),
    (json.dumps({"format": 1, "artifacts": {"a": {"run_id": "1", "sha": "x"}}}), "unknown key(s) sha"),
])
def test_a_bad_provenance_file_is_a_usage_error(bare, tmp_path, capsys, content, message):
    (tmp_path / "prov.json").write_text(content)
    write(rec(), tmp_path / "a")
    assert cli_publish(bare, "--provenance", tmp_path / "prov.json", tmp_path / "a") == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_provenance_and_expect_flags_exclude_each_other(bare, tmp_path, capsys):
    write(rec(), tmp_path / "a")
    assert cli_publish(bare, "--provenance", "p.json", "--expect-run-id", "1", tmp_path / "a") == 2
    assert cli_publish(bare, "--expect-event", "schedule", tmp_path / "a") == 2
    assert "need --expect-run-id" in capsys.readouterr().err


def test_limits_reject_bad_values_with_a_message():
    with pytest.raises(ValueError, match=r"Limits.samples is 0; expected an integer >= 1"):
        Limits(samples=0)
    with pytest.raises(ValueError, match=r"provenance run_attempt is 0"):
        Provenance("1", run_attempt=0)


def test_load_provenance_resolves_folders_beside_the_file(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"format": 1, "artifacts": {"dl/1": {
        "run_id": "1", "created_at": "2026-12-01T02:17:00Z", "run_attempt": 2}}}))
    assert load_provenance(tmp_path / "p.json") == {
        str((tmp_path / "dl" / "1").resolve()): Provenance("1", None, None,
                                                           datetime(2026, 12, 1, 2, 17, tzinfo=timezone.utc), 2)}


# --- the job that made it (issue 54 item 11) and the caps of a batch (item 13) ---

def downloaded(tmp_path: Path, records: dict[str, list[RunRecord]], **entry) -> Gate:
    """Records in artifact folders of run 7, as collect-artifacts.sh lays them out."""
    for artifact, recs in records.items():
        for i, r in enumerate(recs):
            write(r, tmp_path / "dl" / "7" / artifact, f"{r.device}-{r.backend}-{r.attempt}-{i}.json")
    (tmp_path / "dl" / "provenance.json").write_text(json.dumps({"format": 1, "artifacts": {
        "7": {"run_id": "7", "created_at": "2026-11-01T02:00:00Z", "run_attempt": 2, **entry}}}))
    return Gate(folders=load_provenance(tmp_path / "dl" / "provenance.json"), models=frozenset({"cnn", "mlp"}),
                modes=frozenset({"train", "predict"}))


def job_rec(device="local-cpu", backend="jax", attempt=1, model="cnn", mode="train", value=100.0, **run):
    return make_record([ok(model, mode, value)], device=device, backend=backend, run_id="7", attempt=attempt,
                       started_at=T0, run=run or None)


def test_a_record_is_admitted_only_from_the_artifact_of_its_own_job(tmp_path):
    gate = downloaded(tmp_path, {"record-7-1-local-cpu-jax": [job_rec()],
                                 "record-7-2-local-cpu-jax": [job_rec(attempt=2)],
                                 "record-7-1-cpu-box-jax": [job_rec(device="rtx-5070-ti")],
                                 "record-7-1-rtx-torch": [job_rec(device="rtx", backend="jax")],
                                 "pr-bench-7-1-local-cpu-jax": [job_rec()]})
    got = {f.parent.name: admit(f, gate) for f in sorted((tmp_path / "dl" / "7").rglob("*.json"))}
    assert isinstance(got["record-7-1-local-cpu-jax"], RunRecord)
    assert isinstance(got["record-7-2-local-cpu-jax"], RunRecord)
    assert isinstance(got["pr-bench-7-1-local-cpu-jax"], RunRecord)  # another workflow's prefix, the same job
    assert got["record-7-1-cpu-box-jax"].reason == (
        "its artifact is 'record-7-1-cpu-box-jax', not the job of its run.attempt 1, target.device 'rtx-5070-ti' "
        "and target.backend 'jax'; expected an artifact named 'record-7-1-rtx-5070-ti-jax'")
    assert "expected an artifact named 'record-7-1-rtx-jax'" in got["record-7-1-rtx-torch"].reason
    write(job_rec(), tmp_path / "dl" / "7")  # beside the artifacts, in none
    assert "lies in no artifact folder" in admit(tmp_path / "dl" / "7" / job_rec().relpath().split("/")[-1], gate).reason


def test_a_record_of_a_run_may_name_its_own_night_or_the_one_before_only(tmp_path):
    gate = downloaded(tmp_path, {"record-7-1-local-cpu-jax": [job_rec(night=n) for n in
                                                              ("2026-11-01", "2026-10-31", "2026-10-30", "0001-01-01")]})
    got = {admit(f, gate).__class__.__name__ + ":" + json.loads(f.read_text())["run"]["night"]
           for f in (tmp_path / "dl" / "7" / "record-7-1-local-cpu-jax").glob("*.json")}
    assert got == {"RunRecord:2026-11-01", "RunRecord:2026-10-31", "Refusal:2026-10-30", "Refusal:0001-01-01"}


def test_attempt_must_be_a_json_integer(tmp_path):
    path = tmp_path / "r.json"
    data = json.loads(job_rec().to_json())
    data["run"]["attempt"] = 1.0
    path.write_text(json.dumps(data))
    got = admit(path, Gate())
    assert isinstance(got, Refusal) and got.reason == "field run.attempt is 1.0; expected a JSON integer such as 1"


@pytest.mark.parametrize("limits, records, message", [
    (Limits(artifact_files=2), {"record-7-1-local-cpu-jax": [job_rec(value=v) for v in (1.0, 2.0, 3.0)]},
     "its artifact 'record-7-1-local-cpu-jax' holds 3 record files; the cap is 2 per artifact"),
    (Limits(artifact_series=1), {"record-7-1-local-cpu-jax": [job_rec(), job_rec(mode="predict")]},
     "holds 2 series; the cap is 1 per artifact"),
    (Limits(artifact_bytes=500), {"record-7-1-local-cpu-jax": [job_rec()]}, "bytes of records; the cap is 500"),
    (Limits(run_files=2), {"record-7-1-local-cpu-jax": [job_rec()], "record-7-1-d2-jax": [job_rec(device="d2")],
                           "record-7-1-d3-jax": [job_rec(device="d3")]},
     "its run '7' holds 3 record files; the cap is 2 per run"),
    (Limits(run_series=2), {"record-7-1-local-cpu-jax": [job_rec()], "record-7-1-d2-jax": [job_rec(device="d2")],
                            "record-7-1-d3-jax": [job_rec(device="d3")]}, "holds 3 series; the cap is 2 per run"),
])
def test_an_artifact_or_a_run_over_a_cap_is_refused_whole(tmp_path, limits, records, message):
    from bench.records.guard import admit_all
    gate = downloaded(tmp_path, records)
    gate = Gate(limits=limits, folders=gate.folders, models=gate.models, modes=gate.modes)
    files = sorted((tmp_path / "dl" / "7").rglob("*.json"))
    admitted, refused = admit_all(files, gate)
    assert admitted == [] and len(refused) == len(files) and all(message in r.reason for r in refused)
    assert admit_all(files, downloaded(tmp_path, {}))[1] == []  # within the default caps: all admitted


def test_publish_takes_only_the_models_and_modes_benchmarks_yaml_names(bare, tmp_path, capsys):
    write(job_rec(), tmp_path / "a")
    write(job_rec(device="d2", model="resnet"), tmp_path / "a")
    assert cli_publish(bare, "--expect-run-id", "7", tmp_path / "a") == 3
    assert ("field results[0].model is 'resnet'; expected one that benchmarks.yaml names: cnn, mlp"
            in capsys.readouterr().err)
    assert list(listing(bare)) == [job_rec().relpath()]
