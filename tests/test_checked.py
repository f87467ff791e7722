"""The summary's checks remembered on this machine (bench.records.checked):
a reader that trusts them reads the same lines as one that checks, and any
change to runs/ or a month file since the check is seen as before."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bench import cli
from bench.records import checked, summary
from bench.records.synthetic import history
from tests.helpers import T0, make_record, ok, write_data

NEEDLE = (summary.target_needle("jax", "cpu"),)


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch):
    """What a test wrote before a read counts as settled: a file's ctime cannot
    be set back, so these tests take RACY as 0 (its own test puts it back)."""
    monkeypatch.setattr(checked, "RACY", 0.0)


def settled(root: Path, seconds: float = 3600) -> None:
    """Every file and folder under root dated `seconds` ago (its mtime; its ctime stays now)."""
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


def trusting(monkeypatch):
    """From here on a read that walks runs/ or hashes a month's paths fails: it must trust the memo."""
    def refuse(*_a, **_k):
        raise AssertionError("checked again what the memo holds")
    monkeypatch.setattr(summary, "on_disk", refuse)
    monkeypatch.setattr(summary, "_bytes_hash", refuse)


def test_a_trusted_read_gives_the_lines_a_checked_one_gives(tmp_path, monkeypatch):
    data = with_summary(tmp_path)
    first = summary.read_some(data, NEEDLE, 2)
    whole = summary.read(data)[0]
    remembered = memo_file(data)
    assert remembered["walk"]["folders"] and len(remembered["files"]) == len(list((data / "summary").glob("*.jsonl")))
    trusting(monkeypatch)
    again = summary.read_some(data, NEEDLE, 2)
    assert first[1:] == again[1:] and first[0].coverage == again[0].coverage
    assert first[0].lines == again[0].lines and len(first[0].lines) > 0  # the same lines, in the same order
    assert sum("skipped" in line for line in again[0].lines) == 1
    assert summary.read(data)[0].lines == whole.lines


def test_remembered_facts_spare_the_skipped_and_nights_scans_and_give_the_same_lines(tmp_path, monkeypatch):
    recs = list(history(120, targets=(("jax", "cpu"), ("torch", "cpu"))))
    late = make_record([ok("mlp", "train", 5.0)], device="cpu", started_at=recs[0].started_at + timedelta(hours=1),
                       run={"night": recs[-1].night.isoformat()}, run_id="late")  # a newest night, in the first month
    data = write_data([*recs, late], tmp_path / "d")
    broken = sorted((data / "runs").glob("*/*/*"))[40] / "torch--cpu--broken-1.json"
    broken.write_text("{not a record")
    assert cli.main(["summary", "--data", str(data)]) == 0
    settled(data)
    first = summary.read_some(data, NEEDLE, 1)
    facts = [entry[-1] for _, entry in sorted(memo_file(data)["files"].items())]
    assert facts[-1] is None  # the newest month is read whole; the others in part, their facts found
    assert all(facts[:-1]) and sum(len(f[0]) for f in facts[:-1]) == 1  # the skipped line's offset
    assert recs[-1].night.isoformat()[:7] in facts[0][1]  # `late`'s night, in the first month
    scanned = []
    real = summary._holding
    monkeypatch.setattr(summary, "_holding", lambda raw, needles: scanned.append(needles) or real(raw, needles))
    trusting(monkeypatch)
    again = summary.read_some(data, NEEDLE, 1)
    assert again[0].lines == first[0].lines and again[1:] == first[1:]
    assert late.relpath() in {x["path"] for x in again[0].lines}
    assert sum("skipped" in x for x in again[0].lines) == 1
    assert not any(b'","skipped":' in needles for needles in scanned)
    assert sum(len(needles) > 1 for needles in scanned) == 1  # the nights pattern: only in the month holding `late`


def _late_data(tmp_path) -> tuple[Path, object]:
    """with_summary's data plus `late`: a record of the newest night that lies in the first month."""
    recs = list(history(120, targets=(("jax", "cpu"), ("torch", "cpu"))))
    late = make_record([ok("mlp", "train", 5.0)], device="cpu", started_at=recs[0].started_at + timedelta(hours=1),
                       run={"night": recs[-1].night.isoformat()}, run_id="late")
    data = write_data([*recs, late], tmp_path / "d")
    (sorted((data / "runs").glob("*/*/*"))[40] / "torch--cpu--broken-1.json").write_text("{not a record")
    assert cli.main(["summary", "--data", str(data)]) == 0
    settled(data)
    return data, late


def test_reads_with_the_memo_give_what_reads_without_it_give_in_any_order(tmp_path, monkeypatch):
    data, late = _late_data(tmp_path)
    torch = (summary.target_needle("torch", "cpu"),)

    def both(read):
        monkeypatch.setenv(checked.OFF, "off")
        plain = read()
        monkeypatch.delenv(checked.OFF)
        return plain, read()

    for read in (lambda: summary.read(data), lambda: summary.read_some(data, torch, 1),
                 lambda: summary.read_some(data, NEEDLE, 2), lambda: summary.read_some(data, NEEDLE, 1),
                 lambda: summary.read(data), lambda: summary.read_some(data, torch, 3)):
        plain, remembered = both(read)
        assert remembered[0].lines == plain[0].lines and remembered[1:] == plain[1:]
    offsets = memo_file(data)["files"]
    month = next(m for m, entry in offsets.items() if entry[-1] and entry[-1][0])
    offsets[month][-1][0] = [offsets[month][-1][0][0] + 1]  # not where a line starts: found again
    checked._cache_file(os.path.realpath(data)).write_text(json.dumps({**memo_file(data), "files": offsets}))
    plain, remembered = both(lambda: summary.read_some(data, NEEDLE, 1))
    assert remembered[0].lines == plain[0].lines and sum("skipped" in x for x in remembered[0].lines) == 1
    assert memo_file(data)["files"][month][-1][0] != offsets[month][-1][0]


def test_a_month_trusted_before_its_facts_were_found_is_checked_when_they_are(tmp_path, monkeypatch):
    """Facts come with the check of every line's path: a line whose night the
    pattern cannot find makes the month stale, as it does without the memo."""
    data, late = _late_data(tmp_path)
    first = sorted((data / "summary").glob("????-??.jsonl"))[0]
    text = first.read_text()
    at = text.index(f'"path":"{late.relpath()}"')
    first.write_text(text[:at] + '"nightly_note":1,' + text[at:])  # a hand-edited line, its path unchanged
    settled(data)
    assert summary.read(data)[0] is not None  # read whole, its paths are the coverage's: remembered, no facts
    found, why, _ = summary.read_some(data, NEEDLE, 1)
    monkeypatch.setenv(checked.OFF, "off")
    assert found is None and summary.read_some(data, NEEDLE, 1)[:2] == (None, why) and first.name in why


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
    text, stat = first.read_text(), first.stat()
    # One path changed in place: the same file, the same size, its mtime set back
    # (as rsync -a or touch -r would); only its ctime tells. Its paths no longer match its coverage.
    first.write_text(text.replace('"path":"runs/', '"path":"rung/', 1))
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (first.stat().st_ino, first.stat().st_size) == (stat.st_ino, stat.st_size)
    found, why, _ = summary.read_some(data, NEEDLE, 1)
    assert found is None and first.name in why


def test_what_changed_within_the_racy_window_is_not_remembered(tmp_path, monkeypatch):
    monkeypatch.setattr(checked, "RACY", 2.0)
    data = with_summary(tmp_path)  # every file's ctime is now, whatever its mtime says
    assert summary.read_some(data, NEEDLE, 2)[0] is not None
    assert not checked._cache_file(os.path.realpath(data)).exists()


def test_a_broken_foreign_or_hand_made_memo_is_checked_again(tmp_path):
    data = with_summary(tmp_path)
    root = os.path.realpath(data)
    path = checked._cache_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    hand_made_fresh = {"folders": {}, "months": {"2020-01": [1, "0" * 64]}}  # no folder to stat: not trusted
    for text in ("{not json", "[" * 200_000 + "]" * 200_000,
                 json.dumps({"format": checked.FORMAT, "root": "/elsewhere", "walk": None, "files": {}}),
                 json.dumps({"format": checked.FORMAT, "root": root, "walk": None}),
                 json.dumps({"format": checked.FORMAT, "root": root, "walk": None, "files": []}),
                 json.dumps({"format": checked.FORMAT, "root": root, "walk": {"folders": 3}, "files": {}}),
                 json.dumps({"format": checked.FORMAT, "root": root, "walk": hand_made_fresh, "files": {}})):
        path.write_text(text)
        found, why, _ = summary.read_some(data, NEEDLE, 2)
        assert found is not None and why == ""
        assert summary.read(data)[0] is not None
    (data / "summary" / "2026-09.jsonl").unlink()
    path.write_text(json.dumps({"format": checked.FORMAT, "root": root, "walk": hand_made_fresh, "files": {}}))
    assert summary.read(data)[0] is None


def test_bench_memo_off_remembers_nothing(tmp_path, monkeypatch):
    data = with_summary(tmp_path)
    monkeypatch.setenv(checked.OFF, "off")
    assert summary.read_some(data, NEEDLE, 2)[0] is not None and checked._cache_file(os.path.realpath(data)) is None
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.delenv(checked.OFF)
    assert checked._cache_file(os.path.realpath(data)) is None


def test_a_record_removed_or_renamed_after_the_check_is_seen(tmp_path):
    for change in ("remove", "rename"):
        data = with_summary(tmp_path / change)
        assert summary.read(data)[0] is not None
        victim = sorted((data / "runs").rglob("*.json"))[10]
        if change == "remove":
            victim.unlink()
        else:
            victim.rename(victim.with_name("jax--cpu--renamed-1.json"))
        assert summary.read(data)[0] is None and summary.read_some(data, NEEDLE, 2)[0] is None


def test_a_record_in_a_folder_outside_the_layout_is_seen_after_the_check(tmp_path):
    data = write_data(list(history(60, targets=(("jax", "cpu"),))), tmp_path / "d")
    notes = sorted((data / "runs").glob("*"))[0] / "notes" / "deep"
    notes.mkdir(parents=True)
    (notes / "README").write_text("not a record\n")
    assert cli.main(["summary", "--data", str(data)]) == 0
    settled(data)
    assert summary.read(data)[0] is not None
    (notes / "stray.json").write_text("{}")  # only that folder's times move
    found, why = summary.read(data)
    assert found is None and "stray.json is not in a runs/YYYY/MM/ folder" in why


def test_a_record_added_walks_only_its_month_again_and_finds_what_a_whole_walk_finds(tmp_path, monkeypatch):
    data = with_summary(tmp_path)
    assert summary.read(data)[0] is not None
    newest = sorted((data / "runs").glob("*/*/*"))[-1]  # a night's folder of the newest month
    late = make_record([ok("mlp", "train", 5.0)], device="cpu", run_id="late",
                       started_at=datetime.strptime("/".join(newest.parts[-3:]), "%Y/%m/%d").replace(tzinfo=timezone.utc))
    write_data([late], data)
    month = "-".join(newest.parts[-3:-1])
    whole = {m: summary.month_hash(paths) for m, paths in summary.on_disk(data).items()}
    walked = []
    real = summary._folder
    monkeypatch.setattr(summary, "_folder", lambda path, listed: walked.append(path) or real(path, listed))
    monkeypatch.setattr(summary, "on_disk", lambda *_a, **_k: pytest.fail("walked all of runs/"))
    memo = checked.Memo(data)
    assert summary._disk_months(data, memo) == (whole, None)
    assert walked and all(Path(p).is_relative_to(data / "runs" / month.replace("-", "/")) for p in walked)
    memo.save()
    walked.clear()
    assert summary._disk_months(data, checked.Memo(data)) == (whole, None) and walked == []  # remembered again, whole


def test_a_folder_gone_from_a_month_is_not_remembered_with_it(tmp_path, monkeypatch):
    """A month walked again is remembered as its walk found it: a night's folder
    moved to another name is not kept, or every read would walk that month again."""
    data = with_summary(tmp_path)
    assert summary.read(data)[0] is not None
    night = sorted((data / "runs").glob("*/*/*"))[-1]
    night.rename(night.with_name("31" if night.name != "31" else "30"))
    walked = []
    real = summary._folder
    monkeypatch.setattr(summary, "_folder", lambda path, listed: walked.append(path) or real(path, listed))
    memo = checked.Memo(data)
    first = summary._disk_months(data, memo)
    memo.save()
    assert walked
    walked.clear()
    assert summary._disk_months(data, checked.Memo(data)) == first and walked == []


def test_a_new_month_after_the_check_is_seen(tmp_path):
    data = with_summary(tmp_path)
    assert summary.read(data)[0] is not None
    late = make_record([ok("mlp", "train", 5.0)], device="cpu", started_at=T0 + timedelta(days=70), run_id="new")
    write_data([late], data)
    found, why = summary.read(data)
    assert found is None and "is not in it" in why


def test_a_data_folder_reached_through_a_link_is_remembered_as_itself(tmp_path, monkeypatch):
    data = with_summary(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(data, target_is_directory=True)
    assert summary.read(link)[0] is not None
    assert memo_file(data)["walk"]["folders"]["runs"]  # the same memo as the folder's own
    trusting(monkeypatch)
    assert summary.read(link)[0] is not None and summary.read(data)[0] is not None


def test_read_some_asks_for_a_month_read_whole(tmp_path):
    data = with_summary(tmp_path)
    with pytest.raises(ValueError, match="recent 0; expected 1 or more"):
        summary.read_some(data, NEEDLE, 0)
