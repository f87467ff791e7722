"""The keras-ref A/B comparison, as markdown (`bench comment ref`).

keras-ref.yml. AB_DIR holds the A/B records (any depth; install-*.json logs
and collect-artifacts.sh's provenance.json are skipped). Each record is
validated (bench.records.record.load); a bad one is left out and named.
Records pair up by (backend, device): the base is side "a" of `bench run
--ab` (run.ab.side), the head side "b"; records of two plain runs (no run.ab)
pair by environment.keras_source, "nightly" the base and "git" the head.
Each pair goes through `bench compare --base BASE --head HEAD --format
markdown`. The records were written on a self-hosted runner that ran the
Keras ref's code, so they are only data here: validated, never executed, and
every problem line (a file name, a validator message quoting the bad value)
goes through the one escaper, bench.present.escape.markdown. Each run adds a
new comment, marked <!-- keras-nightly-bench:keras-ref -->; the PR
benchmark's sticky comment marker is removed from it so the two never mix.
"""

from __future__ import annotations

from pathlib import Path

from bench.ci.pr_comment import compare
from bench.compare.markdown import MARKER as PR_MARKER
from bench.present.escape import markdown as escape
from bench.records import record as record_mod

REF_MARKER = "<!-- keras-nightly-bench:keras-ref -->"
BASE, HEAD = "nightly", "git"


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
        out = compare(["--base", str(base), "--head", str(head)])
        text = out.stdout.replace(PR_MARKER, "").strip() if out.returncode in (0, 1) else \
            f"`bench compare` failed ({out.returncode}): {_code(out.stderr.strip()[-500:])}"
        parts += [text, ""]
    if not pairs:
        parts += ["No A/B pair to compare.", ""]
    parts += [f"- {escape(p)}" for p in problems]
    text = "\n".join(parts).rstrip()
    if run_url:
        text += f"\n\n[The run]({run_url})."
    return text + "\n"


def _code(text: str) -> str:
    """Record text that cannot break out of inline code or the markdown around it."""
    return str(text).replace("`", "'").replace("\n", " ").replace("<", "&lt;")
