"""Every relative link in the README and docs/ leads somewhere: the file exists, and an
#anchor names a heading of that file, slugged the way GitHub renders it."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache  # every link into a file asks again
def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))  # a '# comment' in a shell block is no heading
    return {slug(m.group(1)) for line in text.splitlines() if (m := HEADING.match(line))}


def broken_links(path: Path) -> list[str]:
    """Each relative link of a Markdown file that leads nowhere, with why."""
    out = []
    for target in LINK.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = path.parent / file_part if file_part else path
        if not linked.exists():
            out.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            out.append(f"{target}: no such heading")
    return out


def test_slug_matches_github():
    assert slug("Comparing: what `bench compare` can and cannot see") == "comparing-what-bench-compare-can-and-cannot-see"
    assert slug("Latency, memory, energy and the machine's state") == "latency-memory-energy-and-the-machines-state"
    assert slug("Same-machine A/B: the duet") == "same-machine-ab-the-duet"


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "b.md").write_text("## Part two\n")
    doc = tmp_path / "a.md"
    doc.write_text("# Top\n\n[ok](#top) [gone](#elsewhere) [file](missing.md) [other](b.md#part-two)\n"
                   "[wrong](b.md#part-three)\n\n```sh\n# not a heading\n```\n[shell](#not-a-heading)\n")
    assert broken_links(doc) == ["#elsewhere: no such heading", "missing.md: no such file",
                                 "b.md#part-three: no such heading", "#not-a-heading: no such heading"]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_link_resolves(path):
    assert broken_links(path) == []
