"""`bench show` prints the last --nights nights (default 90) or every night
(--all). From a fresh summary it opens only the newest months that hold
what it prints, and prints the same bytes (stdout and stderr) as from every
record, whatever lies in the months it leaves unopened."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from bench import cli
from bench import config
from bench.commands import source
from bench.commands.show import NIGHTS, _need
from bench.records import summary
from bench.records.record import write
from tests.helpers import T0, failed, make_record, ok, skipped, write_data
from tests.test_summary import worker

DAYS = 260  # ten months: the default's nights lie in the newest seven
START = T0 - timedelta(days=DAYS + 20)
STEP = DAYS - 6  # the night mlp/train turns 30 % slower
KEYS = ("jax/rtx/mlp/train", "jax/rtx/cnn/train", "torch/rtx/mlp/train")
VARIANTS = ((), ("--nights", "1"), ("--nights", "37"), ("--nights", "500"), ("--all",))


def records(days: int = DAYS, *, sibling=None) -> list:
    """Two targets a night for the last `days` of DAYS nights: a step at
    night STEP, a host whose reference workload moves (the HOST column), a
    Keras commit, failures. `sibling(i)`: jax's mlp/predict result of night i, or None."""
    recs = []
    for i in range(DAYS - days, DAYS):
        t = START + timedelta(days=i)
        level = 1000.0 if i < STEP else 700.0
        ref = 0.002 * (1 + 0.04 * ((i * 7) % 5))
        for backend in ("jax", "torch"):
            results = [ok("mlp", "train", level * (1 + 0.01 * ((i * 3) % 4)), workers=[worker(ref)])]
            results.append(failed("cnn", "train", "oom") if i % 9 == 4 else ok("cnn", "train", 90.0 + i % 3))
            if backend == "jax" and sibling is not None and sibling(i) is not None:
                results.append(sibling(i))
            recs.append(make_record(results, backend=backend, device="rtx", started_at=t,
                                    keras_version=f"3.16.0.dev{t:%Y%m%d}02",
                                    environment={"keras_commit": f"{i + 1:040x}"}))
    return recs


def shows(data, capsys, variants=VARIANTS) -> dict:
    capsys.readouterr()
    out = {}
    for key in KEYS:
        for v in variants:
            assert cli.main(["show", key, "--data", str(data), *v]) == 0
            out[key, v] = capsys.readouterr()
    return out


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The months whose summary file a read opens ('YYYY-MM')."""
    got: list[str] = []
    some, whole = summary._some_lines, summary._whole_month
    monkeypatch.setattr(summary, "_some_lines", lambda path, *a: got.append(path.stem) or some(path, *a))
    monkeypatch.setattr(summary, "_whole_month", lambda folder, month, *a: got.append(month) or whole(folder, month, *a))
    return got


def test_the_last_nights_print_the_same_from_the_newest_months_of_the_summary_as_from_every_record(tmp_path, capsys, opened):
    data = write_data(records(), tmp_path / "d")
    (data / "runs" / "2026" / "02" / "10" / "broken.json").write_text("{not json")  # named from either
    before = shows(data, capsys)  # no summary: every record
    assert all("broken.json" in got.err for got in before.values())
    assert cli.main(["summary", "--data", str(data)]) == 0
    months = sorted(json.loads((data / "summary" / "coverage.json").read_text())["months"])
    for variant in VARIANTS:
        opened.clear()
        after = shows(data, capsys, (variant,))
        for key in KEYS:
            assert after[key, variant] == before[key, variant], f"show {key} {' '.join(variant)}"
        # The default's and a few nights' need lie in the newest months; --all and 500 nights need every
        # one. The month with a broken file is opened to name it.
        assert (months[0] in opened) == (variant in (("--nights", "500"), ("--all",))), (variant, sorted(set(opened)))
        assert "2026-02" in opened

    text = before["jax/rtx/mlp/train", ()].out.splitlines()
    assert text[0].startswith(f"jax/rtx/mlp/train: Regressed, the last {NIGHTS} nights (--all: every night),")
    nights = [line.split()[0] for line in text[2:2 + NIGHTS]]
    assert nights == [(START + timedelta(days=i)).date().isoformat() for i in range(DAYS - NIGHTS, DAYS)]
    assert text[2 + NIGHTS].startswith("change: Keras")
    assert "◆ change" in before["jax/rtx/mlp/train", ("--nights", "37")].out
    one = before["jax/rtx/mlp/train", ("--nights", "1")].out.splitlines()
    assert one[0].split(", ")[1] == "the last 1 nights (--all: every night)" and len(one[2].split()) >= 6
    assert "◆ change" not in one[2]  # the change is before the last night, but the status still reads it
    assert "Regressed" in one[0] and one[3].startswith("change: Keras")
    every = before["jax/rtx/mlp/train", ("--all",)].out
    assert every.startswith(f"jax/rtx/mlp/train: Regressed, {DAYS} nights,")
    assert every == before["jax/rtx/mlp/train", ("--nights", "500")].out
    # The HOST column and Δ PREV of the first night printed read the nights before it.
    first = text[2].split()
    assert first[2] != "—" and first[5] != "—"
    # Failures since the first night printed, not before.
    cnn = before["jax/rtx/cnn/train", ()].out.splitlines()
    fails = [line for line in cnn if "✖ oom" in line]
    assert fails and all(line.split()[0] >= cnn[2].split()[0] for line in fails)
    assert len([x for x in before["jax/rtx/cnn/train", ("--all",)].out.splitlines() if "✖ oom" in x]) > len(fails)


def test_an_old_month_is_not_opened_and_a_new_night_in_one_opens_it(tmp_path, capsys):
    """The newest nights come from the newest months unless the coverage says
    an older month holds one of them (a record lies in its start's month; its
    night may be later). A month file nobody needs may be broken: the default
    show does not open it; --all does, finds it stale and reads the records."""
    recs = records()
    late = make_record([ok("mlp", "train", 555.0, workers=[worker(0.002)])], backend="jax", device="rtx",
                       started_at=START + timedelta(days=2),
                       run={"night": (recs[-1].night + timedelta(days=1)).isoformat()}, run_id="late")
    data = write_data([*recs, late], tmp_path / "d")
    # Started last night but of an old night, laid by hand in an old month's folder that no late
    # night opens: the failure the series ends on (the status and ✖ rows read a failure's start).
    old_night = recs[2 * 40].night  # night 40 of each target: some two months in
    stray = make_record([failed("mlp", "train", "oom")], backend="torch", device="rtx",
                        started_at=START + timedelta(days=DAYS - 1, hours=5), run={"night": old_night.isoformat()},
                        run_id="stray")
    write(stray, data, f"runs/{old_night:%Y/%m/%d}/torch--rtx--stray.json")
    before = shows(data, capsys, ((), ("--all",)))
    assert cli.main(["summary", "--data", str(data)]) == 0
    coverage = json.loads((data / "summary" / "coverage.json").read_text())
    oldest = min(coverage["months"])
    assert coverage["months"][oldest]["dates"][-1] == late.night.isoformat()[:7]
    assert coverage["months"][f"{old_night:%Y-%m}"]["dates"][-1] == f"{recs[-1].night:%Y-%m}"  # by its start alone
    assert f"{old_night:%Y-%m}" != oldest
    assert "555" in before["jax/rtx/mlp/train", ()].out
    assert before["torch/rtx/mlp/train", ()].out.startswith("torch/rtx/mlp/train: Failed")
    assert shows(data, capsys, ((), ("--all",))) == before  # both read from their old month

    data2 = write_data(recs, tmp_path / "d2")
    before = shows(data2, capsys, ((), ("--all",)))
    assert cli.main(["summary", "--data", str(data2)]) == 0
    (data2 / "summary" / f"{oldest}.jsonl").write_text("not a summary month\n")
    after = shows(data2, capsys, ((), ("--all",)))
    for key in KEYS:
        assert after[key, ()] == before[key, ()]
        assert after[key, ("--all",)].out == before[key, ("--all",)].out
        assert f"summary/ is stale (summary/{oldest}.jsonl" in after[key, ("--all",)].err


def test_a_summary_without_dates_opens_every_month_and_bench_summary_adds_them(tmp_path, capsys, opened):
    data = write_data(records(), tmp_path / "d")
    assert cli.main(["summary", "--data", str(data)]) == 0
    path = data / "summary" / "coverage.json"
    built = path.read_text()
    cov = json.loads(built)
    for month in cov["months"].values():
        del month["dates"]
    cov["months"][max(cov["months"])]["dates"] = ["2020-01"]  # and one wrong: written afresh
    path.write_text(json.dumps(cov))  # as written before months had dates
    before = shows(data, capsys, ((),))
    assert min(cov["months"]) in opened
    assert cli.main(["summary", "--data", str(data)]) == 0
    assert path.read_text() == built
    opened.clear()
    assert shows(data, capsys, ((),)) == before and min(cov["months"]) not in opened


def test_coverage_names_a_bad_dates_value():
    good = {"format": 2, "months": {"2026-05": {"count": 1, "hash": "h", "dates": ["2026-05"]}}}
    cov = summary.Coverage({"2026-05": (1, "h")}, {"2026-05": ("2026-05",)})
    assert summary.Coverage.from_text(json.dumps({**good, "count": 1, "hash": cov.digest}), "c") == cov
    for bad in (["2026-5"], "2026-05", [5]):
        text = json.dumps({"format": 2, "count": 1, "hash": cov.digest,
                           "months": {"2026-05": {"count": 1, "hash": "h", "dates": bad}}})
        with pytest.raises(ValueError, match=r"c: summary coverage month '2026-05': dates .*expected"):
            summary.Coverage.from_text(text, "c")


@pytest.mark.parametrize("args, said", [(["--nights", "0"], "argument --nights: '0'; expected a whole number >= 1"),
                                        (["--nights", "x"], "argument --nights: 'x'; expected a whole number >= 1"),
                                        (["--nights", "3", "--all"], "not allowed with argument")])
def test_show_names_a_bad_nights_argument(tmp_path, capsys, args, said):
    data = write_data(records()[:4], tmp_path / "d")
    capsys.readouterr()
    assert cli.main(["show", "jax/rtx/mlp/train", "--data", str(data), *args]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 3  # usage (two lines) and the one error line


def test_a_merged_month_has_the_dates_of_its_old_lines_and_its_new_ones():
    """What publish appends: an old line's night may lie in another month
    (a rerun of an older night, a night later than its start); a month
    with a "skipped" line has no dates (a reader opens it to name the file)."""
    old = [{"path": "runs/2026/11/01/a.json", "night": "2026-10-31", "started_at": "2026-11-01T00:30:00Z"}]
    text = "".join(summary.line_text(x) + "\n" for x in old)
    new = [{"path": "runs/2026/11/02/c.json", "night": "2026-09-02", "started_at": "2026-11-02T02:00:00Z"},
           {"path": "runs/2026/11/01/a.json", "night": "2027-01-01", "started_at": "2027-01-01T00:00:00Z"}]  # kept as it was
    merged, (count, _), dates = summary.merge_month(text, new)
    assert count == 2 and dates == ("2026-09", "2026-10", "2026-11") == summary.dates_of(
        json.loads(line) for line in merged.splitlines())
    assert summary.merge_month(merged, [{"path": "runs/2026/11/03/x.json", "skipped": "not a record"}])[2] is None


def test_a_sibling_skipped_every_night_leaves_the_old_months_unopened_and_one_with_gaps_opens_them(tmp_path, capsys, opened):
    """A series with no night in the newest months cannot have a change there;
    one with a few nights there may need older ones for its status."""
    for name, sibling, old_opened in (
            ("skipped", lambda i: skipped("mlp", "predict"), False),
            ("gaps", lambda i: ok("mlp", "predict", 50.0 + i % 2) if i < 30 or i > DAYS - 20 else None, True)):
        data = write_data(records(sibling=sibling), tmp_path / name)
        before = shows(data, capsys, ((),))
        assert cli.main(["summary", "--data", str(data)]) == 0
        opened.clear()
        assert shows(data, capsys, ((),)) == before, name
        assert (min(opened) == f"{START:%Y-%m}") == old_opened, (name, sorted(set(opened)))


@pytest.mark.parametrize("last", [1, 37, NIGHTS])
def test_the_nights_show_needs_print_the_last_nights_as_every_night_does(tmp_path, capsys, last):
    """_need's rule: a series that holds only its last _need(N) nights, and
    the other target beside it the same nights, print the last N as the
    whole history does."""
    need = _need(last, config.load(None).trends)
    whole = write_data(records(), tmp_path / "whole")
    tail = write_data(records(need), tmp_path / "tail")
    for key in ("jax/rtx/mlp/train", "torch/rtx/mlp/train"):
        capsys.readouterr()
        assert cli.main(["show", key, "--data", str(whole), "--nights", str(last)]) == 0
        every = capsys.readouterr().out
        assert cli.main(["show", key, "--data", str(tail), "--nights", str(last)]) == 0
        assert capsys.readouterr().out == every, key


def test_load_target_asks_the_key_and_each_sibling_with_a_night_there_for_the_nights(tmp_path, monkeypatch):
    """_holds: the series shown must hold the nights, a sibling with nights in
    the months read too; a sibling without any there is left out."""
    from bench.analyse.series import all_series

    series = all_series(records(sibling=lambda i: ok("mlp", "predict", 50.0) if i < 30 else None))
    key = ("jax", "rtx", "mlp", "train")
    last = records()[-1].night
    first = f"{last:%Y-%m}"
    assert source._holds(series, key, 20, first) is (last.day >= 20)
    assert source._holds(series, key, 40, first) is False
    assert source._holds(series, ("jax", "rtx", "cnn", "predict"), 1, first) is False  # not in the data
    series[("jax", "rtx", "mlp", "predict")] = series[("jax", "rtx", "mlp", "train")]
    old = f"{records()[0].night:%Y-%m}"
    assert source._holds(series, key, DAYS - 40, old) is True


@pytest.mark.parametrize("case", ["a night after every month", "started after the newest night, laid in an old month"])
def test_another_targets_record_newer_than_the_months_read_whole_is_read_from_an_older_month(tmp_path, capsys, case):
    """A month read in part gives, besides its own target's lines, every line
    of a night or started in the months read whole or later: another
    target's such record names itself on stderr (a night after the newest
    run) or moves the newest run that the staleness rule reads."""
    recs = records()
    if case == "a night after every month":
        odd = make_record([ok("mlp", "train", 900.0, workers=[worker(0.002)])], backend="torch", device="rtx",
                          started_at=START + timedelta(days=5), run={"night": "2027-06-01"}, run_id="odd")
        data = write_data([*recs, odd], tmp_path / "d")
    else:
        odd = make_record([ok("mlp", "train", 900.0, workers=[worker(0.002)])], backend="torch", device="rtx",
                          started_at=START + timedelta(days=DAYS + 15), run={"night": recs[0].night.isoformat()},
                          run_id="odd")
        data = write_data(recs, tmp_path / "d")
        write(odd, data, f"runs/{START:%Y/%m}/{START.day + 1:02d}/torch--rtx--odd.json")
    before = shows(data, capsys, ((), ("--all",)))
    assert ("dated 2027-06-01" in before["jax/rtx/mlp/train", ()].err if case.startswith("a night")
            else before["jax/rtx/mlp/train", ()].out.startswith("jax/rtx/mlp/train: Stale"))
    assert cli.main(["summary", "--data", str(data)]) == 0
    after = shows(data, capsys, ((), ("--all",)))
    at_now = lambda text: re.sub(r"after \S+Z \(\d+ h from now\)", "after NOW", text)  # noqa: E731 - the clock's reading
    assert {k: (v.out, at_now(v.err)) for k, v in after.items()} == {k: (v.out, at_now(v.err)) for k, v in before.items()}
