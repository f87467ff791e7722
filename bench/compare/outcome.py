"""The whole comparison, ready to render: rows, environment differences, the
host's speed against the baseline and the settings that decided the verdicts (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.config import Compare
from bench.compare.baseline import Baseline
from bench.compare.envdiff import EnvDiff, environment_differences
from bench.compare.head import Head
from bench.compare.hostshift import HostShift, host_shifts
from bench.compare.verdicts import VERDICTS, Row, compare, rules


@dataclass(frozen=True)
class Outcome:
    rows: tuple[Row, ...]              # display order: slower first
    differences: tuple[EnvDiff, ...]
    baseline: str                      # what the head was measured against
    min_change: float                  # fraction, e.g. 0.03
    alpha: float                       # two-sided test level, e.g. 0.01
    hosts: tuple[HostShift, ...] = ()  # per target: the head's host against the baseline's

    def counts(self) -> dict[str, int]:
        """Rows per verdict, in VERDICTS order, only those present."""
        found = [r.verdict for r in self.rows]
        return {v: found.count(v) for v in VERDICTS if v in found}

    def rules(self) -> tuple[str, ...]:
        """Every rule the verdicts applied, with these settings (verdicts.RULES)."""
        return rules(self.min_change, self.alpha)

    def blind(self) -> tuple[Row, ...]:
        """Compared rows that could not have called a slowdown of min_change:
        too few repeats (or too much noise) to see it."""
        return tuple(r for r in self.rows if r.p_value is not None
                     and (r.detectable is None or r.detectable > self.min_change + 1e-12))

    def headline(self) -> str:
        """e.g. '2 slower, 1 faster, 9 unchanged'."""
        return ", ".join(f"{n} {v}" for v, n in self.counts().items()) or "nothing to compare"


def build_outcome(baseline: Baseline, head: Head, settings: Compare) -> Outcome:
    return Outcome(rows=compare(baseline, head, settings),
                   differences=environment_differences(baseline.environments, head.environments),
                   baseline=baseline.description, min_change=settings.min_change, alpha=settings.alpha,
                   hosts=host_shifts(baseline.hosts, head.hosts))
