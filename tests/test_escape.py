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
