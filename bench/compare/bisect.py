"""Bisect a slowdown to the first Keras commit whose same-machine A/B against
the good commit is slower beyond the noise.

Pure logic: the probe (install a commit, run the A/B, compare) is an
injectable function, so tests use a fake runner and `bench bisect` the real
one (bench/compare/bisect_probe.py). The state (every probe so far) is saved
after each probe, so an interrupted bisect resumes where it stopped.

Search: `commits` are those after good up to bad, oldest first. Each probe
is the confirm loop (bench.compare.confirm: pairs are added until DIFFERENT
or SAME). Bad is probed first: if the loop does not call it DIFFERENT on
the slow side there is nothing to bisect and no culprit is named. Then a binary search
keeps lo (the newest commit known not slow; good itself at the start) and hi
(the oldest known slow) and probes their midpoint, so n commits take
1 + ceil(log2 n) probes (64 commits: 7). A midpoint is slow when its
measured change is nearer bad's than good's (zero): once bad is known to
be beyond the noise, the question for each midpoint is which side of the
step it is on, and half the step is a wider margin than the significance
test's (studies/bisect_accuracy.py, 5 % slowdown, 2 % noise, 7 fixed pairs:
58/100 right against 36/100 with the test at every midpoint). With each
probe the confirm loop (then 8 pairs and 4 a look up to 40), the same study:
20/20 right at 10 % and at 5 %, 19/20 at 3 %, 7 probes each
(docs/measurements.md); a probe now takes the confirm plan's defaults
(bench/compare/confirm.py Plan), up to 64 pairs.
The culprit is always a probed commit, and the result gives its own
verdict by the loop too.

Formats (JSON, sorted keys):
  state  format 1 (2026-12): {format, kind: "bisect-state", series, good, bad,
         commits, probes: {sha: probe}}
  result format 1 (2026-12): {format, kind: "bisect", series, good, bad,
         commits, probes: [probe, ...] (in the order run), outcome:
         "found" | "none-beyond-noise", culprit, last_good, message}
  probe: {commit, verdict: "slower" | "unchanged" | "faster", delta, interval,
         p_value, pairs}
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from bench.records import atomic
from bench.errors import BenchError, shown

FORMAT = 1
VERDICTS = ("slower", "unchanged", "faster")


class BisectError(BenchError, ValueError):
    """Bad bisect input: names the input, the bad value and the expected form."""


@dataclass(frozen=True)
class Probe:
    """One A/B of a commit against good. delta: probe/good - 1 in the value's
    own unit (for 'bigger' a negative delta is slower); interval: its
    confidence interval; verdict from bench.compare's rule."""

    commit: str
    verdict: str
    delta: float
    interval: tuple[float, float]
    p_value: float
    pairs: int

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise BisectError(f"probe {self.commit}: verdict {self.verdict!r}; expected one of {', '.join(VERDICTS)}")
        if not math.isfinite(self.delta):
            raise BisectError(f"probe {self.commit}: delta {self.delta!r}; expected a finite fraction")

    @classmethod
    def from_json(cls, d: dict) -> "Probe":
        try:
            lo, hi = d["interval"] if d["interval"] is not None else (-1.0, math.inf)  # None: unbounded
            return cls(str(d["commit"]), d["verdict"], float(d["delta"]), (float(lo), float(hi)),
                       float(d["p_value"]), int(d["pairs"]))
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise BisectError(f"probe {d!r}: {e}; expected commit, verdict, delta, interval, p_value, pairs") from None


@dataclass
class State:
    """What a bisect has measured so far; saved after every probe."""

    series: str
    good: str
    bad: str
    commits: tuple[str, ...]
    probes: dict[str, Probe] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # commits in the order they were probed

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "kind": "bisect-state", "series": self.series,
                           "good": self.good, "bad": self.bad, "commits": list(self.commits),
                           "probes": {c: _probe_json(self.probes[c]) for c in self.order}},
                          sort_keys=True, indent=1) + "\n"

    def save(self, path: str | Path) -> None:
        atomic.write_text(path, self.to_json())


def load_state(path: str | Path, series: str, good: str, bad: str, commits: Sequence[str]) -> State:
    """The saved state of this same bisect, or a fresh one when `path` does
    not exist. A state for another bisect (series, good, bad or commits
    differ) is refused, never mixed in."""
    fresh = State(series, good, bad, tuple(commits))
    p = Path(path)
    if not p.exists():
        return fresh
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BisectError(f"state file {p}: {e}; expected a bisect state (JSON) or no file") from None
    if not isinstance(d, dict) or d.get("kind") != "bisect-state" or d.get("format") != FORMAT:
        raise BisectError(f"state file {p}: not a bisect state of format {FORMAT}; "
                          "expected one written by bench bisect, or no file")
    mine = {"series": series, "good": good, "bad": bad, "commits": list(commits)}
    for k, v in mine.items():
        if d.get(k) != v:
            raise BisectError(f"state file {p}: {k} is {shown(d.get(k), 60)}, this bisect's is {shown(v, 60)}; "
                              "expected the state of this same bisect (or give another --state)")
    probes = d.get("probes")
    if not isinstance(probes, dict):
        raise BisectError(f"state file {p}: probes is {shown(probes, 60)}; expected an object")
    for c, pj in probes.items():
        fresh.probes[c] = Probe.from_json(pj)
        fresh.order.append(c)
    return fresh


@dataclass(frozen=True)
class Result:
    series: str
    good: str
    bad: str
    commits: tuple[str, ...]
    probes: tuple[Probe, ...]
    culprit: Probe | None
    last_good: str

    @property
    def outcome(self) -> str:
        return "found" if self.culprit is not None else "none-beyond-noise"

    def message(self) -> str:
        n = len(self.commits)
        if self.culprit is None:
            bad = next((p for p in self.probes if p.commit == self.bad), None)
            seen = f" ({_pct(bad.delta)} against good, {bad.verdict})" if bad else ""
            return (f"{self.series}: no commit is slower beyond the noise: bad {self.bad[:12]}{seen}; "
                    f"{len(self.probes)} probe(s) of {n} commit(s); no culprit named")
        c = self.culprit
        lo, hi = c.interval
        span = f"{_pct(lo)} … {_pct(hi)}" if math.isfinite(hi) else "unbounded"
        return (f"{self.series}: first slow commit {c.commit} ({_pct(c.delta)} against good, "
                f"interval {span}, p={c.p_value:.2g}, {c.pairs} pairs); "
                f"last good {self.last_good[:12]}; {len(self.probes)} probe(s) of {n} commit(s)")

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "kind": "bisect", "series": self.series, "good": self.good,
                           "bad": self.bad, "commits": list(self.commits),
                           "probes": [_probe_json(p) for p in self.probes], "outcome": self.outcome,
                           "culprit": self.culprit.commit if self.culprit else None,
                           "last_good": self.last_good if self.culprit else None,
                           "message": self.message()}, sort_keys=True, indent=1) + "\n"


ProbeFn = Callable[[str], Probe]


def bisect(state: State, probe: ProbeFn, save: Callable[[State], None] = lambda s: None) -> Result:
    """Binary-search state.commits (after good, up to bad, oldest first) for
    the first commit whose probe says 'slower'. Probes already in `state`
    are reused; `save(state)` runs after each new probe."""
    commits = state.commits
    if not commits or commits[-1] != state.bad:
        raise BisectError(f"commits end with {commits[-1] if commits else 'nothing'!r}; expected bad {state.bad!r}")

    def run(i: int) -> Probe:
        c = commits[i]
        if c not in state.probes:
            p = probe(c)
            if p.commit != c:
                raise BisectError(f"probe of {c} answered for {p.commit}; expected the same commit")
            state.probes[c] = p
            state.order.append(c)
            save(state)
        return state.probes[c]

    lo, hi = -1, len(commits) - 1  # lo: newest not slow (-1: good); hi: oldest slow
    bad = run(hi)
    if bad.verdict != "slower":
        return _result(state, None, state.good)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if is_slow(run(mid), bad):
            hi = mid
        else:
            lo = mid
    return _result(state, state.probes[commits[hi]], commits[lo] if lo >= 0 else state.good)


def is_slow(p: Probe, bad: Probe) -> bool:
    """Is `p` on bad's side of the step: its change nearer bad's than zero
    (good's)? Log scale, so a ratio's distance is the same either way."""
    x, b = math.log1p(p.delta), math.log1p(bad.delta)
    return abs(x - b) < abs(x)


def _result(state: State, culprit: Probe | None, last_good: str) -> Result:
    return Result(state.series, state.good, state.bad, state.commits,
                  tuple(state.probes[c] for c in state.order), culprit, last_good)


def _probe_json(p: Probe) -> dict:
    d = asdict(p)
    d["interval"] = list(p.interval) if all(map(math.isfinite, p.interval)) else None  # too few pairs: unbounded
    return d


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"

