"""One verdict per benchmark: what the head did against the baseline (pure).

Verdicts, in the order they are shown:
  slower     a change of at least min_change that the test finds significant,
             in the bad direction (lower throughput, or higher time when the
             series' better is 'smaller')
  failed     the head failed (kind and message kept); also a head that
             skipped a benchmark the baseline has values for
  missing    in the baseline, not in the head (only for the head's own
             (backend, device) targets: a head of one target is not "missing"
             the others)
  faster     as slower, in the good direction
  new        the head has it, the baseline has no value for it
  unchanged  otherwise: smaller than min_change, or within the noise
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from bench.config import Compare
from bench.records.record import ErrorInfo
from bench.analyse.series import SeriesKey
from bench.compare.baseline import NIGHTS, BaseEntry, Baseline
from bench.compare.head import Head, HeadEntry
from bench.compare.stats import Comparison, compare_samples, drop_dips, min_p_value, prediction_p_value

VERDICTS = ("slower", "failed", "missing", "faster", "new", "unchanged")
BASIS = ("nights", "runs", "samples")
# The prediction test needs a spread of runs: from fewer values it is unknown
# (and with 2, a t test on 1 degree of freedom would never call anything).
MIN_RUNS_FOR_SPREAD = 3


@dataclass(frozen=True)
class Row:
    """One benchmark's verdict and the figures behind it.

    base, head: medians in `unit` (None when absent); delta = head/base - 1,
    a fraction in the value's own direction; interval: the (1 - alpha)
    bootstrap interval of that fraction; p_value: two-sided Mann–Whitney U
    of the head's repeats against the baseline's values; p_prediction: the
    head's value as one more night or base run (None with fewer than
    MIN_RUNS_FOR_SPREAD of them); basis: what the U test's baseline values
    are, one per night ("nights"), one per base record ("runs"), or every
    repeat ("samples"); base_n, head_n: values in the U test; base_runs:
    nights or records the baseline draws on; base_dips, head_dips: values
    left out as dips of the machine (stats.drop_dips).
    """

    backend: str
    device: str
    model: str
    mode: str
    verdict: str
    unit: str = "samples/s"
    better: str = "bigger"
    base: float | None = None
    head: float | None = None
    delta: float | None = None
    interval: tuple[float, float] | None = None
    p_value: float | None = None
    p_prediction: float | None = None
    basis: str | None = None
    base_n: int = 0
    head_n: int = 0
    base_runs: int = 0
    base_dips: int = 0
    head_dips: int = 0
    error: ErrorInfo | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"Row {self.key}: verdict {self.verdict!r}; expected one of {VERDICTS}")
        if self.basis is not None and self.basis not in BASIS:
            raise ValueError(f"Row {self.key}: basis {self.basis!r}; expected one of {BASIS}")
        if self.verdict == "failed" and self.error is None:
            raise ValueError(f"Row {self.key}: a failed verdict needs the error (kind, message)")

    @property
    def key(self) -> SeriesKey:
        return (self.backend, self.device, self.model, self.mode)


def verdict(c: Comparison, better: str, min_change: float, alpha: float,
            p_prediction: float | None = None) -> str:
    """faster / slower / unchanged for one comparison.

    A change is called only when all hold: |delta| >= min_change (a fraction,
    e.g. 0.03); the U test gives p < alpha; when known, the prediction test
    too (the head's value is no ordinary night or run); and the interval
    lies wholly on the delta's side of zero, so what is shown never
    contradicts the verdict. Direction: a higher value is faster when
    better == 'bigger' (throughput), slower when better == 'smaller' (time).
    """
    lo, hi = c.interval
    agrees = lo > 0 if c.delta > 0 else hi < 0
    significant = c.p_value < alpha and (p_prediction is None or p_prediction < alpha)
    if abs(c.delta) < min_change or not significant or not agrees:
        return "unchanged"
    return "faster" if (c.delta > 0) == (better == "bigger") else "slower"


def compare(baseline: Baseline, head: Head, settings: Compare) -> tuple[Row, ...]:
    """Every head benchmark, plus the baseline's missing ones, in display order."""
    rows = [row for key, h in head.entries.items()
            if (row := _row(key, baseline.entries.get(key), h, settings)) is not None]
    targets = {key[:2] for key in head.entries}
    rows += [_missing(b) for key, b in baseline.entries.items()
             if key[:2] in targets and key not in head.entries]
    return tuple(sorted(rows, key=lambda r: (VERDICTS.index(r.verdict), r.key)))


def _row(key: SeriesKey, base: BaseEntry | None, h: HeadEntry, s: Compare) -> Row | None:
    if h.status != "ok":
        if h.status == "skipped" and base is None:
            return None  # never measured, not measured now: nothing to say
        return Row(*key, verdict="failed", unit=h.unit, better=h.better,
                   base=median(base.run_values) if base else None, error=h.error)
    if base is None:
        return Row(*key, verdict="new", unit=h.unit, better=h.better,
                   head=median(h.samples), head_n=len(h.samples))
    samples, head_dips = drop_dips(h.samples, h.better)
    runs, run_dips = drop_dips(base.run_values, h.better)
    values, basis, base_dips = _test_values(base, runs, run_dips, len(samples), s.alpha)
    c = compare_samples(samples, values, s.alpha)
    p_prediction = prediction_p_value(c.head, runs) if len(runs) >= MIN_RUNS_FOR_SPREAD else None
    return Row(*key, verdict=verdict(c, h.better, s.min_change, s.alpha, p_prediction),
               unit=h.unit, better=h.better, base=c.base, head=c.head, delta=c.delta,
               interval=c.interval, p_value=c.p_value, p_prediction=p_prediction, basis=basis,
               base_n=c.base_n, head_n=c.head_n, base_runs=base.count,
               base_dips=base_dips, head_dips=head_dips)


def _test_values(base: BaseEntry, runs: tuple[float, ...], run_dips: int, head_n: int,
                 alpha: float) -> tuple[tuple[float, ...], str, int]:
    """(values, basis, dips left out) for the U test. One value per night or
    run: the honest run-to-run spread; but with too few of them (after dips)
    no test could ever reach alpha (7 repeats against 3 nights: p >= 0.017),
    so then every repeat sample stands in."""
    if min_p_value(head_n, len(runs)) <= alpha:
        return runs, "nights" if base.kind == NIGHTS else "runs", run_dips
    samples, dips = drop_dips(base.samples, base.better)
    return samples, "samples", dips


def _missing(base: BaseEntry) -> Row:
    return Row(*base.key, verdict="missing", unit=base.unit, better=base.better,
               base=median(base.run_values), base_runs=base.count)
