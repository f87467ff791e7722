"""Confirm a change by a same-machine A/B that adds pairs until it can say
DIFFERENT or SAME (pure: the pairs come from an injected source).

The loop is Chromium Pinpoint's (dashboard/pinpoint/models/compare): after
each batch of attempts it asks the comparison for DIFFERENT, SAME or
UNKNOWN, and UNKNOWN adds attempts until a limit. Pinpoint calls DIFFERENT
when its p-value is at most a fixed low threshold (0.01), SAME when the
p-value is above a high threshold that falls as the attempt count grows
(read from a table simulated for a change of a given magnitude, in IQRs: "a
change that large would rarely give a p-value this high"), and UNKNOWN in
between; where the high threshold falls below the low one, it stops.

Here, on pairs (worker i of A beside worker i of B, their log ratio):
  DIFFERENT  the exact sign-flip test of the log ratios (stats.sign_flip_p)
             gives p < alpha / looks: the overall alpha is split over the
             looks the plan allows (Bonferroni), so adding pairs and looking
             again never lifts the chance of a false DIFFERENT above alpha;
  SAME       the sign-flip interval at level 2 * beta / looks (each side
             beta / looks) lies wholly within +-magnitude: a change of
             `magnitude` or more is rejected on both sides (two one-sided
             tests). This is Pinpoint's high threshold read from the pairs
             themselves instead of a simulated table: as pairs are added the
             interval narrows, as Pinpoint's high threshold falls;
  UNKNOWN    otherwise; add `step` pairs and look again, until max_pairs
             or the time budget, then the answer stays UNKNOWN.
Order: DIFFERENT is asked first, as in Pinpoint.

Formats (JSON, sorted keys):
  result format 1 (2026-12): {format, kind: "confirm", series, good, bad,
    answer, direction, delta, interval, p_value, pairs, looks: [look...],
    plan: {...}, stopped, message}
  look: {pairs, p_value, answer, interval}
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from bench.config import Compare
from bench.errors import BenchError
from bench.compare.stats import sign_flip_interval, sign_flip_min_p, sign_flip_p

FORMAT = 1
DIFFERENT, SAME, UNKNOWN = "DIFFERENT", "SAME", "UNKNOWN"
ANSWERS = (DIFFERENT, SAME, UNKNOWN)

Pair = tuple[float, float]  # (A's figure, B's figure), same unit, both > 0
PairSource = Callable[[int], Sequence[Pair]]  # k more pairs (fewer when workers failed)


class ConfirmError(BenchError, ValueError):
    """Bad confirm input: names the input, the bad value and the expected form."""


@dataclass(frozen=True)
class Plan:
    """How the loop adds pairs and decides.

    alpha: the chance of a false DIFFERENT over the whole loop; beta: the
    chance of a false SAME (calling SAME when the change is `magnitude`),
    over the whole loop; magnitude: the smallest change (a fraction, e.g.
    0.03) that SAME rules out; first: pairs before the first look; step:
    pairs added per look; max_pairs: the most pairs; budget_s: seconds
    the loop may run (None: no limit), checked before each batch from the
    time the last batch took per pair."""

    alpha: float = 0.01
    beta: float = 0.05
    magnitude: float = 0.03
    # 8 looks of 8 pairs, up to 64: what the 20-minute budget holds at this
    # VM's 17 s a pair. Where a pair moves 5 % (this VM's duet pairs: 6.5-8.3 %)
    # it meets the goals (3 % DIFFERENT, identical SAME, >= 95 % each), which
    # 8 + 4 up to 40 did only to about 3.5 % (docs/measurements.md, "the confirm plan").
    first: int = 8
    step: int = 8
    max_pairs: int = 64
    budget_s: float | None = None

    def __post_init__(self):
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0.0 < v < 0.5:
                raise ConfirmError(f"Plan.{name} is {v!r}; expected a probability below 0.5, such as 0.01")
        if not 0.0 < self.magnitude < 1.0:
            raise ConfirmError(f"Plan.magnitude is {self.magnitude!r}; expected a fraction such as 0.03")
        if not (isinstance(self.first, int) and self.first >= 2):
            raise ConfirmError(f"Plan.first is {self.first!r}; expected at least 2 pairs")
        if not (isinstance(self.step, int) and self.step >= 1):
            raise ConfirmError(f"Plan.step is {self.step!r}; expected at least 1 pair")
        if not (isinstance(self.max_pairs, int) and self.max_pairs >= self.first):
            raise ConfirmError(f"Plan.max_pairs is {self.max_pairs!r}; expected at least first ({self.first})")
        if self.budget_s is not None and not self.budget_s > 0:
            raise ConfirmError(f"Plan.budget_s is {self.budget_s!r}; expected seconds > 0 or none")

    @property
    def looks(self) -> int:
        """How many looks the plan allows: the first, then one per step."""
        return 1 + math.ceil((self.max_pairs - self.first) / self.step)

    @property
    def low(self) -> float:
        """The p-value a look must be below for DIFFERENT (alpha / looks)."""
        return self.alpha / self.looks

    @property
    def same_level(self) -> float:
        """The two-sided level of the interval that decides SAME (2 beta / looks)."""
        return 2.0 * self.beta / self.looks

    def first_callable(self) -> int:
        """The fewest pairs whose sign-flip p can be below `low` at all."""
        n = 2
        while sign_flip_min_p(n) >= self.low:
            n += 1
        return n


def plan_of(settings: Compare, **given) -> Plan:
    """The plan for bench compare's settings: alpha as compare.alpha, the
    magnitude SAME rules out as compare.min_change; the rest as given."""
    return Plan(alpha=settings.alpha, magnitude=settings.min_change, **given)


@dataclass(frozen=True)
class Look:
    """One decision on the pairs so far. interval: of the change (a fraction),
    at the SAME level; p_value: the sign-flip test's."""

    pairs: int
    p_value: float
    answer: str
    interval: tuple[float, float]


def decide(logs: Sequence[float], plan: Plan) -> Look:
    """DIFFERENT, SAME or UNKNOWN for these log ratios (B / A), by the module's rules."""
    x = np.asarray(logs, dtype=float)
    if len(x) < 2:
        return Look(len(x), 1.0, UNKNOWN, (-1.0, math.inf))
    p = sign_flip_p(x)
    lo, hi = sign_flip_interval(x, plan.same_level)
    bound = math.log1p(plan.magnitude)
    if p < plan.low:
        answer = DIFFERENT
    elif -bound < lo and hi < bound:
        answer = SAME
    else:
        answer = UNKNOWN
    return Look(len(x), p, answer, (_frac(lo), _frac(hi)))


@dataclass(frozen=True)
class Outcome:
    """Where the loop ended. delta: mean log ratio B / A back as a fraction
    (B's figure against A's, in the value's own direction); direction:
    'slower', 'faster' or None, from delta and `better`, for DIFFERENT only;
    stopped: why the loop ended."""

    answer: str
    delta: float
    p_value: float
    pairs: int
    looks: tuple[Look, ...]
    plan: Plan
    better: str
    stopped: str
    seconds: float = 0.0
    values: tuple[Pair, ...] = field(default=(), repr=False)

    def __post_init__(self):
        if self.answer not in ANSWERS:
            raise ConfirmError(f"Outcome.answer is {self.answer!r}; expected one of {', '.join(ANSWERS)}")
        if self.better not in ("bigger", "smaller"):
            raise ConfirmError(f"Outcome.better is {self.better!r}; expected 'bigger' or 'smaller'")

    @property
    def direction(self) -> str | None:
        if self.answer != DIFFERENT:
            return None
        return "faster" if (self.delta > 0) == (self.better == "bigger") else "slower"

    @property
    def interval(self) -> tuple[float, float]:
        return self.looks[-1].interval if self.looks else (-1.0, math.inf)

    def describe(self) -> str:
        """One line: the answer, the change and what it rests on."""
        lo, hi = self.interval
        span = f"{_pct(lo)} … {_pct(hi)}" if math.isfinite(hi) else "unbounded"
        what = {DIFFERENT: f"DIFFERENT ({self.direction})", SAME: "SAME", UNKNOWN: "UNKNOWN"}[self.answer]
        return (f"{what}: B against A {_pct(self.delta)} (interval {span}), p={self.p_value:.2g}, "
                f"{self.pairs} pairs in {len(self.looks)} look(s); {self.stopped}")


def run(source: PairSource, plan: Plan, better: str, clock: Callable[[], float] = time.monotonic) -> Outcome:
    """Add pairs from `source` until a look says DIFFERENT or SAME, or the
    plan's pairs, looks or time run out (then UNKNOWN)."""
    start = clock()
    pairs: list[Pair] = []
    looks: list[Look] = []
    want, per_pair, dry = plan.first, None, 0
    while True:
        if plan.budget_s is not None and per_pair is not None and \
                clock() - start + per_pair * (want - len(pairs)) > plan.budget_s:
            return _end(pairs, looks, plan, better, f"the next batch would pass the budget of {plan.budget_s:g} s",
                        clock() - start)
        t0 = clock()
        got = [_pair(p) for p in source(want - len(pairs))]
        if got:
            per_pair = (clock() - t0) / len(got)
            dry = 0
        else:
            dry += 1
            if dry >= 2:
                return _end(pairs, looks, plan, better, "two batches in a row gave no usable pair", clock() - start)
        pairs += got
        if len(pairs) >= 2 and got:
            look = decide([math.log(b / a) for a, b in pairs], plan)
            looks.append(look)
            if look.answer != UNKNOWN:
                return _end(pairs, looks, plan, better, f"decided at look {len(looks)}", clock() - start)
            if len(looks) >= plan.looks:
                return _end(pairs, looks, plan, better, f"the plan's {plan.looks} looks are spent", clock() - start)
        if len(pairs) >= plan.max_pairs:
            return _end(pairs, looks, plan, better, f"the plan's {plan.max_pairs} pairs are spent", clock() - start)
        want = min(plan.max_pairs, max(want, len(pairs)) + plan.step)


def _end(pairs, looks, plan, better, why, seconds) -> Outcome:
    logs = [math.log(b / a) for a, b in pairs]
    last = looks[-1] if looks else None
    return Outcome(answer=last.answer if last else UNKNOWN,
                   delta=math.expm1(sum(logs) / len(logs)) if logs else 0.0,
                   p_value=last.p_value if last else 1.0, pairs=len(pairs), looks=tuple(looks), plan=plan,
                   better=better, stopped=why, seconds=seconds, values=tuple(pairs))


def _pair(p) -> Pair:
    try:
        a, b = float(p[0]), float(p[1])
    except (TypeError, ValueError, IndexError):
        raise ConfirmError(f"pair {p!r}; expected (A's figure, B's figure)") from None
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        raise ConfirmError(f"pair {p!r}; expected two finite figures > 0")
    return a, b


def result_json(outcome: Outcome, series: str, good: str, bad: str) -> str:
    """The confirm result record (format 1): what the alert issue and bisect read."""
    lo, hi = outcome.interval
    return json.dumps({
        "format": FORMAT, "kind": "confirm", "series": series, "good": good, "bad": bad,
        "answer": outcome.answer, "direction": outcome.direction, "delta": outcome.delta,
        "interval": [lo, hi] if math.isfinite(hi) else None, "p_value": outcome.p_value, "pairs": outcome.pairs,
        "looks": [{**asdict(k), "interval": list(k.interval) if math.isfinite(k.interval[1]) else None}
                  for k in outcome.looks],
        "plan": {**asdict(outcome.plan), "looks": outcome.plan.looks, "low": outcome.plan.low},
        "stopped": outcome.stopped, "seconds": round(outcome.seconds, 1),
        "message": f"{series}: {bad} against {good}: {outcome.describe()}",
    }, sort_keys=True, indent=1) + "\n"


def _frac(log_value: float) -> float:
    return math.expm1(log_value) if math.isfinite(log_value) else (math.inf if log_value > 0 else -1.0)


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"
