"""bench alert with the fake gh: one issue per Regressed series, stable title,
hidden marker, no duplicate, a comment when the change moves, closed when
the series is back; --dry-run changes nothing."""

import json
from datetime import timedelta

import pytest

from bench import cli
from bench.ci.alert import parse_issue
from tests.helpers import T0, make_record, ok, write_data

FLAT = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4
STEP = FLAT + [850.0, 855.0, 848.0, 852.0, 849.0]


def recs(model, values, start=0):
    return [make_record([ok(model, "train", v)], started_at=T0 + timedelta(days=start + i),
                        run_id=f"{model}{start + i}", keras_version=f"3.14.0.dev{(T0 + timedelta(days=start + i)):%Y%m%d}01")
            for i, v in enumerate(values)]


def alert(data, *extra):
    return cli.main(["alert", "--data", str(data), "--repo", "o/r", *extra])


def issues(root):
    return {int(f.stem): json.loads(f.read_text()) for f in (root / "issues").glob("*.json")}


def test_dry_run_opens_exactly_the_regressed_series(tmp_path, gh_here, capsys):
    data = write_data(recs("a", FLAT + FLAT[:5]) + recs("b", STEP) + recs("c", FLAT + FLAT[:3] + [800.0, 801.0]),
                      tmp_path / "data")
    assert alert(data, "--dry-run") == 0
    assert capsys.readouterr().out == "would open: Slower: jax/local-cpu/b/train\n"
    assert issues(gh_here) == {}
    calls = [json.loads(line)["argv"] for line in (gh_here / "calls.jsonl").read_text().splitlines()]
    assert all("-X" not in argv for argv in calls)  # reads only


def test_open_once_comment_when_it_moves_close_when_back(tmp_path, gh_here, capsys):
    data = tmp_path / "data"
    write_data(recs("b", STEP), data)
    assert alert(data) == 0
    assert capsys.readouterr().out == "open: Slower: jax/local-cpu/b/train -> https://github.example/issues/1\n"
    [issue] = issues(gh_here).values()
    assert issue["title"] == "Slower: jax/local-cpu/b/train"
    assert [lb["name"] for lb in issue["labels"]] == ["bench-regression", "backend:jax", "device:local-cpu"]
    assert "<!-- bench:alert:series jax/local-cpu/b/train -->" in issue["body"]
    assert "first nightly after: Keras 3.14.0.dev2026112101 \\(2026-11-21\\)" in issue["body"]
    assert parse_issue(1, issue["body"]).state == {"after": 850.0, "before": 1000.0, "better": "bigger",
                                                   "night": "2026-11-21"}

    assert alert(data) == 0  # nothing new: no second issue, no comment
    assert capsys.readouterr().out == "" and len(issues(gh_here)) == 1

    write_data(recs("b", [700.0, 702.0, 699.0, 701.0], start=len(STEP)), data)  # deeper
    assert alert(data) == 0
    assert capsys.readouterr().out == "comment #1: Slower: jax/local-cpu/b/train -> #1\n"
    comments = json.loads((gh_here / "comments" / "1.json").read_text())
    assert comments[-1]["body"] == ("The change moved: was -15.0% since 2026-11-21; "
                                    "now -30.0%: 1.0k → 700 samples/s since 2026-11-26.")
    assert parse_issue(1, issues(gh_here)[1]["body"]).state["after"] == 700.5  # median of the 4 new nights

    write_data(recs("b", [1001.0, 998.0, 1003.0, 1000.0], start=len(STEP) + 4), data)  # back
    assert alert(data) == 0
    assert capsys.readouterr().out == "close #1: Slower: jax/local-cpu/b/train -> #1\n"
    assert issues(gh_here)[1]["state"] == "closed"
    assert json.loads((gh_here / "comments" / "1.json").read_text())[-1]["body"] == (
        "jax/local-cpu/b/train is back at its old level: 1.0k samples/s over the newest nights "
        "against 1.0k before the change of 2026-11-26 (status Steady). Closing.")
    assert alert(data) == 0 and capsys.readouterr().out == ""  # closed: nothing more to do


def test_the_issue_says_what_the_host_did_on_the_nights_since(tmp_path, gh_here, capsys):
    # protocol 2's workers time a reference workload: 12 % slower from the change on
    def worker(i):
        return {"value": 1.0, "samples": [1.0], "status": "ok", "disturbed": False,
                "reference_seconds": 0.0020 if i < len(FLAT) else 0.00224}

    data = write_data([make_record([ok("b", "train", v, workers=[worker(i)])], started_at=T0 + timedelta(days=i),
                                   run_id=f"b{i}") for i, v in enumerate(STEP)], tmp_path / "data")
    assert alert(data) == 0
    [issue] = issues(gh_here).values()
    assert "\n- on the nights since: the host 12.0 % slower (reference workload)\n" in issue["body"]


def test_a_failing_gh_is_one_line(tmp_path, gh_here, capsys, monkeypatch):
    data = write_data(recs("b", STEP), tmp_path / "data")
    monkeypatch.setenv("FAKE_GH_FAIL", "issues")
    assert alert(data) == 1
    err = capsys.readouterr().err
    assert err.startswith("bench alert: error: gh api repos/o/r/issues") and "HTTP 502" in err
    assert err.count("\n") == 1
    assert alert(data, "--dry-run") == 0  # a dry run still says what it would do
    out, err = capsys.readouterr()
    assert out == "would open: Slower: jax/local-cpu/b/train\n" and "as if none were open" in err


def test_repo_is_required(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    assert cli.main(["alert", "--data", str(tmp_path)]) == 2
    assert "expected OWNER/NAME" in capsys.readouterr().err


def test_a_model_name_that_would_close_the_hidden_marker_opens_one_issue_only(tmp_path, gh_here, capsys):
    data = write_data(recs("b -->x", STEP), tmp_path / "data")
    assert alert(data) == 0
    [issue] = issues(gh_here).values()
    assert "<!-- bench:alert:series jax/local-cpu/b%20--%3Ex/train -->" in issue["body"]
    assert alert(data) == 0  # read back from the marker: the same series, no second issue
    assert len(issues(gh_here)) == 1


# --- issue 54 item 4: found by marker and author, not by a label that may not exist ---

def test_a_fresh_repository_whose_token_cannot_make_labels_gets_one_issue_not_one_per_publish(
        tmp_path, gh_here, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_GH_NO_LABEL_WRITE", "1")  # and GitHub drops unknown labels from a new issue
    data = write_data(recs("b", STEP), tmp_path / "data")
    for _ in range(3):  # three 3-hourly publishes
        assert alert(data) == 0
    [issue] = issues(gh_here).values()
    assert issue["labels"] == [] and issue["user"]["login"] == "github-actions[bot]"
    err = capsys.readouterr().err
    assert err.count("bench alert: cannot create label 'bench-regression' (gh api repos/o/r/labels -X POST failed (1): "
                     "HTTP 403: Resource not accessible by integration") == 1  # once: the later runs open nothing
    assert "Issues > Labels, or see docs/security.md" in err


def test_missing_labels_are_made_when_the_token_may(tmp_path, gh_here, capsys):
    (gh_here / "labels.json").write_text(json.dumps(["bench-regression"]))  # one exists already
    data = write_data(recs("b", STEP), tmp_path / "data")
    assert alert(data) == 0
    assert json.loads((gh_here / "labels.json").read_text()) == ["bench-regression", "backend:jax", "device:local-cpu"]
    [issue] = issues(gh_here).values()
    assert [lb["name"] for lb in issue["labels"]] == ["bench-regression", "backend:jax", "device:local-cpu"]
    assert "cannot create label" not in capsys.readouterr().err


def test_an_issue_with_the_marker_opened_by_someone_else_is_not_an_alert(tmp_path, gh_here, capsys):
    # Anyone may open an issue holding the marker (and a label): it must not silence the alert.
    (gh_here / "issues").mkdir()
    (gh_here / "issues" / "1.json").write_text(json.dumps({
        "number": 1, "title": "Slower: jax/local-cpu/b/train", "state": "open", "user": {"login": "mallory"},
        "labels": [{"name": "bench-regression"}], "html_url": "https://github.example/issues/1",
        "body": '<!-- bench:alert:series jax/local-cpu/b/train -->\n<!-- bench:alert:state '
                '{"after": 850.0, "before": 1000.0, "better": "bigger", "night": "2026-11-21"} -->'}))
    data = write_data(recs("b", STEP), tmp_path / "data")
    assert alert(data) == 0
    assert capsys.readouterr().out == "open: Slower: jax/local-cpu/b/train -> https://github.example/issues/2\n"
    assert issues(gh_here)[1]["state"] == "open" and not (gh_here / "comments" / "1.json").exists()  # left alone


# --- issue 53 item 3: a new alert asks for a same-machine A/B before anyone bisects ---

def test_a_new_alert_dispatches_confirm_with_its_change_window_and_issue(tmp_path, gh_here, capsys):
    data = write_data(recs("b", STEP), tmp_path / "data")
    assert alert(data, "--confirm") == 0
    out = capsys.readouterr().out
    [run] = [json.loads(line) for line in (gh_here / "workflow-runs.jsonl").read_text().splitlines()]
    assert run["workflow"] == "confirm.yml"
    # the last good and first bad nightly are the change window's two sides
    assert run["inputs"] == {"series": "jax/local-cpu/b/train", "good": "3.14.0.dev2026112001",
                             "bad": "3.14.0.dev2026112101", "issue": "1"}
    assert "confirm #1: jax/local-cpu/b/train 3.14.0.dev2026112001..3.14.0.dev2026112101 dispatched" in out
    assert alert(data, "--confirm") == 0  # the same alert again: no second issue, no second confirm
    assert len((gh_here / "workflow-runs.jsonl").read_text().splitlines()) == 1


def test_without_confirm_no_workflow_is_dispatched(tmp_path, gh_here):
    data = write_data(recs("b", STEP), tmp_path / "data")
    assert alert(data) == 0
    assert not (gh_here / "workflow-runs.jsonl").exists()
