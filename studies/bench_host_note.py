#!/usr/bin/env python3
"""Does the host's reference workload tell a slow host from slow Keras? Over kept sets.

    .venv/bin/python studies/bench_host_note.py .local/stab-48 .local/stab-49 ... [--off 0.05]
    .venv/bin/python studies/bench_host_note.py --scaled .local/stab-50 ...

The status table's note says what the host did on the nights it speaks of
(bench/analyse/host.py): a record's host reading is the median
`reference_seconds` over its workers, and a night's shift is that reading
against the usual one. This treats each invocation of a kept set
(`bench_stability.py --keep DIR`; same Keras, so every move is the machine's)
as a night, its shift against the median of the set's other invocations, and
counts, for each (backend, model, mode) row:

- off nights: the headline worse than the other invocations' median by at least
  --off; how many of them the host reading calls slower, as before, faster;
- nights the host read slower: how far the rows moved then, against the rest.

With one Keras build, an off night the host calls "as before" is a miss (a
Keras regression would look the same), and the threshold (host.HELD) is
chosen where off nights are called slower while calm nights seldom are.

--scaled asks the question issue 10 answers with "never silently rescale the
headline": had each headline been rescaled by its night's host reading (all of
the reading's move, or a power of it), how many rows would have held within
±5 % and ±3 % across their set?
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "studies"))

from bench.analyse import host  # noqa: E402
from bench.measure import estimate  # noqa: E402
from bench_stability import kept_sets_argument, load_records, not_folders, ok_results  # noqa: E402

THRESHOLDS = (0.03, 0.05, 0.08, 0.10)
SCALE_POWERS = (0.0, 0.25, 0.5, 0.75, 1.0)  # 0: the headline as recorded


def worse(value: float, usual: float, better: str) -> float:
    """How much worse than usual, as a fraction (negative: better)."""
    return usual / value - 1 if better == "bigger" else value / usual - 1


def first_workers(data: dict, pick) -> float | None:
    """A reading from what records before 2026-12-06 keep of every repeat's canary:
    each result's `canary.seconds` (its first worker's, around the kept repeats),
    `pick`ed (statistics.median or min) per result, then the median over results."""
    per = [pick(r["canary"]["seconds"]) for r in data.get("results", ())
           if r.get("status") == "ok" and r.get("canary", {}).get("seconds")]
    return statistics.median(per) if per else None


# --basis: how a night's host is read. `record` is what the product reads
# (bench/analyse/host.py: the workers' median canary where recorded, else their fastest).
BASES = {
    "record": host.seconds,
    "median": lambda d: host.seconds(d, host.TYPICAL),
    "fastest": lambda d: host.seconds(d, host.FASTEST),
    "first-median": lambda d: first_workers(d, statistics.median),
    "first-fastest": lambda d: first_workers(d, min),
}


def nights(folders: list[Path], read=host.seconds) -> list[tuple[float, list[float]]]:
    """Per invocation (a backend's record in a set): (host shift, each ok row's worse-ness),
    both against the median of the set's other invocations of that backend."""
    out = []
    for folder in folders:
        for records in load_records([folder]).values():
            readings = [read(d) for d in records]
            rows = [{key: (r["value"], r.get("better", "bigger")) for key, r in ok_results(d).items()}
                    for d in records]
            for i, reading in enumerate(readings):
                others = [x for j, x in enumerate(readings) if j != i and x]
                if not reading or not others:
                    continue
                moves = []
                for key, (value, better) in rows[i].items():
                    rest = [row[key][0] for j, row in enumerate(rows) if j != i and key in row]
                    if rest:
                        moves.append(worse(value, statistics.median(rest), better))
                out.append((reading / statistics.median(others) - 1, moves))
    return out


def report(folders: list[Path], off: float, read=host.seconds) -> list[str]:
    found = nights(folders, read)
    if not found:
        return [f"no invocation with a host reading in {', '.join(map(str, folders))}"]
    lines = [f"{len(found)} invocations, {sum(len(m) for _, m in found)} rows; an off night is a row "
             f"{off * 100:.0f} % or more worse than the set's other invocations"]
    shifts = [s for s, m in found for _ in m]
    moves = [x for _, m in found for x in m]
    rho = stats.spearmanr(shifts, moves)
    lines.append(f"host shift against the row's move, per row: Spearman {rho.statistic:.2f} (p={rho.pvalue:.2g})")
    offs = [(s, x) for s, x in zip(shifts, moves) if x >= off]
    lines.append(f"{'threshold':<10} {'off nights: slower / as before / faster':<42} "
                 f"{'host-slower nights: rows off, median move':<44} other nights: rows off, median move")
    for t in THRESHOLDS:
        slow = sum(s >= t for s, _ in offs)
        fast = sum(s <= -t for s, _ in offs)
        on = [x for s, x in zip(shifts, moves) if s >= t]
        rest = [x for s, x in zip(shifts, moves) if s < t]
        lines.append(f"{t * 100:>5.0f} %    {f'{slow} / {len(offs) - slow - fast} / {fast} of {len(offs)}':<42} "
                     f"{_moves(on, off):<44} {_moves(rest, off)}")
    return lines


def scaled(value: float, better: str, slower: float, power: float) -> float:
    """The headline as if the host had run at its usual speed: `slower` is the night's
    reading over the set's usual one (1.1: 10 % slower), `power` how much of that to take
    out (1: all of it, as though the model slowed exactly as the numpy workload did)."""
    factor = slower ** power
    return value * factor if better == "bigger" else value / factor


def scaled_table(folders: list[Path], read=host.seconds) -> list[str]:
    """Would rescaling each headline by the host reading hold it still? Per power, the rows
    (set, backend, model, mode) within ±5 % and ±3 % across the set's invocations.
    Measured only: the product never rescales a headline (bench/analyse/host.py)."""
    rows = []
    for folder in folders:
        for records in load_records([folder]).values():
            readings = [read(d) for d in records]
            if len(records) < 2 or not all(readings):
                continue
            usual = statistics.median(readings)
            results = [ok_results(d) for d in records]
            rows += [[(r[key]["value"], r[key].get("better", "bigger"), reading / usual)
                      for r, reading in zip(results, readings)]
                     for key in results[0] if all(key in r for r in results)]
    if not rows:
        return [f"no set with a host reading in every invocation in {', '.join(map(str, folders))}"]
    lines = [f"{len(rows)} rows, each headline times (night's host reading / the set's usual) ** power",
             f"{'power':<7} {'within ±5 %':<14} within ±3 %"]
    for power in SCALE_POWERS:
        spreads = [estimate.spread([scaled(v, b, s, power) for v, b, s in row]) for row in rows]
        lines.append(f"{power:<7.2f} {sum(x <= 0.05 for x in spreads):<14} {sum(x <= 0.03 for x in spreads)}")
    return lines


def _moves(moves: list[float], off: float) -> str:
    if not moves:
        return "none"
    return (f"{sum(x >= off for x in moves)} of {len(moves)}, "
            f"{statistics.median(moves) * 100:+.1f} %")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    kept_sets_argument(p)
    p.add_argument("--off", type=float, default=0.05, help="a row this much worse is an off night (default 0.05)")
    p.add_argument("--scaled", action="store_true",
                   help="instead: how still each headline would hold if rescaled by the host reading")
    p.add_argument("--basis", choices=BASES, default="record",
                   help="how a night's host is read: as the product does (record: the workers' median "
                        "canary where recorded, else their fastest), by either of those, or from each "
                        "result's first worker's repeat canaries (first-median, first-fastest; what "
                        "records before 2026-12-06 keep)")
    a = p.parse_args()
    if not_folders("bench_host_note", a.folders):
        return 2
    read = BASES[a.basis]
    print("\n".join(scaled_table(a.folders, read) if a.scaled else report(a.folders, a.off, read)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
