"""The dashboard site: gh-pages-template/ plus the data it reads.

SITE/
  index.html, app.js, style.css, vendor/   copied from gh-pages-template/
  palette.css                              the status colours (bench/present/palette.json)
  data/index.json                          site_index(): the table rows and the overview
                                           (each series' newest OVERVIEW_NIGHTS points)
  data/index.js                            the same, as `window.BENCH_DATA = {...};` for file://
  data/series/<b>--<d>--<m>--<mode>.js     a series' whole history, loaded when its chart
                                           opens: `(window.BENCH_SERIES ||= {})[name] = {...}`
  data/tables.js                           the runs and environments the histories index
  data/table.md                            the README table (render_markdown)
  plots/*.png                              one per series + overview.png (write_plots)

data/index.json (format 2) is what the page downloads first:
  "palette": {status: '#rrggbb'} (bench/present/palette.json)
  "runs":   [[run_id, attempt, keras_version|null, url|null], ...] (url only
            when it is a run page of this repository: run_url) shared by
            every series' overview, oldest first; points and failures refer to it by index
  "series": one object per table row: the DESIGN keys of `report --format json`
            (backend, device, model, mode, latest, delta_prev, trend, runs,
            status) and
              latest_text, delta_text, note   as the README prints them
              unit, better              better is 'bigger' or 'smaller'
              days    days since 1970-01-01 of the newest OVERVIEW_NIGHTS points,
                      delta-encoded (first absolute, then the gap to the previous point)
              nights  the series' number of points (all of them)
              history null when `days` holds every point, else the file with all
                      of them (data/series/...js)
              failures_total  the series' number of failures
              values  the point values in `unit`, 6 significant digits
              run     index into "runs", delta-encoded like days
              failures [[day, run, kind, message], ...] oldest first, from the
                       first overview point on (a message over MESSAGE_CHARS is cut with '…')
              skipped  count of skipped results (e.g. unsupported)
              change   null or {index, day, from_day, before, after, relative}:
                       the detected change (index into the points, its day, the
                       first day of the level before) and the levels in `unit`
              plot     'plots/<name>.png' or null
              metric   throughput | latency | memory | energy | reference | native (the page's
                       metric filter; bench.analyse.series.metric_group)
              env      index into "envs" per point, delta-encoded like days
              host     per point, the host's speed that night against the
                       nights before (bench.analyse.host.night_shifts, as
                       `bench show`) in tenths of a percent (150: 15.0 %
                       slower), null without a comparable reading; [] when
                       no point has one (integers keep five years small)
              spread   the latest point's samples: interquartile range over
                       the median, a fraction (null under 2 samples)
              iqr      [q1, q3] of those samples in `unit` (or null)
  "envs":   [{field: text}, ...] each point's environment (machine and
            software that night, bench.analyse.envsummary), shared
  "env_changes": the fields listed as "changed since the previous point"
  "host_held": a fraction (host.HELD): below it the tooltip calls the host as before
data/series/<name>.js holds {"days", "values", "run", "env", "failures",
"host"} as above for every point of one series, indexed into "runs" and
"envs" of data/tables.js (`window.BENCH_TABLES = {...}`: every run and
environment of every point, loaded with the first history a page opens).
Format 1 gained "host" and "host_held" on 2026-12-06: optional, so a page
reading an index without them shows no host line. Format 2 (2026-12-07): the
overview and data/series/.
Labels and messages are stored as they are; the page inserts them as text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from itertools import chain, repeat
from dataclasses import dataclass
from datetime import date, datetime
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from bench.errors import BenchError
from bench.present import palette
from bench.records.record import format_time, safe
from bench.present.markdown import cells, render_markdown
from bench.present.table import Row, rows_to_json
from bench.analyse import host
from bench.analyse.envsummary import CHANGES
from bench.analyse.summarised import quartiles
from bench.analyse.series import Columns, Point, Series, SeriesKey, columns, in_table, metric_group, run_of
from bench.analyse.trends import BASELINE

FORMAT = 2
# The overview keeps each series' newest this many points: what the table's
# charts and the small multiples show first. A chart that is opened loads the
# rest (data/series/). At 10 years x 100 series the overview is 0.21 MB
# against 5.0 MB for every point twice before (studies/bench_scale.py).
OVERVIEW_NIGHTS = 90
TABLES = "data/tables.js"  # every run and environment the histories refer to, loaded with the first
# The repository's gh-pages-template/, shipped inside the package as
# bench/present/template (a link, like bench/benchmarks.yaml; package-data), so
# one copy exists and `bench site` works from any folder and from a wheel.
TEMPLATE = Path(str(resources.files("bench.present") / "template"))
TEMPLATE_FILES = ("index.html", "app.js", "style.css")
_EPOCH = date(1970, 1, 1).toordinal()
# The chart draws the level before a change over the span bench.analyse.trends
# judges the old level on.
BEFORE_SPAN = BASELINE
# A failure message past this many characters (a whole traceback) is cut with
# '…' in the site's data; the record keeps it whole.
MESSAGE_CHARS = 2000
_RUN_URL = re.compile(r"https://github\.com/([A-Za-z0-9-]+/[A-Za-z0-9._-]+)/actions/runs/[0-9]+(?:/attempts/[0-9]+)?")


class SiteError(BenchError, ValueError):
    """The site cannot be written where asked (the message names the path)."""


def _day(d: date) -> int:
    return d.toordinal() - _EPOCH


def _deltas(xs: Sequence[int]) -> list[int]:
    # Nightly days and run indices mostly step by 1: "1," is cheaper than "20423,".
    return [x - before for before, x in zip(chain((0,), xs), xs)]


def _round(v: float) -> float:
    # Six significant digits is far below run-to-run noise and halves the bytes.
    return float(f"{v:.6g}")


def site_index(series: Mapping[SeriesKey, Series], rows: Sequence[Row], *,
               generated_at: datetime, plots: Mapping[SeriesKey, str] | None = None,
               repository: str | None = None, nights: int | None = None,
               shifts: Mapping[SeriesKey, list] | None = None,
               cols: Mapping[SeriesKey, Columns] | None = None) -> dict:
    """The dashboard's data (format in the module docstring); pure.

    `rows` are build_rows(series, ...) in table order; `plots` maps a series
    key to its PNG path relative to the site root; a run's url is kept only
    when it is a run of `repository` (run_url). `nights`: each series keeps
    only its newest this many points (the overview; `history` names the file
    with all of them); None keeps every point. `shifts`: host_shifts(series),
    `cols`: each series' columns(points), when the caller has them already.
    """
    cols = cols if cols is not None else series_columns(series)
    shifts = shifts if shifts is not None else host_shifts(series, cols)
    tails = {k: _tail(s, cols[k], nights) for k, s in series.items()}
    runs = _run_table(tails.values())
    envs = _env_table(tails.values())
    newest = max((s.last_seen for s in series.values()), default=None)
    return {
        "format": FORMAT,
        "generated_at": format_time(generated_at),
        "palette": dict(palette.palette()),
        "newest_run": format_time(newest) if newest else None,
        "runs": _runs_json(runs, repository),
        "series": [_entry(row, data, series[_key(row)], tails[_key(row)], runs, (plots or {}).get(_key(row)), envs,
                          shifts[_key(row)]) for row, data in zip(rows, rows_to_json(rows))],
        "envs": [dict(state) for state in envs],
        "env_changes": list(CHANGES),
        "host_held": host.HELD,
    }


def series_columns(series: Mapping[SeriesKey, Series]) -> dict[SeriesKey, Columns]:
    """Each series' points as columns (series.columns): what the site reads of them."""
    return {k: columns(s.points) for k, s in series.items()}


def host_shifts(series: Mapping[SeriesKey, Series],
                cols: Mapping[SeriesKey, Columns] | None = None) -> dict[SeriesKey, list]:
    """Each series' night-by-night host shifts (host.night_shifts, as `bench show`)."""
    cols = cols if cols is not None else series_columns(series)
    return {k: host.shifts_by_night(c.protocols, c.envs, c.bases, c.hosts, before=BASELINE)
            for k, c in ((k, cols[k]) for k in series)}


def _runs_json(runs: Mapping[tuple, int], repository: str | None) -> list:
    return [[ref[2], ref[1], ref[3] or None, run_url(ref[-1], repository)] for ref in runs]


@dataclass(frozen=True)
class _Tail:
    """A series' newest points (all of them, or the overview's): its columns
    from `start` on, and its failures from the first of those points' night on."""
    cols: Columns
    start: int
    failures: tuple


def _tail(s: Series, cols: Columns, nights: int | None) -> _Tail:
    """`s` with its newest `nights` points and the failures from the first of them on."""
    n = len(cols.days)
    if nights is None or n <= nights:
        return _Tail(cols, 0, s.failures)
    first = cols.days[n - nights]
    return _Tail(cols, n - nights, tuple(f for f in s.failures if f.started_at.date() >= first))


def _rounded(values: Sequence[float]) -> list[float]:
    """_round of each value (map: 361,000 values at ten years x 100 series, no Python loop)."""
    return list(map(float, map(format, values, repeat(".6g", len(values)))))


def history_name(key: SeriesKey) -> str:
    """The file a series' whole history goes to, relative to the site root."""
    return "data/series/" + "--".join(safe(part) for part in key) + ".js"


def series_history(s: Series, runs: _Table, envs: _Table, shifts: list,
                   cols: Columns | None = None) -> dict:
    """A series' every point and failure, indexed into the site's one table of
    runs and of environments (history_tables): a night's run is shared by every
    series of that night, so one table, not one per series."""
    return _arrays(_Tail(cols if cols is not None else columns(s.points), 0, s.failures), runs, envs, shifts)


def history_tables(series: Mapping[SeriesKey, Series], repository: str | None = None,
                   cols: Mapping[SeriesKey, Columns] | None = None) -> tuple[_Table, _Table, dict]:
    """(runs, envs, their JSON): every run and environment of every point, for data/tables.js."""
    cols = cols if cols is not None else series_columns(series)
    whole = [_Tail(cols[k], 0, s.failures) for k, s in series.items()]
    runs, envs = _run_table(whole), _env_table(whole)
    return runs, envs, {"runs": _runs_json(runs, repository), "envs": [dict(state) for state in envs]}


def _key(row: Row) -> SeriesKey:
    return (row.backend, row.device, row.model, row.mode)


def run_url(url: str | None, repository: str | None) -> str | None:
    """`url` when it is a GitHub Actions run page of `repository` (owner/name;
    any repository when None), else None: a record's url is untrusted text and
    the dashboard links it. https://github.com/<repository>/actions/runs/<digits>,
    optionally /attempts/<digits>."""
    m = _RUN_URL.fullmatch(url or "")
    if not m or (repository is not None and m.group(1).lower() != repository.lower()):
        return None
    return url


class _Table(dict):
    """A table of distinct items -> index, sorted, and `by_id`: the index by
    the id of each object the table was made from. A record's run and
    environment are one object shared by its points (series.Columns), so
    365,000 points hash 91,000 tuples and are then looked up by id."""

    def __init__(self, lists: Iterable[Sequence], more: Iterable = ()):
        objects = {id(x): x for xs in lists for x in xs}
        super().__init__((x, i) for i, x in enumerate(sorted(set(objects.values()) | set(more))))
        self.by_id = {i: self[x] for i, x in objects.items()}

    def indices(self, xs: Sequence) -> list[int]:
        """The index of each of `xs`, objects the table was made from."""
        by_id = self.by_id
        return [by_id[id(x)] for x in xs]


def _run_table(tails: Iterable[_Tail]) -> _Table:
    """Every run any point or failure came from -> its index, oldest first
    (series.run_of: sorting them keeps indices in time order)."""
    tails = list(tails)
    return _Table([t.cols.runs[t.start:] for t in tails], {run_of(f) for t in tails for f in t.failures})


def _env_table(tails: Iterable[_Tail]) -> _Table:
    """Every distinct point environment -> its index (one per record, shared by its series)."""
    return _Table(t.cols.states[t.start:] for t in tails)


def _quartiles(p: Point) -> tuple[float, float, float] | None:
    """A point read from the summary carries its samples' quartiles instead of the samples."""
    return p.quartiles or quartiles(p.samples)


def _spread(q: tuple[float, float, float] | None) -> dict:
    """{"spread": interquartile range over the median (a fraction), "iqr": [q1, q3]}
    from a point's samples' quartiles (summarised.quartiles: robust both for 7
    timed repeats and for a workers v2 record's 200 per-call latencies, whose
    tail the p99 series shows); nulls without them (under 2 samples)."""
    if q is None:
        return {"spread": None, "iqr": None}
    q1, mid, q3 = q
    return {"spread": round((q3 - q1) / mid, 6) if mid > 0 else None, "iqr": [_round(q1), _round(q3)]}


def _entry(row: Row, data: dict, s: Series, tail: _Tail, runs: _Table, plot: str | None,
           envs: _Table | None, shifts: list) -> dict:
    text = cells(row)
    entry = {k: v for k, v in data.items() if k != "last_failure"}  # `failures` has it, cut to size
    entry.update({
        # The README's own cell text, so the page and the table never disagree.
        "latest_text": text[4],
        "delta_text": text[5],
        "note": text[9] if len(text) > 9 else "",
        "unit": s.unit,
        "better": s.better,
        **_arrays(tail, runs, envs, shifts),
        "nights": len(s.points),
        "history": history_name(s.key) if tail.start > 0 else None,
        "failures_total": len(s.failures),
        "skipped": len(s.skipped),
        "change": _change(row, s),
        "plot": plot,
        "metric": metric_group(s.mode),
        **_spread(_quartiles(s.points[-1]) if s.points else None),
    })
    return entry


def _arrays(tail: _Tail, runs: _Table, envs: _Table | None, shifts: list) -> dict:
    """The points and failures of `tail` (a series' newest points, or all of
    them), indexed into `runs` and `envs`; `shifts`: the whole series' host shifts."""
    c, i = tail.cols, tail.start
    return {
        "days": _deltas([x - _EPOCH for x in map(date.toordinal, c.days[i:])]),
        "values": _rounded(c.values[i:]),
        "run": _deltas(runs.indices(c.runs[i:])),
        "failures": [[_day(f.started_at.date()), runs[run_of(f)], f.kind, _cut(f.message)]
                     for f in tail.failures],
        "env": _deltas(envs.indices(c.states[i:])) if envs is not None else [],
        "host": _tenths(shifts[i:]),
    }


def _tenths(shifts: Sequence[float | None]) -> list[int | None]:
    """Fractions as integer tenths of a percent (what the tooltip prints); [] when all are None."""
    return [None if h is None else round(h * 1000) for h in shifts] if any(h is not None for h in shifts) else []


def _cut(message: str) -> str:
    return message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS - 1] + "…"


def _change(row: Row, s: Series) -> dict | None:
    c = row.change
    if c is None or not 0 <= c.index < len(s.points):
        return None
    return {"index": c.index, "day": _day(s.points[c.index].day),
            "from_day": _day(s.points[max(0, c.index - BEFORE_SPAN)].day),
            "before": _round(c.before), "after": _round(c.after), "relative": round(c.relative, 6)}


def write_site(site_dir: str | Path, series: Mapping[SeriesKey, Series], rows: Sequence[Row], *,
               generated_at: datetime, plots: bool = True, template: str | Path = TEMPLATE,
               warn: Callable[[str], None] = lambda msg: None, repository: str | None = None) -> Path:
    """Build the whole site in a scratch folder next to `site_dir`, then swap it in.

    `site_dir` must be missing, empty, or an earlier site (it holds
    data/index.json); anything else is refused so a wrong --out never loses files.
    Returns the path of data/index.json.
    """
    site = Path(site_dir)
    template = Path(template)
    _check_template(template)
    _check_target(site)
    site.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(dir=site.parent, prefix=f".{site.name}.new-"))
    try:
        shutil.copytree(template, stage, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
        (stage / ".nojekyll").write_text("")  # Pages serves files as they are
        plot_paths = _write_plots(stage / "plots", series, rows, warn) if plots else {}
        cols = series_columns(series)
        shifts = host_shifts(series, cols)
        index = site_index(series, rows, generated_at=generated_at, plots=plot_paths, repository=repository,
                           nights=OVERVIEW_NIGHTS, shifts=shifts, cols=cols)
        data = stage / "data"
        data.mkdir(exist_ok=True)
        text = _json(index)
        (data / "index.json").write_text(text + "\n", encoding="utf-8")
        # The same overview as a script: a page opened from disk (file://) may
        # not fetch(), but it may load a script beside it (app.js falls back to it).
        # Only the overview is written twice; each whole history once, below.
        (data / "index.js").write_text(f"window.BENCH_DATA = {text};\n", encoding="utf-8")
        _write_histories(stage, index, series, repository, shifts, cols)
        (stage / "palette.css").write_text(palette.css(), encoding="utf-8")
        # The README's table: the headline and vs-ref series (the other metric series are on the page).
        (data / "table.md").write_text(render_markdown([r for r in rows if in_table(r.mode)]),
                                       encoding="utf-8")
        _swap(stage, site)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return site / "data" / "index.json"


def _json(data: dict) -> str:
    """Compact JSON, keys sorted. Written by orjson: a tenth of json's time on the
    site's 361,000 values at ten years x 100 series (0.16 s). Its floats are
    the shortest that read back the same, as json's, written otherwise
    between 1e-6 and 1e-4 and in small exponents (0.00001 for 1e-05, 1e-7 for
    1e-07): the same numbers. A record's values are finite (its schema); a
    non-finite value worked out from them would be written as null (a gap on
    the chart), where json raised. orjson refuses an integer past 64 bits,
    which a hostile record may hold where its schema bounds none: json writes that data."""
    import orjson

    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _write_histories(stage: Path, index: dict, series: Mapping[SeriesKey, Series], repository: str | None,
                     shifts: Mapping[SeriesKey, list], cols: Mapping[SeriesKey, Columns]) -> None:
    """data/tables.js (every run and environment) and one data/series/*.js per
    series whose history is longer than the overview: scripts, so that they
    load over http and from disk (file://) alike."""
    longer = [e for e in index["series"] if e["history"]]
    if not longer:
        return
    runs, envs, tables = history_tables(series, repository, cols)
    (stage / TABLES).write_text(f"window.BENCH_TABLES = {_json(tables)};\n", encoding="utf-8")
    (stage / "data" / "series").mkdir()
    for e in longer:
        s = series[(e["backend"], e["device"], e["model"], e["mode"])]
        (stage / e["history"]).write_text(f"(window.BENCH_SERIES = window.BENCH_SERIES || {{}})[{json.dumps(e['history'])}]"
                                          f" = {_json(series_history(s, runs, envs, shifts[s.key], cols[s.key]))};\n", encoding="utf-8")


def _write_plots(plot_dir: Path, series, rows, warn) -> dict[SeriesKey, str]:
    try:
        from bench.present.plots import plot_name, write_plots
    except ImportError as e:  # matplotlib missing: the page works without PNGs
        warn(f"PNG plots skipped: {e}")
        return {}
    written = {p.name for p in write_plots(series, rows, plot_dir)}
    return {key: f"plots/{plot_name(key)}" for key in series if plot_name(key) in written}


def _check_template(template: Path) -> None:
    missing = [f for f in TEMPLATE_FILES if not (template / f).is_file()]
    if missing:
        raise SiteError(f"template {template}: missing {', '.join(missing)}; "
                        f"expected a folder like gh-pages-template/ holding {', '.join(TEMPLATE_FILES)}")


def _check_target(site: Path) -> None:
    if not site.exists():
        return
    if not site.is_dir():
        raise SiteError(f"--out {site}: is a file; expected a folder for the site")
    if any(site.iterdir()) and not (site / "data" / "index.json").is_file():
        raise SiteError(f"--out {site}: folder is not empty and holds no earlier site "
                        f"(no data/index.json); expected a new, empty or earlier site folder")


def _swap(stage: Path, site: Path) -> None:
    """Put `stage` where `site` is; the old site is removed only after the rename."""
    os.chmod(stage, 0o755)  # mkdtemp makes it 0700; Pages artifacts and http.server need to read it
    if not site.exists():
        os.replace(stage, site)
        return
    old = Path(tempfile.mkdtemp(dir=site.parent, prefix=f".{site.name}.old-"))
    os.replace(site, old / "site")
    os.replace(stage, site)
    shutil.rmtree(old, ignore_errors=True)
