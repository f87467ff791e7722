"""Triage that lasts (docs/triage.md): a maintainer labels an alert issue
acknowledged, invalid or fixed; `bench triage` reads it back through gh (the
fake gh here) into DIR/triage.json; the README note and the dashboard's data
show the mark on that change, and an invalid change stops counting toward
Regressed."""

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from bench import cli
from bench.records import triage
from tests.helpers import T0, write_data
from tests.test_alert import STEP, recs

SERIES = "jax/local-cpu/b/train"
NIGHT = (T0 + timedelta(days=20)).date().isoformat()


@pytest.fixture
def alerted(tmp_path, gh_here, capsys):
    """A Regressed series whose alert issue #1 is open."""
    data = write_data(recs("b", STEP), tmp_path / "data")
    assert cli.main(["alert", "--data", str(data), "--repo", "o/r"]) == 0
    capsys.readouterr()
    return data


def label(root, number, name, state="open"):
    path = root / "issues" / f"{number}.json"
    it = json.loads(path.read_text())
    it["labels"].append({"name": name})
    it["state"] = state
    path.write_text(json.dumps(it))


def report(data, capsys, fmt="markdown"):
    assert cli.main(["report", "--data", str(data), "--format", fmt]) == 0
    return capsys.readouterr().out


def test_an_invalid_change_stops_counting_and_the_note_says_why(alerted, gh_here, capsys):
    assert "▼ Regressed" in report(alerted, capsys)
    label(gh_here, 1, "invalid")
    assert cli.main(["triage", "--data", str(alerted), "--repo", "o/r"]) == 0
    [mark] = triage.load(alerted)
    assert (mark.series, mark.night, mark.mark, mark.issue) == (SERIES, NIGHT, "invalid", 1)
    table = report(alerted, capsys)
    assert "Regressed" not in table
    # (markdown-escaped: '\\(' and '#' followed by a zero-width space)
    assert f"| Steady | marked invalid \\(the machine\\), not counted \\#\u200b1 \\(change of {NIGHT}\\) |" in table
    # The alert does not open a second issue for a change marked invalid.
    assert cli.main(["alert", "--data", str(alerted), "--repo", "o/r"]) == 0
    assert "open:" not in capsys.readouterr().out


def test_an_acknowledged_change_keeps_its_status_and_shows_the_link(alerted, gh_here, capsys, tmp_path):
    label(gh_here, 1, "acknowledged")
    (gh_here / "comments").mkdir(exist_ok=True)
    (gh_here / "comments" / "1.json").write_text(json.dumps([
        {"id": 1, "body": "Expected: see https://github.com/keras-team/keras/pull/123.", "user": {"login": "dev"},
         "author_association": "MEMBER"},
        {"id": 2, "body": "Not so: https://evil.example/x", "user": {"login": "someone"},
         "author_association": "NONE"},  # newer, but not a maintainer's: its link is not shown
    ]))
    assert cli.main(["triage", "--data", str(alerted), "--repo", "o/r"]) == 0
    row = json.loads(report(alerted, capsys, "json"))[0]
    assert row["status"] == "Regressed"
    assert row["mark"]["mark"] == "acknowledged"
    assert row["mark"]["link"] == "https://github.com/keras-team/keras/pull/123"
    assert cli.main(["site", "--data", str(alerted), "--out", str(tmp_path / "site")]) == 0
    capsys.readouterr()
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    [entry] = index["series"]
    assert entry["mark"]["link"] == "https://github.com/keras-team/keras/pull/123"
    assert "acknowledged (expected) #1 https://github.com/keras-team/keras/pull/123" in entry["note"]


def test_a_fixed_issue_is_read_when_closed(alerted, gh_here, capsys):
    label(gh_here, 1, "fixed", state="closed")
    assert cli.main(["triage", "--data", str(alerted), "--repo", "o/r"]) == 0
    assert [m.mark for m in triage.load(alerted)] == ["fixed"]
    assert "| ▼ Regressed | -15.0%" in (table := report(alerted, capsys)) and "; marked fixed \\#\u200b1" in table


def test_the_file_is_versioned_with_sorted_keys(tmp_path):
    marks = [triage.Mark("t/d/m/x", "2026-11-02", "fixed", 3), triage.Mark("a/d/m/x", "2026-11-01", "invalid", 2)]
    text = triage.write(tmp_path, marks).read_text()
    doc = json.loads(text)
    assert doc["format"] == 1 and doc["kind"] == "bench-triage"
    assert [m["series"] for m in doc["marks"]] == ["a/d/m/x", "t/d/m/x"]
    assert text == json.dumps(doc, sort_keys=True, indent=1) + "\n"
    assert triage.load(tmp_path) == tuple(sorted(marks, key=lambda m: m.series))


def test_a_broken_file_or_mark_is_one_line_and_loses_nothing(tmp_path, capsys):
    path = tmp_path / triage.FILE
    path.write_text("{not json")
    assert triage.load(tmp_path, warn=__import__("sys").stderr) == ()
    assert capsys.readouterr().err.count("\n") == 1
    path.write_text(json.dumps({"format": 1, "kind": "bench-triage", "marks": [
        {"series": "a/d/m/x", "night": "2026-13-01", "mark": "invalid", "issue": 1},
        {"series": "a/d/m/x", "night": "2026-11-01", "mark": "meh", "issue": 2},
        {"series": "a/d/m/x", "night": "2026-11-01", "mark": "fixed", "issue": 3}]}))
    before = path.read_text()
    assert [m.issue for m in triage.load(tmp_path, warn=__import__("sys").stderr)] == [3]
    err = capsys.readouterr().err
    assert "marks[0]: triage mark night '2026-13-01'" in err and "marks[1]: triage mark 'meh'" in err
    assert path.read_text() == before


def test_github_unreachable_leaves_the_file_as_it_was(alerted, gh_here, capsys, monkeypatch):
    triage.write(alerted, [triage.Mark(SERIES, NIGHT, "fixed", 1)])
    before = (alerted / triage.FILE).read_text()
    monkeypatch.setenv("FAKE_GH_FAIL", "issues")
    assert cli.main(["triage", "--data", str(alerted), "--repo", "o/r"]) == 0
    assert "cannot read the alert issues" in capsys.readouterr().err
    assert (alerted / triage.FILE).read_text() == before


def test_the_triage_step_holds_a_token_so_it_imports_no_third_party_code(tmp_path):
    # publish.yml gives `bench triage` the job's token; numpy and scipy (the
    # status rule's) must never load beside it (tests/test_workflows.py, COMPUTES).
    import subprocess
    import sys
    code = ("import sys; from bench import cli; from bench.commands import triage; import bench.ci.triage; "
            "print(sorted(m for m in ('numpy', 'scipy', 'yaml', 'jsonschema') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert out.stdout.strip() == "[]"
