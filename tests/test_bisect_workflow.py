"""bisect.yml's step scripts: input checks and the comment on the alert issue."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import fake_gh

ROOT = Path(__file__).resolve().parent.parent


def setup(tmp_path, **env):
    out = tmp_path / "out"
    full = {**os.environ, "BENCH_PYTHON": sys.executable, "SERIES": "jax/rtx-5070-ti/cnn/train",
            "GOOD": "3.14.0.dev2026110101", "BAD": "3.14.0.dev2026110201", "ISSUE": "", **env}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "bisect-setup.sh"), str(out)], env=full,
                          capture_output=True, text=True)
    return done, out


def test_setup_builds_the_one_device_matrix(tmp_path):
    done, out = setup(tmp_path)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert lines["count"] == "1" and lines["model"] == "cnn" and lines["mode"] == "train"
    [entry] = json.loads(lines["matrix"])["include"]
    assert (entry["device"], entry["backend"]) == ("rtx-5070-ti", "jax")


def test_setup_refuses_malformed_inputs_in_one_line(tmp_path):
    for env, text in (({"SERIES": "jax/cnn"}, "series is 'jax/cnn'"),
                      ({"GOOD": "x; rm -rf /"}, "good is 'x; rm -rf /'"),
                      ({"ISSUE": "5a"}, "issue is '5a'")):
        done, _ = setup(tmp_path, **env)
        assert done.returncode == 2 and text in done.stderr and done.stderr.count("\n") == 1


def test_comment_posts_the_escaped_result(tmp_path):
    root, bindir = fake_gh(tmp_path)
    result = tmp_path / "result.json"
    sha = "a" * 40
    result.write_text(json.dumps({"format": 1, "kind": "bisect", "culprit": sha,
                                  "message": "jax/x: first slow commit <img src=x> [link](http://evil)"}))
    env = {**os.environ, "FAKE_GH_ROOT": str(root), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "ISSUE": "7", "GITHUB_REPOSITORY": "o/r", "RUN_URL": "https://github.example/run/1"}
    done = subprocess.run([sys.executable, "-m", "bench", "comment", "bisect", str(result)],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    [comment] = json.loads((root / "comments" / "7.json").read_text())
    assert "<img" not in comment["body"] and "&lt;img src=x&gt;" in comment["body"]
    assert "\\[link\\]\\(http\u200b://evil\\)" in comment["body"]  # no live link, bare or not
    assert f"https://github.com/keras-team/keras/commit/{sha}" in comment["body"]
    result.write_text("not json")
    subprocess.run([sys.executable, "-m", "bench", "comment", "bisect", str(result)], env=env, check=True, cwd=ROOT)
    assert "left no readable result" in json.loads((root / "comments" / "7.json").read_text())[-1]["body"]
