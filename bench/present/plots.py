"""PNG plots: one per series (points, failures, change point and levels)
and an overview of all series.

Uses matplotlib's object API with the Agg canvas (no pyplot, no display, no
global state), so it runs on a headless runner and in tests.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from pathlib import Path
from typing import Mapping

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from bench.records.record import safe
from bench.analyse.series import Series, SeriesKey
from bench.analyse.trends import BASELINE
from bench.present.format import format_value
from bench.present.palette import colour
from bench.present.table import Row

# Status colours from the one palette (bench/present/palette.json); other
# statuses draw in the plain series colour.
COLORS = {s: colour(s) for s in ("Regressed", "Failed", "Faster", "Watch", "Stale")}
# Every label carries record text (labels, units): drawn as plain text, never
# parsed as mathtext or TeX, so a '$' or a backslash in a model name is just
# a character (mathtext raised ValueError on an unbalanced '$').
PLAIN = {"parse_math": False, "usetex": False}
MAX_NAME = 200  # characters of a plot's file name before .png
PLOT_RANGE = (1e-200, 1e200)  # values a y axis can tick (see _plottable)
OVERVIEW_NIGHTS = 90  # the overview shows the recent past; the per-series plot all of it


def plot_name(key: SeriesKey) -> str:
    """<backend>--<device>--<model>--<mode>.png, each part made file-name safe.

    A part that safe() had to change gets 6 hex digits of its SHA-1, so two
    labels that differ only in unsafe characters ('a$b', 'a_b') never share
    (and overwrite) one PNG.
    """
    name = "--".join(_name_part(part) for part in key)
    if len(name) > MAX_NAME:  # file systems stop at 255 bytes: keep a prefix and a hash of the whole key
        name = f"{name[:MAX_NAME - 14]}--{hashlib.sha1(repr(key).encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    return name + ".png"


def _name_part(label: str) -> str:
    plain = safe(label)
    if plain == label:
        return plain
    return f"{plain}-{hashlib.sha1(label.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}"


def write_plots(series: Mapping[SeriesKey, Series], rows: list[Row], out_dir: str | Path) -> list[Path]:
    """One PNG per row's series plus overview.png; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for row in rows:
        path = out / plot_name(row.key)
        s = series[row.key]
        fig = _series_figure(s, row) if _plottable(s) else _note_figure(row, "values out of the plottable range")
        _save(fig, path)
        written.append(path)
    path = out / "overview.png"
    _save(_overview_figure(series, rows), path)
    written.append(path)
    return written


def _save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)


def _plottable(s: Series) -> bool:
    """Whether matplotlib can place ticks for these values: its locators
    overflow (ValueError) on figures near the float limit, which a record may
    hold (1e308 samples/s is finite, so valid)."""
    return all(PLOT_RANGE[0] <= v <= PLOT_RANGE[1] for v in s.values())


def _note_figure(row: Row, why: str) -> Figure:
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    fig.text(0.5, 0.5, f"{_title(row)}\n{why}", ha="center", va="center", fontsize=10, **PLAIN)
    return fig


def _title(row: Row) -> str:
    return f"{row.backend} / {row.device} / {row.model} / {row.mode}: {row.status}"


def _series_figure(s: Series, row: Row) -> Figure:
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    color = COLORS.get(row.status, "#1f4e9c")
    if s.points:
        days = [p.started_at for p in s.points]
        ax.plot(days, s.values(), color=color, linewidth=0.8, marker="o", markersize=3)
        _levels(ax, s, row)
    fails = [f.started_at for f in s.failures]
    if fails:  # at the bottom edge: a failure has no value
        ax.plot(fails, [0.02] * len(fails), linestyle="none", marker="x", color=colour("Failed"),
                markersize=7, transform=ax.get_xaxis_transform(), label="failed")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_title(_title(row), fontsize=10, **PLAIN)
    ax.set_ylabel(f"{s.unit} ({s.better} is better)", fontsize=8, **PLAIN)
    ax.yaxis.set_major_formatter(lambda v, _pos: format_value(v) if math.isfinite(v) and v > 0 else "")
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    return fig


def _levels(ax, s: Series, row: Row) -> None:
    """The change point (dashed line) with the levels before and after it;
    without a change, the recent level over the last nights."""
    pts = s.points
    c = row.change
    if c is not None and c.index < len(pts):
        at: datetime = pts[c.index].started_at
        ax.axvline(at, color="#444", linestyle="--", linewidth=1)
        first = pts[max(0, c.index - BASELINE)].started_at
        ax.plot([first, at], [c.before] * 2, color="#444", linewidth=2, alpha=0.7)
        ax.plot([at, pts[-1].started_at], [c.after] * 2, color="#444", linewidth=2, alpha=0.7)
    elif row.level is not None and len(pts) > 1:
        ax.plot([pts[max(0, len(pts) - 10)].started_at, pts[-1].started_at], [row.level] * 2,
                color="#444", linewidth=2, alpha=0.5)


def _overview_figure(series: Mapping[SeriesKey, Series], rows: list[Row]) -> Figure:
    n = max(1, len(rows))
    cols = min(4, n)
    nrows = math.ceil(n / cols)
    fig = Figure(figsize=(3.2 * cols, 1.9 * nrows), layout="constrained")
    for i, row in enumerate(rows):
        ax = fig.add_subplot(nrows, cols, i + 1)
        pts = series[row.key].points[-OVERVIEW_NIGHTS:]
        if not _plottable(series[row.key]):
            pts = []
        ax.plot([p.started_at for p in pts], [p.value for p in pts],
                color=COLORS.get(row.status, "#1f4e9c"), linewidth=0.8)
        ax.set_title(f"{row.backend}/{row.device}\n{row.model} {row.mode}: {row.status}", fontsize=7, **PLAIN)
        ax.set_xticks([])
        ax.tick_params(labelsize=6)
        ax.yaxis.set_major_formatter(lambda v, _pos: format_value(v) if math.isfinite(v) and v > 0 else "")
    if not rows:
        fig.text(0.5, 0.5, "no series in the data", ha="center")
    return fig
