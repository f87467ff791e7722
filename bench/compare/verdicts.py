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
  unchanged  otherwise: smaller than min_change, or within the noise (the
             row's `reason` names the rule that held it back)

Every rule is stated once, in RULES (shown by `bench compare --help` and
in the footer of its markdown and json), and every compared row carries
`detectable`: the smallest slowdown these rules could have called with
these values and this noise (None: none at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from bench.config import Compare
from bench.records.record import ErrorInfo
from bench.analyse.series import SeriesKey
from bench.compare.baseline import NIGHTS, BaseEntry, Baseline
from bench.compare.head import Head, HeadEntry
from bench.compare.stats import (DIP_DEPTH, DIP_SIGMAS, Comparison, bh_levels, compare_pairs, compare_samples,
                                 drop_dips, min_p_value, prediction_critical, prediction_p_value, sign_flip_min_p,
                                 sign_flip_shift, u_critical_scale)

VERDICTS = ("slower", "failed", "missing", "faster", "new", "unchanged")
# What the head is tested against: one value per night, per base run, every
# base repeat, or (an A/B run) worker i of the base side paired with worker i.
BASIS = ("nights", "runs", "samples", "pairs")
# The prediction test needs a spread of runs: from fewer values it is unknown
# (and with 2, a t test on 1 degree of freedom would never call anything).
MIN_RUNS_FOR_SPREAD = 3

# Every rule a verdict applies, in the order they are checked. {min_change},
# {alpha} and {confidence} are filled in with the settings (or, in --help,
# their names in benchmarks.yaml). One place: the help, the markdown footer
# and the json all show this text.
RULES = (
    "dips: a repeat, night or base run more than {depth:.0%} and {sigmas:g} robust sigmas worse than "
    "its group's median is left out first (a disturbed machine, not Keras)",
    "values: the head's repeats are tested against one value per night or base run; when there are fewer than 3 "
    "of those, or too few for the test to ever reach p < {alpha}, every base repeat stands in; when even that cannot "
    "(3 repeats against 3: the smallest p is 0.1), nothing can be called",
    "size: the medians must differ by at least {min_change}",
    "test: p < {alpha} in a two-sided Mann-Whitney U test of the head's repeats against those values",
    "ordinary run: given 3 or more nights or base runs, p < {alpha} also in a t test of the head's median "
    "as one more of them (log scale): a run's repeats share its night, so only runs show the run-to-run spread",
    "interval: the {confidence} bootstrap interval of the change (ratio of the medians) lies wholly on one side "
    "of 0, so the interval shown never contradicts the verdict",
    "A/B pairs: when base and head are the two sides of one `bench run --ab` run, worker i of one side is paired "
    "with worker i of the other; the test is an exact sign-flip permutation test of the pairs' log ratios and the "
    "interval the shifts it does not reject at {alpha}; a pair is left out only when a worker failed (or, taken in "
    "turns, was disturbed), never for its value",
    "one-value metrics (latency p99, peak memory; better: smaller): the size rule and the ordinary-run test "
    "with its {confidence} prediction interval; with fewer than 3 nights or base runs they are shown, not called",
    "many rows: the p-values of all tested rows of one comparison are held to Benjamini–Hochberg at {alpha}: "
    "each row's p must be below {alpha} x R / m (m rows tested, R the rows BH calls counting this one), so when "
    "nothing changed, the chance that any row is called stays at most {alpha}",
    "seeing: per benchmark, the smallest slowdown these rules could have called with these values and this noise; "
    "when that is more than {min_change} (or none at all) the comparison says so: too few repeats to see it",
)


def rules(min_change: float | str = "compare.min_change", alpha: float | str = "compare.alpha") -> tuple[str, ...]:
    """RULES with the settings filled in (numbers), or their names (for --help)."""
    if isinstance(min_change, str) or isinstance(alpha, str):
        confidence = f"1 - {alpha}"
        size = str(min_change)
    else:
        confidence = f"{(1 - alpha) * 100:g}%"
        size = f"{min_change * 100:g}%"
    return tuple(r.format(depth=DIP_DEPTH, sigmas=DIP_SIGMAS, min_change=size, alpha=alpha, confidence=confidence)
                 for r in RULES)


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
    left out as dips of the machine (stats.drop_dips); metric: "" for the
    series' own value, else one of bench.compare.extras.METRICS (latency
    p99, peak memory); reason: for a compared row that is unchanged, the
    rule that held it back; detectable: the smallest slowdown (a fraction
    > 0) the rules could have called with these values and noise at this
    row's level, None when not compared or when nothing could be called;
    pairs_left_out: A/B pairs with a failed worker (or, taken in turns, a
    disturbed one); level: the level its p-value had to be below after
    Benjamini–Hochberg across the comparison's tested rows (None: not tested).
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
    metric: str = ""
    reason: str | None = None
    detectable: float | None = None
    pairs_left_out: int = 0
    level: float | None = None

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
    """faster / slower / unchanged (judge without the reason)."""
    return judge(c, better, min_change, alpha, p_prediction)[0]


def judge(c: Comparison, better: str, min_change: float, alpha: float,
          p_prediction: float | None = None, level: float | None = None) -> tuple[str, str | None]:
    """faster / slower / unchanged for one comparison.

    A change is called only when all hold: |delta| >= min_change (a fraction,
    e.g. 0.03); the test gives p below `level` (alpha for a row alone; its
    Benjamini–Hochberg level among several, bh_levels); when known, the
    prediction test too (the head's value is no ordinary night or run); and
    the (1 - alpha) interval lies wholly on the delta's side of zero, so
    what is shown never contradicts the verdict. Direction: a higher value
    is faster when better == 'bigger' (throughput), slower when better ==
    'smaller' (time).
    """
    lo, hi = c.interval
    level = alpha if level is None else level
    held = _shared(level, alpha)
    if abs(c.delta) < min_change:
        return "unchanged", f"the change is below {min_change * 100:g}%"
    if c.p_value >= level:
        return "unchanged", f"p={c.p_value:.2g} is not below {level:.2g}{held}"
    if p_prediction is not None and p_prediction >= level:
        return "unchanged", f"an ordinary run: p={p_prediction:.2g} as one more of them, not below {level:.2g}{held}"
    if not (lo > 0 if c.delta > 0 else hi < 0):
        return "unchanged", f"the {(1 - alpha) * 100:g}% interval {_pct(lo)} … {_pct(hi)} includes 0"
    return ("faster" if (c.delta > 0) == (better == "bigger") else "slower"), None


def compare(baseline: Baseline, head: Head, settings: Compare) -> tuple[Row, ...]:
    """Every head benchmark, plus the baseline's missing ones, in display order.

    Two passes: each row is judged alone at alpha for its p-value; then every
    tested row is judged again at its Benjamini–Hochberg level across them
    all (stats.bh_levels), which decides its verdict and what it "sees"."""
    makers = [make for key, h in head.entries.items()
              if (make := _row(key, baseline.entries.get(key), h, settings)) is not None]
    makers += [_metric_row(key, name, baseline.metrics.get((key, name)), h, settings)
               for (key, name), h in head.metrics.items()]
    alone = [make(settings.alpha) for make in makers]
    tested = [i for i, r in enumerate(alone) if r.p_value is not None]
    levels = bh_levels([_deciding_p(alone[i]) for i in tested], settings.alpha)
    rows = list(alone)
    for i, level in zip(tested, levels):
        rows[i] = alone[i] if level >= settings.alpha else makers[i](level)
    targets = {key[:2] for key in head.entries}
    rows += [_missing(b) for key, b in baseline.entries.items()
             if key[:2] in targets and key not in head.entries]
    return tuple(sorted(rows, key=lambda r: (VERDICTS.index(r.verdict), r.key, r.metric)))


def _deciding_p(r: Row) -> float:
    """The p-value a row's call rests on: both tests must pass, so the larger."""
    return r.p_value if r.p_prediction is None else max(r.p_value, r.p_prediction)


def _row(key: SeriesKey, base: BaseEntry | None, h: HeadEntry, s: Compare):
    """A function level -> Row for one benchmark (None: nothing to show)."""
    if h.status != "ok":
        if h.status == "skipped" and base is None:
            return None  # never measured, not measured now: nothing to say
        row = Row(*key, verdict="failed", unit=h.unit, better=h.better,
                  base=median(base.run_values) if base else None, error=h.error)
        return lambda level: row
    if base is None:
        row = Row(*key, verdict="new", unit=h.unit, better=h.better, head=median(h.samples), head_n=len(h.samples))
        return lambda level: row
    if _is_ab_pair(base, h):
        pairs = [(a, b) for a, b in zip(h.workers, base.workers) if a is not None and b is not None]
        if len(pairs) >= 2:
            c = compare_pairs([a for a, _ in pairs], [b for _, b in pairs], s.alpha)
            return lambda level: _paired_row(key, base, h, s, pairs, c, level)
    samples, head_dips = drop_dips(h.samples, h.better)
    runs, run_dips = drop_dips(base.run_values, h.better)
    values, basis, base_dips = _test_values(base, runs, run_dips, len(samples), s.alpha)
    c = compare_samples(samples, values, s.alpha)
    p_prediction = prediction_p_value(c.head, runs) if len(runs) >= MIN_RUNS_FOR_SPREAD else None

    def make(level: float) -> Row:
        if min_p_value(len(samples), len(values)) >= level:
            call, reason = "unchanged", (f"no test can reach p < {level:.2g} with {len(samples)} against "
                                         f"{len(values)} values (the smallest p is "
                                         f"{min_p_value(len(samples), len(values)):.2g}){_shared(level, s)}")
        else:
            call, reason = judge(c, h.better, s.min_change, s.alpha, p_prediction, level)
        down = h.better == "bigger"  # the direction of a slowdown
        spread = runs if p_prediction is not None else None
        return Row(*key, verdict=call, unit=h.unit, better=h.better, base=c.base, head=c.head, delta=c.delta,
                   interval=c.interval, p_value=c.p_value, p_prediction=p_prediction, basis=basis,
                   base_n=c.base_n, head_n=c.head_n, base_runs=base.count,
                   base_dips=base_dips, head_dips=head_dips, reason=reason,
                   detectable=_detectable(samples, values, spread, c, down, s, level), level=level)
    return make


def _detectable(samples, values, runs, c: Comparison, down: bool, s: Compare, level: float) -> float | None:
    """The smallest slowdown (a fraction) every rule would pass, for these
    values and this noise, with the test held to `level`: the head's values
    scaled until each rule is met (in ratio of the medians). Scaling the
    head by k scales its median, and (the bootstrap being seeded) its
    interval, by exactly k; the U test's crossing is
    stats.u_critical_scale; the prediction test is a fixed distance on the
    log scale. None when the U test never can."""
    # The head as if it had not moved (its median on the base's): how far
    # must it move for the U test? That depends on the noise, not the change.
    lvl = c.base / c.head
    r_u = u_critical_scale([v * lvl for v in samples], values, level, down)
    if r_u is None:
        return None
    ratio = c.head / c.base
    lo, hi = c.interval
    targets = [r_u, ratio / (1.0 + (hi if down else lo)),
               (1.0 - s.min_change) if down else (1.0 + s.min_change)]
    if runs is not None:
        crit = prediction_critical(runs, level)
        mean = sum(map(math.log, runs)) / len(runs)
        targets.append(math.exp(mean - crit if down else mean + crit) / c.base)
    target = min(targets) if down else max(targets)  # every rule must hold: the farthest
    return (1.0 - target) if down else (target - 1.0)


def _is_ab_pair(base: BaseEntry, h: HeadEntry) -> bool:
    """Both sides of one A/B run, each with its workers: pair them."""
    return (base.ab is not None and h.ab is not None and base.ab[0] == h.ab[0] and base.ab[1] != h.ab[1]
            and len(base.workers) == len(h.workers) > 0)


def _paired_row(key: SeriesKey, base: BaseEntry, h: HeadEntry, s: Compare, pairs, c: Comparison,
                level: float) -> Row:
    """Worker i of the head against worker i of the base (they ran back to
    back). Every pair whose two workers are ok counts, whatever its ratio:
    dropping far-off pairs by their outcome would make the test's p-value
    smaller than it is. "Sees": the smallest slowdown whose mean log ratio,
    with these pairs' spread, the sign-flip test rejects at `level` (and at
    least min_change); None when n pairs cannot reach `level` at all."""
    logs = [math.log(a / b) for a, b in pairs]
    down = h.better == "bigger"
    shift = sign_flip_shift(logs, level, -1.0 if down else 1.0)
    detectable = None if shift is None else max(-math.expm1(-shift) if down else math.expm1(shift), s.min_change)
    if sign_flip_min_p(len(pairs)) >= level:
        call, reason = "unchanged", (f"{len(pairs)} pairs cannot reach p < {level:.2g} "
                                     f"(the smallest p is {sign_flip_min_p(len(pairs)):.2g}){_shared(level, s)}")
    else:
        call, reason = judge(c, h.better, s.min_change, s.alpha, None, level)
    lo, hi = c.interval
    interval = (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo > -1.0 else None
    return Row(*key, verdict=call, unit=h.unit, better=h.better, base=c.base, head=c.head, delta=c.delta,
               interval=interval, p_value=c.p_value, basis="pairs", base_n=c.base_n, head_n=c.head_n,
               base_runs=base.count, reason=reason, detectable=detectable,
               pairs_left_out=len(h.workers) - len(pairs), level=level)


def _metric_row(key: SeriesKey, name: str, base: BaseEntry | None, h: HeadEntry, s: Compare):
    """A function level -> Row for a one-value-per-run metric (better:
    smaller): the head's value as one more night or base run (the prediction
    test and its interval)."""
    value = h.samples[0]
    if base is None:
        row = Row(*key, verdict="new", unit=h.unit, better="smaller", head=value, head_n=1, metric=name)
        return lambda level: row
    runs, dips = drop_dips(base.run_values, "smaller")
    mid = median(runs)
    common = dict(unit=h.unit, better="smaller", base=mid, head=value, delta=value / mid - 1.0,
                  basis="nights" if base.kind == NIGHTS else "runs", base_n=len(runs), head_n=1,
                  base_runs=base.count, base_dips=dips, metric=name)
    if len(runs) < MIN_RUNS_FOR_SPREAD:
        row = Row(*key, verdict="unchanged", **common,
                  reason=f"one value per run: {len(runs)} base value{'s' * (len(runs) != 1)}, "
                         f"the test needs {MIN_RUNS_FOR_SPREAD}")
        return lambda level: row
    mean = sum(map(math.log, runs)) / len(runs)
    crit = prediction_critical(runs, s.alpha)
    p = prediction_p_value(value, runs)
    interval = (value / math.exp(mean + crit) - 1.0, value / math.exp(mean - crit) - 1.0)
    c = Comparison(base=mid, head=value, delta=value / mid - 1.0, interval=interval, p_value=p,
                   base_n=len(runs), head_n=1)

    def make(level: float) -> Row:
        call, reason = judge(c, "smaller", s.min_change, s.alpha, None, level)
        detectable = max(math.exp(mean + prediction_critical(runs, level)) / mid - 1.0, s.min_change)
        return Row(*key, verdict=call, **common, interval=interval, p_value=p, p_prediction=p,
                   reason=reason, detectable=detectable, level=level)
    return make


def _shared(level: float, alpha) -> str:
    """The note a row held to a Benjamini–Hochberg level gets (nothing at alpha itself)."""
    alpha = alpha.alpha if isinstance(alpha, Compare) else alpha
    return "" if level >= alpha else f" (Benjamini–Hochberg: {alpha:g} shared across the rows)"


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def _test_values(base: BaseEntry, runs: tuple[float, ...], run_dips: int, head_n: int,
                 alpha: float) -> tuple[tuple[float, ...], str, int]:
    """(values, basis, dips left out) for the U test. One value per night or
    run: the honest run-to-run spread; but with too few of them (after dips)
    no test could ever reach alpha (7 repeats against 3 nights: p >= 0.017),
    so then every repeat sample stands in; so too with fewer than
    MIN_RUNS_FOR_SPREAD runs (1000 latency calls of workers v2 records, or
    35 round p50s of v3 ones, against one base value would test where that
    one value falls, not a change)."""
    if len(runs) >= MIN_RUNS_FOR_SPREAD and min_p_value(head_n, len(runs)) <= alpha:
        return runs, "nights" if base.kind == NIGHTS else "runs", run_dips
    samples, dips = drop_dips(base.samples, base.better)
    return samples, "samples", dips


def _missing(base: BaseEntry) -> Row:
    return Row(*base.key, verdict="missing", unit=base.unit, better=base.better,
               base=median(base.run_values), base_runs=base.count)
