#!/usr/bin/env python3
"""The keras-ref A/B comparison: markdown for the job summary, and a comment on a PR.

    python scripts/ref-comment.py --summary-only AB_DIR     # markdown on stdout
    python scripts/ref-comment.py AB_DIR                    # + job summary + PR comment

keras-ref.yml. AB_DIR holds the A/B records (any depth; install-*.json logs
and collect-artifacts.sh's provenance.json are skipped). Each record is validated (bench.records.record.load); a bad one
is left out and named. Records pair up by (backend, device): the base is
side "a" of `bench run --ab` (run.ab.side), the head side "b"; records of
two plain runs (no run.ab) pair by environment.keras_source, "nightly" the
base and "git" the head.
Each pair goes through `bench compare --base BASE --head HEAD --format
markdown`. The records were written on a self-hosted runner that ran the Keras
ref's code, so they are only data here: validated, never executed.

Environment: KERAS_REF (the heading), RUN_URL; for the comment PR (a pull
request number of this repository), GITHUB_REPOSITORY, GH_TOKEN, and
GITHUB_STEP_SUMMARY. Each run adds a new comment, marked
<!-- keras-nightly-bench:keras-ref -->; the PR benchmark's sticky comment
marker is removed from it so that the two never mix.
Exit 0 done; 1 nothing to compare or the comment was refused; 2 usage.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.records import record as record_mod  # noqa: E402  (after the path tweak)
from bench.compare.markdown import MARKER as PR_MARKER  # noqa: E402

REF_MARKER = "<!-- keras-nightly-bench:keras-ref -->"
BASE, HEAD = "nightly", "git"


def _pr_comment():
    """scripts/pr-comment.py as a module: one gh client, one summary writer."""
    spec = importlib.util.spec_from_file_location("pr_comment", Path(__file__).with_name("pr-comment.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    summary_only = argv[:1] == ["--summary-only"]
    args = argv[1:] if summary_only else argv
    if len(args) != 1:
        print("usage: ref-comment.py [--summary-only] AB_DIR", file=sys.stderr)
        return 2
    pairs, problems = pair_records(Path(args[0]))
    body = render(pairs, problems, os.environ.get("KERAS_REF", "?"), os.environ.get("RUN_URL", ""))
    if summary_only:
        print(body, end="")
        return 0 if pairs else 1
    pc = _pr_comment()
    pc._summary(body)
    pr = os.environ.get("PR", "")
    if not re.fullmatch(r"[1-9][0-9]*", pr):
        print(f"ref-comment: PR is {pr!r}; expected a pull request number", file=sys.stderr)
        return 2
    if not pairs:
        print("ref-comment: no A/B pair to compare:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    try:
        repo = pc._need(os.environ, "GITHUB_REPOSITORY")
        done = pc._gh_json(["api", "-X", "POST", f"repos/{repo}/issues/{int(pr)}/comments", "--input", "-"],
                           json.dumps({"body": body}))
    except pc.Refused as e:
        print(f"ref-comment: refused: {e}", file=sys.stderr)
        return 1
    print(f"ref-comment: {done.get('html_url', '')}")
    return 0


def pair_records(folder: Path) -> tuple[list[tuple[Path, Path]], list[str]]:
    """[(base, head)] per (backend, device), and one line per problem."""
    found: dict[tuple[str, str], dict[str, Path]] = {}
    problems = []
    for path in sorted(folder.rglob("*.json")):
        if path.is_symlink() or path.name.startswith("install-") or path.name == "provenance.json":
            continue
        try:
            rec = record_mod.load(path)
        except record_mod.RecordError as e:
            problems.append(f"{path.name}: left out: {str(e).splitlines()[0][:300]}")
            continue
        ab = rec.data["run"].get("ab")
        side = ab.get("side") if isinstance(ab, dict) else None
        source = {"a": BASE, "b": HEAD}.get(side) if ab is not None else rec.environment.get("keras_source")
        if source not in (BASE, HEAD):
            problems.append(f"{path.name}: neither run.ab.side a/b nor keras_source {BASE!r}/{HEAD!r}")
            continue
        found.setdefault((rec.backend, rec.device), {})[source] = path
    pairs = []
    for (backend, device), sides in sorted(found.items()):
        if set(sides) == {BASE, HEAD}:
            pairs.append((sides[BASE], sides[HEAD]))
        else:
            problems.append(f"{backend} on {device}: only the {', '.join(sides)} record; no pair to compare")
    return pairs, problems


def render(pairs, problems, ref: str, run_url: str) -> str:
    parts = [REF_MARKER, f"### Keras `{_code(ref)}` against the current nightly, same machine", ""]
    for base, head in pairs:
        out = subprocess.run(
            [sys.executable, "-m", "bench", "compare", "--base", str(base), "--head", str(head),
             "--format", "markdown"], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        text = out.stdout.replace(PR_MARKER, "").strip() if out.returncode in (0, 1) else \
            f"`bench compare` failed ({out.returncode}): {_code(out.stderr.strip()[-500:])}"
        parts += [text, ""]
    if not pairs:
        parts += ["No A/B pair to compare.", ""]
    parts += [f"- {_code(p)}" for p in problems]
    text = "\n".join(parts).rstrip()
    if run_url:
        text += f"\n\n[The run]({run_url})."
    return text + "\n"


def _code(text: str) -> str:
    """Record text that cannot break out of inline code or the markdown around it."""
    return str(text).replace("`", "'").replace("\n", " ").replace("<", "&lt;")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
