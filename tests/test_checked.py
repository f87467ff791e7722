"""The summary's checks remembered on this machine (bench.records.checked):
a reader that trusts them reads the same lines as one that checks, and any
change to runs/ or a month file since the check is seen as before."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path

from bench import cli
from bench.records import checked, summary
from bench.records.synthetic import history
from tests.helpers import T0, make_record, ok, write_data

NEEDLE = (summary.target_needle("jax", "cpu"),)


def settled(root: Path, seconds: float = 3600) -> None:
    """Every file and folder under root dated `seconds` ago: out of the racy window."""
    then = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        os.utime(path, (then, then), follow_symlinks=False)


def with_summary(tmp_path) -> Path:
    data = write_data(list(history(120, targets=(("jax", "cpu"), ("torch", "cpu")))), tmp_path / "d")
    broken = sorted((data / "runs").glob("*/*/*"))[3] / "torch--cpu--broken-1.json"
    broken.write_text("{not a record")  # a "skipped" line in a month read in part
    assert cli.main(["summary", "--data", str(data)]) == 0
    settled(data)
    return data


def memo_file(data: Path) -> dict:
    return json.loads(checked._cache_file(os.path.realpath(data)).read_text())


def test_a_trusted_read_gives_the_lines_a_checked_one_gives(tmp_path):
    data = with_summary(tmp_path)
    first = summary.read_some(data, NEEDLE, 2)
    remembered = memo_file(data)
    assert remembered["walk"]["folders"] and len(remembered["files"]) == len(list((data / "summary").glob("*.jsonl")))
    again = summary.read_some(data, NEEDLE, 2)
    assert first[1:] == again[1:] and first[0].coverage == again[0].coverage
    key = lambda line: line["path"]  # noqa: E731
    assert sorted(first[0].lines, key=key) == sorted(again[0].lines, key=key) and len(first[0].lines) > 0
    assert sum("skipped" in line for line in again[0].lines) == 1
    whole = summary.read(data)[0]
    assert sorted(whole.lines, key=key) == sorted(summary.read(data)[0].lines, key=key)


def test_a_record_added_after_the_check_makes_the_summary_stale_again(tmp_path):
    data = with_summary(tmp_path)
    assert summary.read_some(data, NEEDLE, 2)[0] is not None
    late = make_record([ok("mlp", "train", 5.0)], device="cpu", started_at=T0 + timedelta(days=3), run_id="late")
    write_data([late], data)  # a new file in an old day's folder: that folder's mtime moves
    found, why, _ = summary.read_some(data, NEEDLE, 2)
    assert found is None and "holds" in why
    assert summary.read(data)[0] is None


def test_a_month_file_changed_after_the_check_is_checked_again(tmp_path):
    data = with_summary(tmp_path)
    assert summary.read_some(data, NEEDLE, 1)[0] is not None
    first = sorted((data / "summary").glob("????-??.jsonl"))[0]
    lines = first.read_text().splitlines()
    first.write_text("\n".join(lines[1:]) + "\n")  # a line gone: its paths no longer match its coverage
    found, why, _ = summary.read_some(data, NEEDLE, 1)
    assert found is None and first.name in why


def test_what_changed_within_the_racy_window_is_not_remembered(tmp_path):
    data = with_summary(tmp_path)
    settled(data, seconds=0)  # every folder just touched: within RACY of the check
    assert summary.read_some(data, NEEDLE, 2)[0] is not None
    assert not checked._cache_file(os.path.realpath(data)).exists()


def test_a_broken_or_foreign_memo_is_checked_again(tmp_path):
    data = with_summary(tmp_path)
    path = checked._cache_file(os.path.realpath(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    for text in ("{not json", json.dumps({"format": checked.FORMAT, "root": "/elsewhere", "walk": None, "files": {}}),
                 json.dumps({"format": checked.FORMAT, "root": os.path.realpath(data), "walk": {"folders": 3}, "files": {}})):
        path.write_text(text)
        found, why, _ = summary.read_some(data, NEEDLE, 2)
        assert found is not None and why == ""
