"""bench.present.site and `bench site` / `bench serve`: the data the dashboard reads.

The page itself is tested in a browser (test_site_browser.py); these check the
files written: every point, delta-encoded; labels and messages verbatim; the
runs table; the change and its levels; refusing to overwrite a folder that
is not a site.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import types
from pathlib import Path
import urllib.request
from datetime import date, datetime, timedelta, timezone
from itertools import accumulate

import pytest

from bench import cli
from bench.commands.serve import make_server
from bench.config import Trends
from bench.present.markdown import render_markdown
from bench.present.table import Row, build_rows
from bench.analyse.series import build_series
from bench.present.site import MESSAGE_CHARS, TEMPLATE, SiteError, _round, _rounded, site_index, write_site
from bench.analyse.trends import Change
from tests.helpers import T0, failed, make_record, nightly_series, ok, write_data

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
EVIL = '<img src=x onerror="window.__pwned=1">'
URL = "https://github.com/example/keras-nightly-bench/actions/runs/"


def epoch_day(d: date) -> int:
    return (d - date(1970, 1, 1)).days


def row(s, *, latest, delta, status="Steady", change=None, trend="▁█") -> Row:
    return Row(backend=s.backend, device=s.device, model=s.model, mode=s.mode, latest=latest,
               delta_prev=delta, trend=trend, runs=len(s.points), status=status, unit=s.unit,
               better=s.better, change=change, last_failure=s.failures[-1] if s.failures else None)


def evil_series():
    """Three points (one night missed between the 2nd and 3rd), then a failure."""
    days = [0, 1, 3]
    values = [100.123456789, 101.0, 103.0]
    recs = [make_record([ok("cnn", "train", v)], backend=EVIL, started_at=T0 + timedelta(days=d),
                        run_id=f"r{d}", keras_version=f"3.16.0.dev{d}<b>", url=f"{URL}{d}")
            for d, v in zip(days, values)]
    recs.append(make_record([failed("cnn", "train", "oom", "<script>alert(1)</script> OOM")], backend=EVIL,
                            started_at=T0 + timedelta(days=4), run_id="r4", keras_version="3.16.0.dev4"))
    return build_series(recs)


def test_index_has_every_point_delta_encoded_with_labels_verbatim():
    series = evil_series()
    (s,) = series.values()
    rows = [row(s, latest=103.0, delta=0.0198, status="Failed", change=Change(1, 100.0, 102.0, 0.02))]
    index = site_index(series, rows, generated_at=NOW)
    assert index["format"] == 2 and index["generated_at"] == "2026-12-02T12:00:00Z"
    assert index["newest_run"] == "2026-11-05T02:00:00Z"
    (entry,) = index["series"]
    for key in ("backend", "device", "model", "mode", "latest", "delta_prev", "trend", "runs", "status"):
        assert key in entry
    assert (entry["backend"], entry["device"], entry["model"], entry["mode"]) == (EVIL, "local-cpu", "cnn", "train")
    assert (entry["latest_text"], entry["delta_text"], entry["status"]) == ("103", "+2.0%", "Failed")
    assert entry["note"] == "oom: <script>alert(1)</script> OOM"
    assert (entry["unit"], entry["better"], entry["skipped"], entry["plot"]) == ("samples/s", "bigger", 0, None)
    first = epoch_day(T0.date())
    assert entry["days"] == [first, 1, 2]
    assert list(accumulate(entry["days"])) == [first, first + 1, first + 3]
    assert entry["values"] == [100.123, 101.0, 103.0]
    runs = [index["runs"][i] for i in accumulate(entry["run"])]
    assert runs == [["r0", 1, "3.16.0.dev0<b>", f"{URL}0"], ["r1", 1, "3.16.0.dev1<b>", f"{URL}1"],
                    ["r3", 1, "3.16.0.dev3<b>", f"{URL}3"]]
    assert entry["failures"] == [[first + 4, 3, "oom", "<script>alert(1)</script> OOM"]]
    assert index["runs"][3] == ["r4", 1, "3.16.0.dev4", None]
    assert entry["change"] == {"index": 1, "day": first + 1, "from_day": first, "before": 100.0,
                               "after": 102.0, "relative": 0.02}


def test_runs_are_shared_across_series_in_time_order_and_a_rerun_supersedes():
    night = [make_record([ok("cnn", "train", 10.0)], backend=b, started_at=T0, run_id="7", url=f"{URL}7")
             for b in ("jax", "torch")]
    rerun = make_record([ok("cnn", "train", 12.0)], backend="jax", started_at=T0 + timedelta(hours=1),
                        run_id="7", attempt=2, url=f"{URL}7")
    later = [make_record([ok("cnn", "train", 11.0)], backend=b, started_at=T0 + timedelta(days=1), run_id="8")
             for b in ("jax", "torch")]
    series = build_series([*night, rerun, *later])
    rows = [row(s, latest=s.points[-1].value, delta=None) for s in series.values()]
    index = site_index(series, rows, generated_at=NOW)
    assert index["runs"] == [["7", 1, "3.16.0.dev2026110102", f"{URL}7"], ["7", 2, "3.16.0.dev2026110102", f"{URL}7"],
                             ["8", 1, "3.16.0.dev2026110102", None]]
    jax, torch = index["series"]
    assert list(accumulate(jax["run"])) == [1, 2] and jax["values"] == [12.0, 11.0]
    assert list(accumulate(torch["run"])) == [0, 2] and torch["values"] == [10.0, 11.0]
    assert jax["delta_text"] == "—"


def test_series_without_points_has_empty_arrays_and_a_dash():
    series = build_series([make_record([failed("mlp", "predict", "crash", "segfault")])])
    (s,) = series.values()
    (entry,) = site_index(series, [row(s, latest=None, delta=None, status="Failed", trend="")],
                          generated_at=NOW)["series"]
    assert (entry["days"], entry["values"], entry["run"], entry["change"]) == ([], [], [], None)
    assert entry["latest_text"] == "—" and entry["failures"][0][2:] == ["crash", "segfault"]


def test_a_huge_failure_message_is_cut_for_the_page():
    trace = "Traceback (most recent call last):\n" + "  frame\n" * 1000
    series = build_series([make_record([failed("mlp", "predict", "crash", trace)])])
    (s,) = series.values()
    (entry,) = site_index(series, [row(s, latest=None, delta=None, status="Failed", trend="")],
                          generated_at=NOW)["series"]
    message = entry["failures"][0][3]
    assert len(message) == MESSAGE_CHARS and message == trace[:MESSAGE_CHARS - 1] + "…"


def build(tmp_path, n=3):
    series = build_series(nightly_series([100.0 + i for i in range(n)], url=f"{URL}1"))
    return series, build_rows(series, Trends())


def test_write_site_copies_the_template_and_writes_the_data(tmp_path):
    series, rows = build(tmp_path)
    index_path = write_site(tmp_path / "site", series, rows, generated_at=NOW, plots=False)
    site = tmp_path / "site"
    assert index_path == site / "data" / "index.json"
    for f in ("index.html", "app.js", "style.css", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css",
              "vendor/uPlot.LICENSE", ".nojekyll"):
        assert (site / f).is_file(), f
    assert (site / "app.js").read_bytes() == (TEMPLATE / "app.js").read_bytes()
    text = index_path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    assert data == site_index(series, rows, generated_at=NOW)
    assert (site / "data" / "table.md").read_text(encoding="utf-8") == render_markdown(rows)
    assert not list(tmp_path.glob(".site.*")), "scratch folders are cleaned up"


def test_write_site_replaces_an_earlier_site(tmp_path):
    series, rows = build(tmp_path)
    site = tmp_path / "site"
    write_site(site, series, rows, generated_at=NOW, plots=False)
    (site / "plots").mkdir()
    (site / "plots" / "gone--series.png").write_bytes(b"old")
    series, rows = build(tmp_path, n=5)
    write_site(site, series, rows, generated_at=NOW, plots=False)
    assert not (site / "plots" / "gone--series.png").exists()
    assert len(json.loads((site / "data" / "index.json").read_text())["series"][0]["values"]) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_write_site_refuses_a_folder_that_is_not_a_site_and_keeps_its_files(tmp_path):
    series, rows = build(tmp_path)
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SiteError, match=r"--out .*docs: folder is not empty and holds no earlier site"):
        write_site(out, series, rows, generated_at=NOW, plots=False)
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_write_site_names_a_template_missing_its_files(tmp_path):
    series, rows = build(tmp_path)
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "index.html").write_text("<!doctype html>")
    with pytest.raises(SiteError, match=r"template .*tpl: missing app.js, style.css"):
        write_site(tmp_path / "site", series, rows, generated_at=NOW, plots=False, template=tmp_path / "tpl")
    assert not (tmp_path / "site").exists()


def fake_plots(monkeypatch, written):
    """A stand-in for bench.present.plots that writes only the series named in `written`."""
    mod = types.ModuleType("bench.present.plots")
    mod.plot_name = lambda key: "--".join(key) + ".png"

    def write_plots(series, rows, out_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = [out_dir / mod.plot_name(k) for k in series if k[3] in written] + [out_dir / "overview.png"]
        for p in paths:
            p.write_bytes(b"\x89PNG")
        return paths

    mod.write_plots = write_plots
    monkeypatch.setitem(sys.modules, "bench.present.plots", mod)


def test_plot_paths_point_at_the_pngs_written(tmp_path, monkeypatch):
    recs = [make_record([ok("cnn", "train", 10.0), ok("cnn", "predict", 20.0)])]
    series = build_series(recs)
    rows = build_rows(series, Trends())
    fake_plots(monkeypatch, written={"train"})
    write_site(tmp_path / "site", series, rows, generated_at=NOW, plots=True)
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    assert [(s["mode"], s["plot"]) for s in index["series"]] == [
        ("predict", None), ("train", "plots/jax--local-cpu--cnn--train.png")]
    assert (tmp_path / "site" / "plots" / "jax--local-cpu--cnn--train.png").is_file()
    assert (tmp_path / "site" / "plots" / "overview.png").is_file()


def test_site_is_written_without_plots_when_plotting_cannot_be_imported(tmp_path, monkeypatch):
    series, rows = build(tmp_path)
    monkeypatch.setitem(sys.modules, "bench.present.plots", None)  # import raises ImportError
    warnings = []
    write_site(tmp_path / "site", series, rows, generated_at=NOW, plots=True, warn=warnings.append)
    assert len(warnings) == 1 and warnings[0].startswith("PNG plots skipped: ")
    assert json.loads((tmp_path / "site" / "data" / "index.json").read_text())["series"][0]["plot"] is None


def test_cli_site_builds_from_a_data_folder(tmp_path, capsys):
    data = write_data(nightly_series([5.0, 6.0, 7.0], url=f"{URL}9"), tmp_path / "data")
    (data / "runs" / "bad.json").write_text("{")
    assert cli.main(["site", "--data", str(data), "--out", str(tmp_path / "site"), "--no-plots"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'site' / 'index.html'}\n"
    assert "bench site: 1 series, 3 points, 1 files skipped" in err
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    assert index["series"][0]["values"] == [5.0, 6.0, 7.0]


def test_cli_site_refuses_an_out_folder_inside_the_data(tmp_path, capsys):
    data = write_data(nightly_series([5.0]), tmp_path / "data")
    assert cli.main(["site", "--data", str(data), "--out", str(data / "site")]) == 2
    err = capsys.readouterr().err
    assert f"bench site: error: --out {data / 'site'}: overlaps --data {data}" in err
    assert not (data / "site").exists()


def test_cli_site_names_a_missing_data_folder(tmp_path, capsys):
    assert cli.main(["site", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "site")]) == 2
    assert f"--data {tmp_path / 'nope'}: no such folder" in capsys.readouterr().err


def test_serve_serves_the_site_without_caching(tmp_path):
    series, rows = build(tmp_path)
    write_site(tmp_path / "site", series, rows, generated_at=NOW, plots=False)
    server = make_server(tmp_path / "site", "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        with urllib.request.urlopen(base) as r:
            assert r.headers["Cache-Control"] == "no-cache" and b"app.js" in r.read()
        with urllib.request.urlopen(base + "data/index.json") as r:
            assert r.headers["Content-Type"] == "application/json" and json.load(r)["format"] == 2
    finally:
        server.shutdown()
        server.server_close()


def test_serve_refuses_a_folder_without_a_site(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"SITE .*: no index.html; expected a folder written by"):
        make_server(tmp_path, "127.0.0.1", 0)


def test_template_never_inserts_data_as_html():
    """Record strings reach the page only as text: no HTML sinks in app.js."""
    js = (TEMPLATE / "app.js").read_text(encoding="utf-8")
    code = re.sub(r"//[^\n]*", "", js)  # comments may name the sinks they avoid
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                 "setAttribute(\"on", "srcdoc"):
        assert sink not in code, sink


def test_vendored_chart_library_matches_its_readme():
    readme = (TEMPLATE / "vendor" / "README.md").read_text(encoding="utf-8")
    header = (TEMPLATE / "vendor" / "uPlot.iife.min.js").read_text(encoding="utf-8").splitlines()[0]
    version = re.search(r"\(v(\d+\.\d+\.\d+)\)", header).group(1)
    assert f"| {version} |" in readme and "MIT" in readme
    assert "MIT License" in (TEMPLATE / "vendor" / "uPlot.LICENSE").read_text(encoding="utf-8")


def test_the_package_ships_the_top_level_template_as_its_one_copy():
    # gh-pages-template/ at the top level (the specified layout); the package
    # reaches it through a link, so `pip install .` brings it and no second copy exists.
    from bench.present import site as site_module
    root = Path(__file__).resolve().parent.parent
    assert site_module.TEMPLATE.resolve() == (root / "gh-pages-template").resolve()
    assert all((root / "gh-pages-template" / f).is_file() for f in site_module.TEMPLATE_FILES)


def test_values_are_rounded_to_six_significant_digits_as_one_value_is():
    values = [0.0, -0.0, 1.0, 123456.789, 1234567.0, 9.9999951, 1e16, 1.23456789e-12, -98765.4321, 2.5e-7]
    got = _rounded(values)
    assert got == [_round(v) for v in values]
    assert got[3:5] == [123457.0, 1234570.0] and got[5] == 10.0
    assert _rounded([]) == []
