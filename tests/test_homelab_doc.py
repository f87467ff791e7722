"""docs/homelab.md, the recipe a new user follows: it keeps to what the
workflows and scripts do, and it avoids the traps a first real night fell into
(a one-job ephemeral runner, a fork whose workflows stay off, a runner's
global git config read before HOME moves)."""

import re
import subprocess
import sys

import yaml

from bench import config

ROOT = config.REPO_ROOT
DOCS = [ROOT / "docs" / "homelab.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "homelab.md")]
HOMELAB = DOCS[0].read_text(encoding="utf-8")
FENCED = re.compile(r"^```[a-z]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _shell_lines(text):
    """The lines of the recipe's sh blocks, continuations joined."""
    lines = []
    for block in FENCED.findall(text):
        lines += block.replace("\\\n", " ").splitlines()
    return lines


def test_no_doc_registers_a_runner_that_takes_one_job_and_vanishes():
    # An ephemeral runner unregisters after one job; only a loop that registers
    # it again (a just-in-time configuration per job) keeps a device running.
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for line in _shell_lines(text):
            if "config.sh" in line:
                assert "--ephemeral" not in line, f"{doc.name}: {line}"
    loop = next(b for b in FENCED.findall(HOMELAB) if "generate-jitconfig" in b)
    assert loop.startswith("while true; do") and "./run.sh --jitconfig" in loop


def test_the_recipe_starts_from_a_new_repository_or_says_how_to_enable_a_forks_workflows():
    assert "gh repo create OWNER/REPO --private --source ." in HOMELAB
    assert "I understand my\nworkflows, go ahead and enable them" in HOMELAB


def test_the_runner_setup_closes_the_global_git_config_and_check_runner_names_the_fix():
    assert "echo 'GIT_CONFIG_GLOBAL=/dev/null' >> .env" in HOMELAB
    # The warning a job prints points at this page and says the same fix.
    assert "GIT_CONFIG_GLOBAL=/dev/null in the runner's .env (docs/homelab.md)" in (
        ROOT / "scripts" / "check-runner.sh").read_text()


def test_the_single_box_variable_is_the_one_nightly_reads():
    nightly = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    (step,) = [s for s in nightly["jobs"]["setup"]["steps"] if s.get("id") == "matrix"]
    variable = re.search(r"vars\.(\w+)", step["env"]["DEVICES"]).group(1)
    assert f"gh variable set {variable} --repo OWNER/REPO --body my-box" in HOMELAB


def test_every_script_and_bench_verb_the_recipe_names_exists():
    scripts = set(re.findall(r"scripts/([\w.-]+\.sh)", HOMELAB))
    assert scripts and all((ROOT / "scripts" / s).is_file() for s in scripts), scripts
    for line in _shell_lines(HOMELAB):
        for verb in re.findall(r"bench (matrix|night|report|site|run)\b", line):
            done = subprocess.run([sys.executable, "-m", "bench", verb, "--help"], cwd=ROOT,
                                  capture_output=True, text=True)
            assert done.returncode == 0, line
            for flag in re.findall(r"(--[a-z-]+)", line.split(f"bench {verb}", 1)[1]):
                assert flag in done.stdout, f"{line}: bench {verb} has no {flag}"
