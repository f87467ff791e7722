"""A local rehearsal of one nightly, end to end, with the steps the workflows run.

nightly.yml  matrix -> two device jobs at the same time (jax and torch on this
             CPU): job paths, install log, bench run, job summary, "upload"
publish.yml  download the run's artifacts -> publish into a local bare
             repository -> check out the data branch -> README table (pushed to
             a local "main") -> site
later        a late third job (openvino) is swept in by the scheduled publish;
             sweeping the same artifacts again adds no commit.

GitHub is played by tests/fake_gh.py (artifacts live in a folder); everything
else is the real scripts and `python -m bench` verbs. Installing is skipped
(BENCH_SKIP_INSTALL=1): the jobs use this checkout's .venv, as the local
nightly does.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench import config

ROOT = config.REPO_ROOT
SCRIPTS = ROOT / "scripts"
PY = sys.executable
RUN_ID = "4242"
REPO = "octo/keras-nightly-bench"
README = "# Keras Nightly Bench\n\nIntro.\n\n<!-- bench:table:start -->\n<!-- bench:table:end -->\n\nMore text.\n"
GIT_ID = ["-c", "user.name=rehearsal", "-c", "user.email=rehearsal@example.org"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def sh(cmd, env, **kw):
    out = subprocess.run([str(c) for c in cmd], env=env, capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{cmd} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def git(*args, cwd=None):
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def world(tmp_path, gh):
    """Fake GitHub (gh on PATH), a bare data repository and a 'main' with a README."""
    gh_root, gh_env = gh  # tests/conftest.py
    data_repo = tmp_path / "data.git"
    git("init", "--quiet", "--bare", str(data_repo))
    main_repo = tmp_path / "main.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(main_repo))
    checkout = tmp_path / "checkout"
    git("clone", "--quiet", str(main_repo), str(checkout))
    git("checkout", "--quiet", "-b", "main", cwd=checkout)
    (checkout / "README.md").write_text(README)
    git("add", "README.md", cwd=checkout)
    git("commit", "--quiet", "-m", "README", cwd=checkout)
    git("push", "--quiet", "origin", "main", cwd=checkout)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "BENCH_", "GH_"))}
    env.update({
        **gh_env, "BENCH_CONFIG": os.environ["BENCH_CONFIG"], "BENCH_LOCK": os.environ["BENCH_LOCK"], "DATA_REPO": str(data_repo), "DATA_BRANCH": "gh-pages",
        "BENCH_PYTHON": PY, "README_BRANCH": "main",
    })
    return {"tmp": tmp_path, "env": env, "gh": gh_root, "data_repo": data_repo,
            "main_repo": main_repo, "checkout": checkout}


def matrix(world, backends):
    out_file = world["tmp"] / f"matrix-{backends}.out"
    sh([PY, "-m", "bench", "matrix", "--include-local", "--devices", "local-cpu", "--backends", backends,
        "--github-output", out_file], world["env"], cwd=ROOT)
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    return json.loads(outputs["matrix"])["include"]


def bench_job(world, entry, models, modes, spans):
    """One matrix job, step by step as nightly.yml runs it; then its 'upload'."""
    temp = world["tmp"] / f"runner-{entry['backend']}"
    temp.mkdir()
    env = {**world["env"], "GITHUB_RUN_ID": RUN_ID, "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule",
           "GITHUB_SERVER_URL": "https://github.example", "RUNNER_TEMP": str(temp),
           "RUNNER_NAME": f"rehearsal-{entry['backend']}", "BENCH_DEVICE": entry["device"],
           "BENCH_BACKEND": entry["backend"], "BENCH_INSTALL": entry["install"], "BENCH_PLUGINS": entry["plugins"],
           "BENCH_MODELS": models, "BENCH_MODES": modes}
    # Job paths ($GITHUB_ENV), but this checkout's environment instead of a fresh one.
    paths = sh(["bash", SCRIPTS / "job-paths.sh"], env).stdout
    env.update(line.split("=", 1) for line in paths.splitlines())
    env.update({"BENCH_VENV": str(Path(PY).parent.parent), "BENCH_SKIP_INSTALL": "1"})
    sh(["bash", SCRIPTS / "install-backend.sh"], env)
    start = time.monotonic()
    # One worker: the rehearsal checks the plumbing; protocol 2 is tested in test_run_backends.
    written = sh(["bash", SCRIPTS / "run-bench.sh", "--quick", "--workers", "1"], env).stdout.split()
    spans[entry["backend"]] = (start, time.monotonic())
    summary = sh([PY, "-m", "bench", "job-summary", env["BENCH_OUT"]], env, cwd=ROOT).stdout
    artifact = world["gh"] / "runs" / RUN_ID / f"record-{RUN_ID}-1-{entry['device']}-{entry['backend']}"
    shutil.copytree(env["BENCH_OUT"], artifact)
    return written, summary, json.loads(Path(env["BENCH_INSTALL_LOG"]).read_text())


def publish(world, run_id=None):
    """publish.yml's job: download, publish, check out, README, site. Returns publish's output."""
    tmp, env = world["tmp"], dict(world["env"])
    if run_id:
        env["RUN_ID"] = run_id
    artifacts = tmp / "publish" / "artifacts"
    shutil.rmtree(tmp / "publish", ignore_errors=True)
    count = sh(["bash", SCRIPTS / "collect-artifacts.sh", artifacts], env).stdout.strip()
    published = sh(["bash", SCRIPTS / "publish-records.sh", artifacts], env).stdout
    sh(["bash", SCRIPTS / "checkout-data.sh", tmp / "publish" / "data"], env)
    sh(["bash", SCRIPTS / "update-readme.sh", tmp / "publish" / "data", world["checkout"] / "README.md", "--push"], env)
    sh([PY, "-m", "bench", "site", "--data", tmp / "publish" / "data", "--out", tmp / "publish" / "site"],
       env, cwd=ROOT)
    return int(count), published


def data_files(world):
    return sorted(git("--git-dir", str(world["data_repo"]), "ls-tree", "-r", "--name-only", "gh-pages").split())


def commits(repo, branch):
    return int(git("--git-dir", str(repo), "rev-list", "--count", branch).strip())


def readme_rows(world):
    text = git("--git-dir", str(world["main_repo"]), "show", "main:README.md")
    start, end = text.index("<!-- bench:table:start -->"), text.index("<!-- bench:table:end -->")
    assert text.startswith("# Keras Nightly Bench\n\nIntro.\n") and text.endswith("\nMore text.\n")
    rows = [line for line in text[start:end].splitlines() if line.startswith("| ") and "---" not in line]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


def test_one_nightly_end_to_end(world):
    # --- nightly.yml: the matrix, then two jobs on this CPU at the same time.
    entries = matrix(world, "jax,torch")
    assert [(e["device"], e["backend"]) for e in entries] == [("local-cpu", "jax"), ("local-cpu", "torch")]
    spans = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [pool.submit(bench_job, world, e, "mlp", "predict", spans) for e in entries]
        results = [j.result() for j in jobs]
    (jax_start, jax_end), (torch_start, torch_end) = spans["jax"], spans["torch"]
    assert jax_start < torch_end and torch_start < jax_end, f"the two jobs did not overlap: {spans}"
    for (written, summary, install), entry in zip(results, entries):
        assert [Path(p).name for p in written] == [f"{entry['backend']}--local-cpu--{RUN_ID}-1.json"]
        assert summary.startswith(f"### {entry['backend']} on local-cpu\n")
        assert "| mlp | predict | ok |" in summary
        assert install["ok"] is True and install["skipped_install"] is True

    # --- publish.yml after the run: both records land on the data branch.
    count, published = publish(world, run_id=RUN_ID)
    assert count == 2
    runs = [f for f in data_files(world) if f.startswith("runs/")]
    assert len(runs) == 2 and all(
        re.fullmatch(r"runs/\d{4}/\d\d/\d\d/(jax|torch)--local-cpu--4242-1\.json", f) for f in runs), runs
    data_commits = commits(world["data_repo"], "gh-pages")
    record = json.loads(next((world["tmp"] / "publish" / "data" / "runs").rglob("jax--*.json")).read_text())
    assert record["run"]["url"] == f"https://github.example/{REPO}/actions/runs/{RUN_ID}"
    assert record["run"]["event"] == "schedule"
    assert record["environment"]["install"]["skipped_install"] is True
    rows = readme_rows(world)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("jax", "local-cpu", "mlp", "predict"), ("torch", "local-cpu", "mlp", "predict")]
    assert (world["tmp"] / "publish" / "site" / "index.html").is_file()
    readme_commits = commits(world["main_repo"], "main")
    assert readme_commits == 2

    # --- a late third job of the same run (its device came online late).
    (late,) = matrix(world, "openvino")
    bench_job(world, late, "mlp", "predict", {})

    # --- the scheduled sweep picks it up; the others are already there.
    count, published = publish(world)
    assert count == 3
    assert commits(world["data_repo"], "gh-pages") == data_commits + 1
    assert len([f for f in data_files(world) if f.startswith("runs/")]) == 3
    assert [r[0] for r in readme_rows(world)] == ["jax", "openvino", "torch"]
    assert commits(world["main_repo"], "main") == readme_commits + 1
    site = world["tmp"] / "publish" / "site"
    assert any("openvino" in p.read_text(errors="replace")
               for p in site.rglob("*") if p.is_file() and p.suffix in (".json", ".js", ".html"))

    # --- sweeping the same artifacts again changes nothing.
    publish(world)
    assert commits(world["data_repo"], "gh-pages") == data_commits + 1
    assert commits(world["main_repo"], "main") == readme_commits + 1


# ---------------------------------------------------------------------------
# Issue 12's rehearsals. The device jobs below stand in for the measurement
# with made-up results: their run block comes from bench's own run_info (the
# GitHub variables and BENCH_NIGHT from `bench night`, as nightly.yml's
# setup job decides it), so everything but the numbers is what a job writes.
# The publish job is played from publish.yml itself (play_job): each `run:`
# step with its `env:`, in order, stopping at the first failing step as
# GitHub does; `uses:` steps are stood in for (checkout: this tree; setup-python
# and `pip install .`: this venv; upload-pages-artifact: a copy under the fake
# GitHub's run folder).

import re as _re
from datetime import datetime as _dt, timedelta, timezone as _tz

import yaml as _yaml

from bench.measure.environment import run_info
from bench.records.record import RunRecord, write as write_record
from tests.helpers import ok as _ok

WORKFLOWS = ROOT / ".github" / "workflows"


def _utc(text):
    return _dt.fromisoformat(text.replace("Z", "+00:00")).astimezone(_tz.utc)


def setup_night(world, now, night_input=""):
    """nightly.yml's 'The night this run is for' step at the time `now`."""
    out = sh([PY, "-m", "bench", "night", "--created-at", now, "--night", night_input], world["env"])
    return out.stdout.strip().split("=", 1)[1]


def device_job(world, run_id, device, backend, value, started, night, *, event="schedule", attempt=1,
               keras_source="nightly"):
    """One bench job's record (see above) and its upload as the run's artifact."""
    env = {"GITHUB_RUN_ID": str(run_id), "GITHUB_RUN_ATTEMPT": str(attempt), "GITHUB_EVENT_NAME": event,
           "GITHUB_REPOSITORY": REPO, "GITHUB_SERVER_URL": "https://github.example", "BENCH_NIGHT": night}
    rec = RunRecord.from_dict({
        "schema_version": 1, "run": run_info(env, _utc(started)),
        "target": {"backend": backend, "keras_backend": backend.split("-")[0], "device": device},
        "environment": {"keras_version": "3.16.0.dev2026112002", "keras_source": keras_source},
        "results": [_ok("mlp", "predict", value, samples=[value] * 3)],
    }, source="rehearsal job")
    folder = world["gh"] / "runs" / str(run_id) / f"record-{run_id}-{attempt}-{device}-{backend}"
    write_record(rec, folder)
    run_event(world, run_id, event)
    return rec


def run_event(world, run_id, event):
    """The fake GitHub's record of the run's event (what publish's provenance checks)."""
    (world["gh"] / "runs" / f"{run_id}.json").write_text(json.dumps({"event": event}))


_EXPR = _re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _value(expr, ctx):
    """The expressions publish.yml's publish job uses: paths, 'literals', a || b."""
    for part in (p.strip() for p in expr.split("||")):
        if part.startswith("'"):
            value = part.strip("'")
        else:
            value = ctx
            for key in part.split("."):
                value = value.get(key, "") if isinstance(value, dict) else ""
        if value:
            return str(value)
    return ""


def _sub(text, ctx):
    return _EXPR.sub(lambda m: _value(m.group(1), ctx), str(text))


def play_job(world, workflow, job_name, ctx, extra_env=None):
    """Run a GitHub-hosted job of `workflow` from its YAML (see above). Returns
    (ok, {step id: outputs}, the uploaded artifact names)."""
    job = _yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"][job_name]
    temp = Path(ctx["runner"]["temp"])
    temp.mkdir(parents=True, exist_ok=True)
    base = {**world["env"], **(extra_env or {}), "RUNNER_TEMP": str(temp),
            "PATH": f"{Path(PY).parent}{os.pathsep}{world['env']['PATH']}",
            "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
            **{k: _sub(v, ctx) for k, v in job.get("env", {}).items()}}
    ctx = {**ctx, "steps": {}}
    uploaded = []
    for i, step in enumerate(job["steps"]):
        uses = step.get("uses", "")
        if "upload-pages-artifact" in uses:
            name = _sub(step["with"]["name"], ctx)
            shutil.copytree(_sub(step["with"]["path"], ctx), world["gh"] / "runs" / ctx["github"]["run_id"] / name)
            uploaded.append(name)
            continue
        if uses or step["run"].startswith("python -m pip install"):
            continue  # checkout (this tree), setup-python and `pip install .` (this venv)
        out_file = temp / f"output-{i}"
        out_file.write_text("")
        env = {**base, "GITHUB_OUTPUT": str(out_file), **{k: _sub(v, ctx) for k, v in step.get("env", {}).items()}}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            return False, {"failed": step.get("name", step["run"]), "stderr": done.stderr,
                           "stdout": done.stdout}, uploaded
        if "id" in step:
            ctx["steps"][step["id"]] = {"outputs": dict(
                line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)}
    return True, ctx["steps"], uploaded


def publish_run(world, run_id, attempt=1, event="workflow_run", **inputs):
    ctx = {"github": {"run_id": str(run_id), "run_attempt": str(attempt), "ref_name": "main", "token": "fake",
                      "event_name": event},
           "inputs": inputs, "runner": {"temp": str(world["tmp"] / f"publish-{run_id}-{attempt}")}}
    return play_job(world, "publish.yml", "publish", ctx)


def readme_job(world, run_id, attempt=1):
    data = world["tmp"] / f"publish-{run_id}-{attempt}" / "data"
    sh(["bash", SCRIPTS / "update-readme.sh", data, world["checkout"] / "README.md", "--push"], world["env"])


def report(world, run_id, attempt=1):
    data = world["tmp"] / f"publish-{run_id}-{attempt}" / "data"
    rows = json.loads(sh([PY, "-m", "bench", "report", "--data", data, "--format", "json"], world["env"],
                         cwd=ROOT).stdout)
    return {(r["device"], r["backend"]): r for r in rows}


def points(world, run_id, attempt=1):
    from bench.analyse.series import build_series
    from bench.records.history import load_history
    data = world["tmp"] / f"publish-{run_id}-{attempt}" / "data"
    series = build_series(load_history(data, warn=None).records)
    return {(k[1], k[0]): [(p.day.isoformat(), p.value, p.run_id) for p in s.points] for k, s in series.items()}


A, B = ("apple-m4", "mlx"), ("ryzen-5800x3d", "openvino")


def test_two_nights_with_device_a_offline_the_first_night(world):
    # Night 1: the nightly fires; B runs, A's runner is offline (its job stays queued).
    n1 = setup_night(world, "2026-11-20T02:17:20Z")
    device_job(world, 101, *B, 100.0, "2026-11-20T02:20:00Z", n1)
    ok1, steps, uploaded = publish_run(world, 101)  # nightly 101 is still open: the sweep takes what is there
    assert ok1, steps
    assert points(world, 101) == {B: [("2026-11-20", 100.0, "101")]}
    assert steps["records"]["outputs"]["refused"] == "0"
    # Night 2: A comes back and first runs its queued job of night 1 (run 101: its
    # night was decided when the run started), then night 2's; B is not held back.
    n2 = setup_night(world, "2026-11-21T02:17:20Z")
    assert (n1, n2) == ("2026-11-20", "2026-11-21")
    device_job(world, 102, *B, 101.0, "2026-11-21T02:20:00Z", n2)
    late = device_job(world, 101, *A, 50.0, "2026-11-21T02:25:00Z", n1)
    assert late.night.isoformat() == "2026-11-20" and late.started_at.date().isoformat() == "2026-11-21"
    device_job(world, 102, *A, 51.0, "2026-11-21T02:40:00Z", n2)
    ok2, steps, _ = publish_run(world, 102)
    assert ok2, steps
    assert points(world, 102) == {
        A: [("2026-11-20", 50.0, "101"), ("2026-11-21", 51.0, "102")],
        B: [("2026-11-20", 100.0, "101"), ("2026-11-21", 101.0, "102")],
    }
    rows = report(world, 102)
    assert (rows[A]["runs"], rows[B]["runs"]) == (2, 2)


def test_a_rerun_after_midnight_lands_on_the_night_it_is_for(world):
    device_job(world, 201, *B, 50.0, "2026-11-20T02:20:00Z", setup_night(world, "2026-11-20T02:17:10Z"))
    # Someone reruns B "for last night" at 01:10 UTC: the night input is left empty.
    night = setup_night(world, "2026-11-21T01:10:00Z")
    assert night == "2026-11-20"
    device_job(world, 202, *B, 100.0, "2026-11-21T01:12:00Z", night, event="workflow_dispatch")
    device_job(world, 203, *B, 102.0, "2026-11-21T02:20:00Z", setup_night(world, "2026-11-21T02:17:10Z"))
    assert publish_run(world, 203)[0]
    assert points(world, 203)[B] == [("2026-11-20", 100.0, "202"), ("2026-11-21", 102.0, "203")]


def test_a_pinned_version_dispatch_makes_no_point(world):
    # The real job path: install-backend.sh logs keras_source "pinned", run-bench.sh
    # passes it to bench run, and the record says so.
    entry, = matrix(world, "jax")
    temp = world["tmp"] / "runner-pinned"
    env = {**world["env"], "GITHUB_RUN_ID": "302", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "workflow_dispatch",
           "GITHUB_REPOSITORY": REPO, "RUNNER_TEMP": str(temp), "BENCH_DEVICE": entry["device"],
           "BENCH_BACKEND": entry["backend"], "BENCH_INSTALL": entry["install"], "BENCH_PLUGINS": entry["plugins"],
           "BENCH_MODELS": "mlp", "BENCH_MODES": "predict", "BENCH_KERAS_VERSION": "3.16.0.dev2026112002",
           "BENCH_NIGHT": setup_night(world, _dt.now(_tz.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))}
    temp.mkdir()
    env.update(line.split("=", 1) for line in sh(["sh", SCRIPTS / "job-paths.sh"], env).stdout.splitlines())
    env.update({"BENCH_VENV": str(Path(PY).parent.parent), "BENCH_SKIP_INSTALL": "1", "HOME": os.environ["HOME"]})
    sh(["bash", SCRIPTS / "install-backend.sh"], env)
    (path,) = sh(["bash", SCRIPTS / "run-bench.sh", "--quick", "--workers", "1"], env).stdout.split()
    pinned = json.loads(Path(path).read_text())
    assert pinned["environment"]["keras_source"] == "pinned" and pinned["run"]["night"] == env["BENCH_NIGHT"]
    shutil.copytree(Path(path).parent, world["gh"] / "runs" / "302" / f"record-302-1-{entry['device']}-jax")
    run_event(world, 302, "workflow_dispatch")
    # The night's nightly point, made earlier that night.
    (world["gh"] / "runs" / "301").mkdir()
    earlier = (_utc(pinned["run"]["started_at"]) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    nightly = device_job(world, 301, entry["device"], "jax", 1234.0, earlier, env["BENCH_NIGHT"])
    assert nightly.started_at < _utc(pinned["run"]["started_at"])
    ok1, steps, _ = publish_run(world, 302)
    assert ok1, steps
    assert steps["records"]["outputs"]["refused"] == "0"
    on_branch = [f for f in data_files(world) if f.startswith("runs/")]
    assert len(on_branch) == 2  # the pinned record is stored ...
    assert points(world, 302)[(entry["device"], "jax")] == [
        (env["BENCH_NIGHT"], 1234.0, "301")]  # ... but the night's point stays the nightly's


def test_a_publish_rerun_deploys_its_own_pages_artifact(world):
    device_job(world, 401, *B, 100.0, "2026-11-20T02:20:00Z", "2026-11-20")
    first_ok, first, up1 = publish_run(world, 501, attempt=1, event="schedule")
    assert first_ok, first
    data_commits = commits(world["data_repo"], "gh-pages")
    # "Re-run all jobs": attempt 2 publishes nothing new and uploads its own artifact.
    again_ok, again, up2 = publish_run(world, 501, attempt=2, event="schedule")
    assert again_ok, again
    assert commits(world["data_repo"], "gh-pages") == data_commits
    assert (up1, up2) == (["github-pages-501-1"], ["github-pages-501-2"])
    artifacts = sorted(p.name for p in (world["gh"] / "runs" / "501").iterdir())
    assert artifacts == ["github-pages-501-1", "github-pages-501-2"]
    # deploy names the artifact through the publish job's output: attempt 2's
    # deploy takes attempt 2's; "re-run failed jobs" (deploy only) keeps attempt 1's output.
    deploy = _yaml.safe_load((WORKFLOWS / "publish.yml").read_text())["jobs"]["deploy"]["steps"][0]
    for outputs, name in ((again, "github-pages-501-2"), (first, "github-pages-501-1")):
        needs = {"needs": {"publish": {"outputs": {"pages_artifact": outputs["site"]["outputs"]["artifact"]}}}}
        assert _sub(deploy["with"]["artifact_name"], needs) == name
        assert artifacts.count(name) == 1


def test_a_gh_failure_fails_the_publish_step_and_publishes_nothing(world):
    device_job(world, 601, *B, 100.0, "2026-11-20T02:20:00Z", "2026-11-20")
    world["env"]["FAKE_GH_FAIL"] = "actions/workflows"
    ok1, failure, uploaded = publish_run(world, 602, event="schedule")
    assert not ok1 and failure["failed"] == "Download records"
    assert "HTTP 502" in failure["stderr"]
    assert uploaded == [] and not (world["tmp"] / "publish-602-1" / "data").exists()
    assert subprocess.run(["git", "--git-dir", str(world["data_repo"]), "rev-parse", "--verify", "gh-pages"],
                          capture_output=True).returncode != 0  # the data branch was never written


FAKE_AB = '''
"""`bench run --ab A B` stand-in: two made-up records (A 100, B 80 samples/s),
shaped as protocol 2 writes them (run.id <id>-a / -b, run.ab)."""
import json, os, sys
sys.path.insert(0, os.getcwd())
from datetime import datetime, timezone
from bench.measure.environment import run_info
from bench.records.record import RunRecord, write
args = sys.argv[sys.argv.index("run") + 1:]
opt = lambda name: args[args.index(name) + 1]
run = run_info(os.environ, datetime.now(timezone.utc).replace(microsecond=0))
for side, python, value in (("a", opt("--ab"), 100.0), ("b", args[args.index("--ab") + 2], 80.0)):
    samples = [value * f for f in (0.99, 1.0, 1.01, 0.995, 1.005)]
    rec = RunRecord.from_dict({"schema_version": 1,
        "run": {**run, "id": run["id"] + "-" + side, "ab": {"id": run["id"], "side": side, "python": python}},
        "target": {"backend": opt("--backend"), "keras_backend": opt("--backend"), "device": opt("--device")},
        "environment": {"keras_version": "3.16.0.dev1", "keras_source": "nightly"},
        "results": [{"model": "mlp", "mode": "predict", "status": "ok", "value": value, "samples": samples}]},
        source="fake ab")
    print(write(rec, opt("--out")))
'''


def test_a_keras_ref_ab_posts_its_comparison(world):
    # The A/B measurement itself is stood in by two fake venv pythons whose
    # `bench run --ab` writes made-up records; the rest is run-ab.sh,
    # install-backend.sh, `bench comment ref` and keras-ref.yml's comment job.
    temp = world["tmp"] / "runner-ab"
    temp.mkdir()
    env = {**world["env"], "GITHUB_RUN_ID": "701", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "workflow_dispatch",
           "GITHUB_REPOSITORY": REPO, "RUNNER_TEMP": str(temp), "BENCH_DEVICE": "local-cpu", "BENCH_BACKEND": "jax",
           "BENCH_KERAS_BACKEND": "jax", "BENCH_INSTALL": "", "BENCH_PLUGINS": "", "KERAS_REF": "cccccccccccccccccccccccccccccccccccccccc",
           "BENCH_SKIP_INSTALL": "1"}
    env.update(line.split("=", 1) for line in sh(["sh", SCRIPTS / "job-paths.sh"], env).stdout.splitlines())
    writer = world["tmp"] / "fake_ab.py"
    writer.write_text(FAKE_AB)
    for venv in (env["BENCH_VENV"], env["BENCH_VENV"] + "-ref"):
        (Path(venv) / "bin").mkdir(parents=True)
        fake = Path(venv) / "bin" / "python"
        fake.write_text(f'#!/bin/bash\nif [ "$1 $2 $3" = "-m bench run" ]; then\n'
                        f'  case " $* " in *" --help "*) echo "  --ab A_PYTHON B_PYTHON"; exit 0;; esac\n'
                        f'  exec {PY} {writer} "$@"\nfi\nexec {PY} "$@"\n')
        fake.chmod(0o755)
    sh(["bash", SCRIPTS / "run-ab.sh"], env)
    out = temp / "bench-out"
    summary = (out / "compare.md").read_text()
    assert summary.startswith("<!-- keras-nightly-bench:keras-ref -->\n### Keras `cccccccccccccccccccccccccccccccccccccccc` against the current nightly")
    assert "<!-- keras-nightly-bench:compare -->" not in summary and "mlp" in summary
    assert sorted(p.name for p in (out / "ab").glob("install-*.json")) == ["install-nightly.json", "install-ref.json"]
    assert json.loads((out / "ab" / "install-ref.json").read_text())["keras_source"] == "git"
    # The upload, then the GitHub-hosted comment job, played from keras-ref.yml.
    shutil.copytree(out / "ab", world["gh"] / "runs" / "701" / "keras-ref-701-1-local-cpu-jax")
    (world["gh"] / "runs" / "701.json").write_text(json.dumps(
        {"path": ".github/workflows/keras-ref.yml", "event": "workflow_dispatch"}))
    ctx = {"github": {"run_id": "701", "run_attempt": "1", "token": "fake", "server_url": "https://github.example",
                      "repository": REPO},
           "inputs": {"pr": "42", "keras_ref": "cccccccccccccccccccccccccccccccccccccccc"}, "runner": {"temp": str(world["tmp"] / "comment-job")}}
    done, steps, _ = play_job(world, "keras-ref.yml", "comment", ctx)
    assert done, steps
    (comment,) = json.loads((world["gh"] / "comments" / "42.json").read_text())
    assert comment["body"] == summary.rstrip("\n") + "\n\n[The run](https://github.example/" + REPO + "/actions/runs/701).\n"
    assert (world["tmp"] / "comment-job" / "summary.md").read_text().startswith("<!-- keras-nightly-bench:keras-ref -->")


# ---------------------------------------------------------------------------
# A single-box homelab: the repository variable BENCH_DEVICES names the devices
# that have runners, so the shipped ones never queue jobs for runners that do
# not exist, and benchmarks.yaml keeps them. Played from nightly.yml's setup job.

def nightly_setup(world, run_id, devices_input="", devices_variable=None):
    (world["gh"] / "runs" / str(run_id)).mkdir(parents=True, exist_ok=True)
    (world["gh"] / "runs" / f"{run_id}.json").write_text(json.dumps({"created_at": "2026-11-20T02:17:30Z"}))
    ctx = {"github": {"run_id": str(run_id), "run_attempt": "1", "token": "fake"},
           "inputs": {"devices": devices_input, "backends": "", "night": ""},
           "vars": {} if devices_variable is None else {"BENCH_DEVICES": devices_variable},
           "runner": {"temp": str(world["tmp"] / f"setup-{run_id}")}}
    done, steps, _ = play_job(world, "nightly.yml", "setup", ctx,
                              extra_env={"GITHUB_RUN_ID": str(run_id), "GITHUB_REPOSITORY": REPO})
    assert done, steps
    include = json.loads(steps["matrix"]["outputs"]["matrix"])["include"]
    return sorted({e["device"] for e in include}), steps["night"]["outputs"]["night"]


def test_a_single_box_names_its_device_in_a_repository_variable(world):
    every = ["apple-m4", "apple-m4-cpu", "rtx-5070-ti", "ryzen-5800x3d"]
    assert nightly_setup(world, 801) == (every, "2026-11-20")  # no variable: every device with a runner
    assert nightly_setup(world, 802, devices_variable="ryzen-5800x3d")[0] == ["ryzen-5800x3d"]
    # A dispatch's own input wins over the variable.
    assert nightly_setup(world, 803, "apple-m4", devices_variable="ryzen-5800x3d")[0] == ["apple-m4"]
