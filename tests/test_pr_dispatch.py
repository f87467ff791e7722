"""scripts/pr-dispatch.sh (pr-command.yml's step) with the fake gh: `/benchmark`
approves one exact commit, the full 40-hex SHA of the PR's head, and only from
a user with write, maintain or admin permission on the repository; every
refusal is a reply on the PR saying why; keras_ref is a full commit SHA too
(issue 54 item 10)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import fake_gh

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "pr-dispatch.sh"
SHA = "a" * 40


@pytest.fixture
def github(tmp_path):
    root, bindir = fake_gh(tmp_path)
    (root / "pulls").mkdir()
    (root / "pulls" / "8.json").write_text(json.dumps({"head": {"sha": SHA}}))
    (root / "permissions.json").write_text(json.dumps({
        "ada": "admin", "mai": "maintain", "wes": "write", "rae": "read", "tri": "triage"}))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "FAKE_GH_ROOT": str(root),
           "GITHUB_REPOSITORY": "o/r", "PR_NUMBER": "8", "DEFAULT_BRANCH": "main", "GH_TOKEN": "t"}
    return root, env


def dispatch(env, body, author="wes"):
    return subprocess.run(["bash", str(SCRIPT)], env={**env, "COMMENT_BODY": body, "COMMENT_AUTHOR": author},
                          capture_output=True, text=True)


def dispatched(root):
    path = root / "workflow-runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def replies(root):
    path = root / "comments" / "8.json"
    return [c["body"] for c in json.loads(path.read_text())] if path.exists() else []


@pytest.mark.parametrize("author", ["ada", "mai", "wes"])
def test_the_full_head_sha_from_a_writer_dispatches_that_commit(github, author):
    root, env = github
    out = dispatch(env, f"/benchmark {SHA}\nthanks", author)
    assert out.returncode == 0, out.stdout + out.stderr
    (run,) = dispatched(root)
    assert run["workflow"] == "pr-bench.yml" and run["inputs"] == {"pr": "8", "sha": SHA}
    assert run["argv"][run["argv"].index("--ref") + 1] == "main"
    assert replies(root) == [f"pr-bench dispatched for {SHA}; the comparison is posted here when it is done."]


@pytest.mark.parametrize("author, body, why", [
    ("wes", "/benchmark", "expected `/benchmark <sha>` with the full 40-hex-digit commit SHA"),
    ("wes", "/benchmark aaaaaaa", "a short SHA or none at all is not taken"),
    ("wes", "/benchmark " + "a" * 39, "full 40-hex-digit"),
    ("wes", "/benchmark " + "A" * 40, "(lowercase)"),
    ("wes", f"/benchmark {SHA} now", "on the first line"),
    ("wes", "/benchmark $(id)", "full 40-hex-digit"),
    ("wes", "/benchmark " + "b" * 40, f"PR #8 has head {SHA}, not {'b' * 40}; review the new head"),
    ("rae", f"/benchmark {SHA}", "the comment's author has 'read' permission on this repository; only users "
                                 "with write, maintain or admin permission may start a benchmark"),
    ("tri", f"/benchmark {SHA}", "has 'triage' permission"),
    ("someone", f"/benchmark {SHA}", "has 'none' permission"),  # a MEMBER of the org, no access here
])
def test_anything_else_is_refused_with_a_reply_saying_why(github, author, body, why):
    root, env = github
    out = dispatch(env, body, author)
    assert out.returncode == 1, out.stdout + out.stderr
    assert dispatched(root) == []
    assert why in out.stdout and out.stdout.startswith("::error title=benchmark refused::")
    (reply,) = replies(root)
    assert reply.startswith("`/benchmark` refused: ") and why in reply
    assert "$(id)" not in reply  # the comment's text is never echoed back


def test_a_login_that_is_not_one_is_a_usage_error(github):
    root, env = github
    out = dispatch(env, f"/benchmark {SHA}", "x/../../y")
    assert out.returncode == 2 and "COMMENT_AUTHOR is 'x/../../y'" in out.stderr
    assert dispatched(root) == [] and replies(root) == []


@pytest.mark.parametrize("ref, code", [("c" * 40, 0), ("master", 2), ("refs/pull/21000/head", 2), ("v3.13.0", 2),
                                       ("c" * 7, 2), ("C" * 40, 2)])
def test_keras_ref_is_taken_only_as_a_full_commit_sha(tmp_path, ref, code):
    # keras-ref.yml's setup: a branch or pull ref would resolve on the runner, later, to whatever is there then
    import sys
    out = subprocess.run(["bash", str(SCRIPT.with_name("ref-matrix.sh")), str(tmp_path / "out")],
                         env={**os.environ, "KERAS_REF": ref, "DEVICE": "ryzen-5800x3d", "BACKENDS": "", "PR": "",
                              "BENCH_PYTHON": sys.executable}, capture_output=True, text=True)
    assert out.returncode == code, out.stderr
    if code:
        assert f"keras_ref is '{ref}'; expected a full 40-hex-digit keras-team/keras commit SHA" in out.stderr
