"""The derived summary beside runs/ (issue 55): the same tables and statuses, byte
for byte, from the summary as from the records; said and read past when stale;
appended by `bench publish`; and the site's overview with each series' history apart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from bench import cli
from bench.analyse.series import all_series
from bench.records import summary
from bench.records.record import RunRecord, write
from bench.records.synthetic import Step, history
from tests.helpers import T0, failed, make_record, ok, skipped, write_data
from tests.test_gab_realhist import FILES as REALHIST
from tests.test_metric_series import gpu_env, latency


def worker(ref: float) -> dict:
    return {"value": 1000.0, "samples": [1000.0], "status": "ok", "disturbed": False,
            "reference_seconds": ref, "reference_median_seconds": ref * 1.1}


def rich_history() -> list[RunRecord]:
    """What the report, site and show read besides a value: environments and
    their changes, a protocol change, host readings, metric series, a vs-ref
    series with its reference build, failures, skips, a rerun, a non-nightly run."""
    recs = []
    for i in range(24):
        t = T0 + timedelta(days=i)
        level = 1000.0 if i < 16 else 880.0
        run = {"protocol": {"name": "workers", "version": 11 if i < 6 else 12},
               "ab": {"id": f"ab{i}", "side": "b", "python": "py", "reference": True,
                      "reference_keras_version": "3.10.0" if i < 20 else "3.11.0"}}
        results = [ok("mlp", "train", level + (i % 3), workers=[worker(0.002 * (1.3 if i == 20 else 1))],
                      reference={"value": 1000.0, "ratio": level / 1000.0, "pairs": 5}),
                   latency("cnn", 1.0 + 0.01 * (i % 4), 2.0, device=5_000_000 + i, energy=0.5)]
        if i % 7 == 3:
            results.append(failed("cnn", "train", "oom", "ran out"))
        elif i % 7 == 5:
            results.append(skipped("cnn", "train"))
        else:
            results.append(ok("cnn", "train", 90.0 + i % 2))
        recs.append(make_record(results, device="rtx", started_at=t, run=run,
                                environment=gpu_env(driver="570.86.10" if i < 12 else "575.51.02")))
    recs.append(make_record([ok("mlp", "train", 700.0)], device="rtx", started_at=T0 + timedelta(days=10, hours=3),
                            run={"night": (T0 + timedelta(days=10)).date().isoformat()}, attempt=2,
                            run_id=str(int((T0 + timedelta(days=10)).timestamp()))))
    recs.append(make_record([ok("mlp", "train", 10.0)], device="rtx", started_at=T0 + timedelta(days=12),
                            environment={"keras_source": "git"}, run_id="pr"))
    steps = {("jax", "rtx-5070-ti", "cnn", "train"): [Step(30, 0.8)]}
    recs += list(history(40, seed=5, steps=steps, end=T0 + timedelta(days=23), fail_rate=0.05))
    return recs


def realhist(tmp_path: Path) -> list[Path]:
    out = []
    for i, path in enumerate(REALHIST):
        data = tmp_path / f"real{i}"
        assert cli.main(["import-gab", str(path), "--out", str(data), "--device", "ci"]) == 0
        out.append(data)
    return out


def outputs(data: Path, capsys) -> dict[str, str]:
    """Every table and status the readers print, and the site's data."""
    capsys.readouterr()
    got = {}
    for fmt in ("markdown", "json", "html"):
        assert cli.main(["report", "--data", str(data), "--format", fmt]) == 0
        got[fmt] = capsys.readouterr().out
    for key in json.loads(got["json"]):
        parts = [key[k] for k in ("backend", "device", "model", "mode")]
        if any("/" in p for p in parts):
            continue  # `bench show` cannot name it (a real bench's name holds a slash)
        name = "/".join(parts)
        assert cli.main(["show", name, "--data", str(data)]) == 0
        got[f"show {name}"] = capsys.readouterr().out
    head = make_record([ok("mlp", "train", 950.0), ok("cnn", "train", 91.0)], device="rtx",
                       started_at=T0 + timedelta(days=24), environment={"keras_source": "git"}, run_id="head")
    for fmt in ("markdown", "json"):
        assert cli.main(["compare", "--base", str(data), "--head", str(write(head, data.parent / "head")),
                         "--format", fmt]) == 0
        got[f"compare {fmt}"] = capsys.readouterr().out
    site = data.parent / f"{data.name}-site"
    assert cli.main(["site", "--data", str(data), "--out", str(site), "--no-plots"]) == 0
    capsys.readouterr()
    for f in sorted((site / "data").rglob("*")):
        if f.is_file() and f.name != "index.js":
            text = f.read_text(encoding="utf-8")
            if f.name == "index.json":
                index = json.loads(text)
                index.pop("generated_at")
                text = json.dumps(index, sort_keys=True)
            got[str(f.relative_to(site))] = text
    return got


def test_the_same_tables_and_statuses_byte_for_byte_with_and_without_the_summary(tmp_path, capsys):
    folders = [write_data(rich_history(), tmp_path / "rich"), *realhist(tmp_path)]
    for data in folders:
        before = outputs(data, capsys)
        assert cli.main(["summary", "--data", str(data)]) == 0
        assert "rebuilt" in capsys.readouterr().err
        after = outputs(data, capsys)
        assert sorted(after) == sorted(before)
        for name in before:
            assert after[name] == before[name], f"{data.name}: {name} differs with the summary"
    statuses = {r["status"] for r in json.loads(before["json"])} | {
        r["status"] for r in json.loads(outputs(folders[0], capsys)["json"])}
    assert {"Regressed", "Steady"} <= statuses  # the histories exercise the rule, not only Steady


def test_the_summary_says_which_records_it_covers(tmp_path, capsys):
    data = write_data(rich_history(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data), "--check"]) == 1
    assert "missing" in capsys.readouterr().err
    assert cli.main(["summary", "--data", str(data)]) == 0
    cov = json.loads((data / "summary" / "coverage.json").read_text())
    files = sorted(str(p.relative_to(data)) for p in (data / "runs").rglob("*.json"))
    assert cov["count"] == len(files)
    months = {}
    for f in files:
        months.setdefault(summary.month_of(f), []).append(f)
    assert {m: (v["count"], v["hash"]) for m, v in cov["months"].items()} == {
        m: summary.month_hash(fs) for m, fs in months.items()}
    assert cli.main(["summary", "--data", str(data), "--check"]) == 0
    assert f"fresh: {len(files)} records" in capsys.readouterr().err


def test_a_stale_summary_is_said_in_one_line_and_the_records_are_read(tmp_path, capsys):
    data = write_data(rich_history(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    late = make_record([ok("mlp", "train", 1.0)], device="new-box", started_at=T0 + timedelta(days=23, hours=1))
    write(late, data, late.relpath())
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    stale = [line for line in err.splitlines() if "is stale" in line]
    assert len(stale) == 1 and "runs/2026/11" in stale[0] and "bench summary --data" in stale[0]
    assert any(r["device"] == "new-box" for r in json.loads(out))  # the records were read
    assert cli.main(["summary", "--data", str(data)]) == 0
    assert "1 month(s) rebuilt" in capsys.readouterr().err
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    out2, err2 = capsys.readouterr()
    assert out2 == out and "is stale" not in err2


def test_a_tampered_month_file_reads_as_stale(tmp_path, capsys):
    data = write_data(rich_history(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    month = sorted((data / "summary").glob("*.jsonl"))[0]
    month.write_text("".join(month.read_text().splitlines(keepends=True)[1:]))
    found, why = summary.read(data)
    assert found is None and month.name in why


def test_a_sparse_checkout_trusts_the_months_it_left_out(tmp_path):
    data = write_data(rich_history(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    (data / "runs" / "2026" / "10").rename(tmp_path / "october")  # as if not checked out
    assert summary.read(data)[0] is None
    (data / ".git" / "info").mkdir(parents=True)
    (data / ".git" / "info" / "sparse-checkout").write_text("/summary/\n/runs/2026/11/\n")
    found, why = summary.read(data)
    assert found is not None and why == ""


def test_bad_and_future_files_are_named_from_the_summary_as_from_the_records(tmp_path, capsys):
    data = write_data(rich_history(), tmp_path / "d")
    (data / "runs" / "2026" / "11" / "03" / "broken.json").write_text("{not json")
    future = make_record([ok("mlp", "train", 1.0)], started_at=T0.replace(year=2999))
    write(future, data, future.relpath())
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data)]) == 0
    plain = capsys.readouterr()
    assert cli.main(["summary", "--data", str(data)]) == 0
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data)]) == 0
    summed = capsys.readouterr()
    now = re.compile(r"after \S+Z")  # the clock's time, a second apart
    assert summed.out == plain.out and now.sub("", summed.err) == now.sub("", plain.err)
    assert "broken.json: not valid JSON" in summed.err and "dated 2999-" in summed.err


def git(*args, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def branch_with_summary(tmp_path: Path) -> tuple[Path, Path]:
    """(a checkout of the rich history with its summary, committed on gh-pages; a bare clone of it)."""
    work = write_data(rich_history(), tmp_path / "work")
    assert cli.main(["summary", "--data", str(work)]) == 0
    git("init", "-q", "-b", "gh-pages", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "history", cwd=work)
    bare = tmp_path / "data.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return work, bare


def test_publish_appends_to_the_branchs_summary_touching_only_the_newest_month(tmp_path, capsys):
    work, bare = branch_with_summary(tmp_path)
    new = make_record([ok("mlp", "train", 990.0)], device="rtx", started_at=T0 + timedelta(days=30))
    path = write(new, tmp_path / "new")
    assert cli.main(["publish", "--repo", str(bare), str(path)]) == 0
    changed = git("--git-dir", str(bare), "diff-tree", "-r", "--no-renames", "--name-status", "HEAD~1", "HEAD",
                  cwd=tmp_path).split("\n")
    assert sorted(filter(None, changed)) == sorted([f"A\t{new.relpath()}", "A\tsummary/2026-12.jsonl",
                                                    "M\tsummary/coverage.json"])
    clone = tmp_path / "clone"
    git("clone", "-q", str(bare), str(clone), cwd=tmp_path)
    capsys.readouterr()
    assert cli.main(["summary", "--data", str(clone), "--check"]) == 0
    # What publish appended (the month's lines, count, hash and nights) is what a rebuild writes.
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    (rebuilt / "runs").symlink_to(clone / "runs")
    assert cli.main(["summary", "--data", str(rebuilt)]) == 0
    for name in ("coverage.json", "2026-12.jsonl"):
        assert (rebuilt / "summary" / name).read_text() == (clone / "summary" / name).read_text()
    assert cli.main(["report", "--data", str(clone), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "is stale" not in err
    shutil_copy = tmp_path / "plain"
    (shutil_copy).mkdir()
    (shutil_copy / "runs").symlink_to(clone / "runs")
    assert cli.main(["report", "--data", str(shutil_copy), "--format", "json"]) == 0
    assert capsys.readouterr().out == out


def test_publish_leaves_a_branch_without_a_summary_without_one(tmp_path):
    work = write_data(rich_history()[:3], tmp_path / "work")
    git("init", "-q", "-b", "gh-pages", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "history", cwd=work)
    bare = tmp_path / "data.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    new = make_record([ok("mlp", "train", 990.0)], started_at=T0 + timedelta(days=30))
    assert cli.main(["publish", "--repo", str(bare), str(write(new, tmp_path / "new"))]) == 0
    assert git("--git-dir", str(bare), "ls-tree", "--name-only", "gh-pages", cwd=tmp_path).split() == ["runs"]


def expand(deltas: list[int]) -> list[int]:
    out, at = [], 0
    for d in deltas:
        at += d
        out.append(at)
    return out


def test_the_site_downloads_the_overview_first_and_each_history_apart(tmp_path, capsys):
    data = write_data(history(120, seed=2, targets=(("jax", "cpu"),)), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    assert cli.main(["site", "--data", str(data), "--out", str(tmp_path / "site"), "--no-plots"]) == 0
    site = tmp_path / "site"
    index = json.loads((site / "data" / "index.json").read_text())
    series = all_series(RunRecord.from_dict(json.loads(p.read_text()), str(p))
                        for p in sorted((data / "runs").rglob("*.json")))
    prefix = "window.BENCH_TABLES = "
    tables = json.loads((site / "data" / "tables.js").read_text()[len(prefix):].rstrip().rstrip(";"))
    for entry in index["series"]:
        full = series[(entry["backend"], entry["device"], entry["model"], entry["mode"])]
        assert entry["nights"] == len(full.points) > 90 and len(entry["values"]) == 90
        assert entry["history"] == f"data/series/jax--cpu--{entry['model']}--{entry['mode']}.js"
        text = (site / entry["history"]).read_text()
        prefix = f'(window.BENCH_SERIES = window.BENCH_SERIES || {{}})["{entry["history"]}"] = '
        assert text.startswith(prefix)
        whole = json.loads(text[len(prefix):].rstrip().rstrip(";"))
        assert len(whole["values"]) == len(full.points) and whole["values"][-90:] == entry["values"]
        assert expand(whole["days"])[-90:] == expand(entry["days"])
        run_ids = [tables["runs"][i][0] for i in expand(whole["run"])]
        assert run_ids == [p.run_id for p in full.points]  # indexed into data/tables.js, the one table
    assert (site / "data" / "index.js").read_text() == f"window.BENCH_DATA = {(site / 'data' / 'index.json').read_text().rstrip()};\n"
    assert not list((site / "data").glob("*.json.*"))


@pytest.mark.parametrize("verb", ["report", "show", "site", "compare", "alert", "summary"])
def test_the_cli_imports_only_the_verb_it_runs(verb):
    code = ("import sys; from bench import cli; cli.build_parser((sys.argv[1],)); "
            "import json; print(json.dumps(sorted(m for m in sys.modules if m.startswith('bench.commands.'))))")
    out = subprocess.run([sys.executable, "-c", code, verb], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parent.parent).stdout
    mods = json.loads(out)
    assert f"bench.commands.{verb}" in mods
    others = {m for m in mods if m.rsplit(".", 1)[1] not in (verb, "arguments", "source")}
    assert not others, f"bench {verb} imports {others}"


def test_a_record_outside_a_month_folder_makes_the_summary_stale_and_is_refused_by_bench_summary(tmp_path, capsys):
    data = write_data(rich_history()[:3], tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    stray = data / "runs" / "stray.json"
    stray.write_text((next((data / "runs").rglob("*.json"))).read_text())
    found, why = summary.read(data)
    assert found is None and "runs/stray.json" in why
    capsys.readouterr()
    assert cli.main(["summary", "--data", str(data)]) == 2
    assert "runs/stray.json: a record file outside runs/YYYY/MM/" in capsys.readouterr().err


def test_checkout_data_checks_out_the_summary_and_the_newest_months_and_the_report_reads_them_all(tmp_path, capsys):
    work, bare = branch_with_summary(tmp_path)  # October, November and a rerun in them
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(["bash", str(root / "scripts" / "checkout-data.sh"), str(tmp_path / "data")],
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DATA_REPO": f"file://{bare}",
                              "DATA_MONTHS": "1"}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = tmp_path / "data"
    assert sorted(p.name for p in (data / "runs" / "2026").iterdir()) == ["11"]  # October left out
    assert (data / "summary" / "coverage.json").is_file()
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    got = capsys.readouterr()
    assert cli.main(["report", "--data", str(work), "--format", "json"]) == 0
    assert got.out == capsys.readouterr().out and "is stale" not in got.err


def test_checkout_data_of_a_branch_without_a_summary_checks_out_every_month(tmp_path, capsys):
    # A branch written before summary/ existed: a sparse checkout would leave
    # the readers two months that they would take for the whole history.
    work = write_data(rich_history(), tmp_path / "work")
    git("init", "-q", "-b", "gh-pages", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "history", cwd=work)
    bare = tmp_path / "data.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(["bash", str(root / "scripts" / "checkout-data.sh"), str(tmp_path / "data")],
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DATA_REPO": f"file://{bare}",
                              "DATA_MONTHS": "1"}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "no summary on the data branch" in out.stdout and "(all of it)" in out.stderr
    data = tmp_path / "data"
    assert sorted(p.name for p in (data / "runs" / "2026").iterdir()) == ["10", "11"]
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    got = capsys.readouterr().out
    assert cli.main(["report", "--data", str(work), "--format", "json"]) == 0
    assert got == capsys.readouterr().out


@pytest.mark.parametrize("damage", ["started_at", "rows"])
def test_a_summary_line_of_the_wrong_shape_is_stale_and_the_records_are_read(tmp_path, capsys, damage):
    # Its paths still match runs/ (so the coverage hash holds), but a field is
    # gone: one line says so, and the table is the records' own.
    data = write_data(rich_history(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    month = sorted((data / "summary").glob("*.jsonl"))[-1]
    lines = [json.loads(x) for x in month.read_text().splitlines()]
    del lines[0][damage]
    month.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    got = capsys.readouterr()
    assert "summary/ is stale (a line of the wrong shape" in got.err and "Traceback" not in got.err
    for f in (data / "summary").iterdir():
        f.unlink()
    (data / "summary").rmdir()
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    assert got.out == capsys.readouterr().out


def test_a_reader_run_as_the_program_prints_and_exits_as_in_process(tmp_path, capsys):
    # report, site and show run as `python -m bench` leave without freeing what
    # they built (bench.cli.READERS): their output is flushed and their exit
    # code kept, --fail-on's 1 included.
    data = write_data(rich_history(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    root = Path(__file__).resolve().parent.parent
    for args in (["report", "--data", str(data), "--format", "json", "--fail-on", "regressed"],
                 ["show", "jax/rtx-5070-ti/cnn/train", "--data", str(data)],
                 ["site", "--data", str(data), "--out", str(tmp_path / "site"), "--no-plots"]):
        capsys.readouterr()
        code = cli.main(args)
        want = capsys.readouterr()
        got = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=root)
        assert (got.returncode, got.stdout, got.stderr) == (code, want.out, want.err), args[0]
    assert code == 0 and json.loads((tmp_path / "site" / "data" / "index.json").read_text())["series"]
    assert cli.main(["report", "--data", str(data), "--fail-on", "regressed"]) == 1  # the exit code that was kept


def test_show_reads_its_own_target_whole_and_the_others_newest_months_and_prints_the_same(tmp_path, capsys, monkeypatch):
    """`bench show` reads of a fresh summary its target's lines of every month
    and every line of the newest RECENT_MONTHS months: the same nights,
    statuses, whose change and skipped files as from the records; when the
    newest months cannot tell the other cells' shift (the change before them),
    it reads everything."""
    from bench.commands import show, source
    from bench.records import synthetic

    targets = synthetic.TARGETS[:5]
    change = [Step(144, 0.8)]  # 2026-11-25 of 150 nights ending 2026-12-01: a change most cells share
    steps = {(b, d, "cnn", "train"): change for b, d in targets if b != "openvino"}
    data = tmp_path / "d"
    synthetic.write_history(data, 150, targets=targets, steps=steps, dip_rate=0.0, fail_rate=0.02)
    bad = data / "runs" / "2026" / "07" / "10" / "not-a-record.json"
    bad.write_text("[]")
    keys = [f"{b}/{d}/{m}" for b, d in targets for m in ("cnn/train", "mlp/predict")]

    def shows():
        out = {}
        for key in keys:
            assert cli.main(["show", key, "--data", str(data)]) == 0
            got = capsys.readouterr()
            out[key] = (got.out, got.err)
        return out

    before = shows()  # no summary: every record
    assert sum("whose change:" in out for out, _ in before.values()) == 4
    assert all("not-a-record.json" in err for _, err in before.values())
    assert cli.main(["summary", "--data", str(data)]) == 0
    capsys.readouterr()
    read_all = []
    real = show.load_series
    monkeypatch.setattr(show, "load_series", lambda *a, **kw: read_all.append(a) or real(*a, **kw))
    for months, partial in ((4, True), (1, False)):
        monkeypatch.setattr(source, "RECENT_MONTHS", months)
        read_all.clear()
        after = shows()
        for key in keys:
            assert after[key] == before[key], f"show {key} differs reading {months} month(s) whole"
        if partial:  # every show read only its part of the summary
            assert read_all == []
        else:  # the cnn/train change lies before December: those read everything
            assert len(read_all) == 4


def test_a_record_whose_night_is_in_the_newest_months_is_read_from_an_older_month(tmp_path):
    """A record lies in its start's month; its night may be later. read_some
    reads it wherever it lies, so every night from `since` on is whole."""
    recs = list(history(120, targets=(("jax", "cpu"), ("torch", "cpu"))))
    late = make_record([ok("mlp", "train", 5.0)], device="cpu", started_at=T0 - timedelta(days=400),
                       run={"night": recs[-1].night.isoformat()}, run_id="late")
    data = write_data([*recs, late], tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    found, why, since = summary.read_some(data, (summary.target_needle("jax", "cpu"),), 2)
    assert why == "" and since == sorted(json.loads((data / "summary" / "coverage.json").read_text())["months"])[-2]
    paths = {x["path"] for x in found.lines}
    assert late.relpath() in paths
    backends = {x["backend"] for x in found.lines if x["path"] < f"runs/{since.replace('-', '/')}" and x["path"] != late.relpath()}
    assert backends == {"jax"}  # of the older months, the jax target's lines only
    summary_text = (data / "summary" / f"{since}.jsonl").read_text()
    (data / "summary" / f"{since}.jsonl").write_text(summary_text.replace("torch", "torcx", 1))
    assert summary.read_some(data, (summary.target_needle("jax", "cpu"),), 1)[0] is not None  # a line's content is not its path
    first = sorted((data / "summary").glob("????-??.jsonl"))[0]
    lines = first.read_text().splitlines()
    first.write_text("\n".join(lines[1:]) + "\n")
    found, why, _ = summary.read_some(data, (summary.target_needle("jax", "cpu"),), 1)
    assert found is None and first.name in why  # a month read in part is still checked against its coverage


def test_the_columns_of_a_series_read_from_the_summary_are_its_points_fields(tmp_path, capsys):
    # The site reads every point's fields as columns (series.columns), made
    # from the summary's lines without a Point: they must be the fields of the
    # points the same series makes, and of the series every record gives.
    from bench.analyse.series import columns
    from bench.commands.source import load_series

    data = write_data(rich_history(), tmp_path / "rich")
    assert cli.main(["summary", "--data", str(data)]) == 0
    fast = load_series(data, verb="site", warn=None)
    slow = load_series(data, verb="site", warn=None, use_summary=False)
    assert (fast.via, slow.via) == ("summary", "records")
    assert sorted(fast.series) == sorted(slow.series)
    hosts = 0
    for key, s in fast.series.items():
        got = columns(s.points)
        assert got == columns(tuple(s.points)), key  # made from the points, field by field
        assert got == columns(slow.series[key].points), key
        assert len(got.days) == len(s.points)
        hosts += sum(h is not None for h in got.hosts)
    assert hosts  # the rich history's host readings were compared too
    # A night's records share one run object: the site indexes runs by identity.
    runs = {id(r) for s in fast.series.values() for r in columns(s.points).runs}
    assert len(runs) < sum(len(s.points) for s in fast.series.values())
