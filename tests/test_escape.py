"""The one markdown escaper (bench/present/escape.py): record text rendered by
GitHub stays inert text, also GitHub's math and issue references."""

import re

import pytest

from bench.present.escape import markdown

ZW = "\u200b"


@pytest.mark.parametrize("text, want", [
    ("$x$", r"\$x\$"),
    (r"$\color{red}{\huge BIG}$", r"\$\\color{red}{\\huge BIG}\$"),
    ("$$a$$", r"\$\$a\$\$"),
    ("$`x`$", r"\$\`x\`\$"),
])
def test_dollars_cannot_open_github_math(text, want):
    assert markdown(text) == want
    assert not re.search(r"(?<!\\)\$", markdown(text))  # no bare '$' left to open math


@pytest.mark.parametrize("text, want", [
    ("see #1", rf"see \#{ZW}1"),
    ("keras-team/keras#21000", rf"keras-team/keras\#{ZW}21000"),
    ("GH-12 and gh-3", f"GH{ZW}-12 and gh{ZW}-3"),
    ("#tag and # 1 and C#", r"\#tag and \# 1 and C\#"),  # not references: left as they read
])
def test_issue_references_do_not_link(text, want):
    assert markdown(text) == want
    assert not re.search(r"#[0-9]|\bGH-[0-9]", markdown(text), re.I)


def test_what_it_already_did_still_holds():
    out = markdown("a\n<!-- x -->|[l](http://e.example) @team")
    assert out == rf"a &lt;\!-- x --&gt;\|\[l\]\(http{ZW}://e.example\) @{ZW}team"


def test_the_job_summary_escapes_every_record_text(tmp_path):
    # bench job-summary: the record was written where third-party code ran
    import json
    import subprocess
    import sys
    from pathlib import Path

    from tests.helpers import make_record, ok
    rec = json.loads(make_record([ok("cnn", "train", 1.0)]).to_json())
    rec["environment"]["keras_version"] = "[x](http://evil.example) #1 $\\huge y$"
    rec["target"]["device"] = "@team"
    rec["run"]["id"] = "`x`"
    (tmp_path / "r.json").write_text(json.dumps(rec))
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "bench", "job-summary", str(tmp_path)], capture_output=True,
                         text=True, check=True, cwd=root).stdout
    assert f"### jax on @{ZW}team" in out
    assert rf"Keras \[x\]\(http{ZW}://evil.example\) \#{ZW}1 \$\\huge y\$ (nightly), run \`x\` attempt 1" in out


def test_collect_artifacts_escapes_a_forks_branch_name_in_the_job_summary(tmp_path):
    # A refused run's branch and repository names come from whoever pushed them.
    import json
    import os
    import subprocess
    from pathlib import Path

    from tests.helpers import fake_gh
    root, bindir = fake_gh(tmp_path)
    (root / "runs" / "31" / "record-31-1-local-cpu-jax").mkdir(parents=True)
    (root / "runs" / "31.json").write_text(json.dumps({"event": "workflow_dispatch",
                                                        "head_branch": "[x](http://evil.example)@team#1"}))
    summary = tmp_path / "summary.md"
    script = Path(__file__).resolve().parent.parent / "scripts" / "collect-artifacts.sh"
    out = subprocess.run(["bash", str(script), str(tmp_path / "dl")], capture_output=True, text=True, env={
        **os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "FAKE_GH_ROOT": str(root),
        "GITHUB_REPOSITORY": "o/r", "RUN_ID": "31", "GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 0, out.stderr
    assert summary.read_text() == (rf"- collect-artifacts: run 31 refused: branch is '\[x\]\(http{ZW}://evil.example\)"
                                   rf"@{ZW}team\#{ZW}1', expected the default branch main" "\n")
