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
        **gh_env, "BENCH_CONFIG": os.environ["BENCH_CONFIG"], "DATA_REPO": str(data_repo), "DATA_BRANCH": "gh-pages",
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
    written = sh(["bash", SCRIPTS / "run-bench.sh", "--quick"], env).stdout.split()
    spans[entry["backend"]] = (start, time.monotonic())
    summary = sh([PY, SCRIPTS / "job-summary.py", env["BENCH_OUT"]], env).stdout
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
