"""What can any test call within 3 nights at 1 % noise, for a given false-alarm
rate? The bound behind issue 52's goals for precise series.

    .venv/bin/python studies/status_bound.py            # seconds

Normal nightly noise at each precise level of tests/corpus/streams.py, a step
of 2 % or 3 %. The test is the efficient one for normal noise: the mean of the
last k nights (k = 3..10, as the status's window and confirm) against the mean
of the 36 nights before them, z = difference / (sigma * sqrt(1/k + 1/36)), a
call when |z| passes the bar and the difference is at least the 1.5 % floor;
sigma either known (an oracle no rule has) or the standard deviation of the 36
nights (the most efficient estimate under normal noise; a robust one is worse;
`--sigma-nights N`: of the N nights before the candidate, the level still from 36).
With 3 nights at the new level, the difference of the means is the sufficient
statistic for a step at that night, so no rule that sees only those nights does
better at the same false-alarm rate (Neyman-Pearson). False alarms are counted
as status_eval.py counts them: year streams replayed night by night, a new call
event (no call the night before, or a date more than 3 nights off) is one.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

BEFORE, WINDOW, CONFIRM, FLOOR = 36, 10, 3, np.log(1.015)
LEVELS = (0.003, 0.005, 0.007, 0.010)
BARS = (3.5, 3.75, 4.0, 4.25, 4.5)


def calls(x: np.ndarray, bar: float, sigma: float | None, span: int = BEFORE) -> tuple[np.ndarray, np.ndarray]:
    """Per stream and night: the call's direction (0: none) and its date, the
    longest qualifying k first (log values x, shape (streams, nights)); sigma
    None: the SD of the `span` nights before the candidate."""
    streams, nights = x.shape
    cs = np.concatenate([np.zeros((streams, 1)), np.cumsum(x, 1)], 1)
    cs2 = np.concatenate([np.zeros((streams, 1)), np.cumsum(x * x, 1)], 1)
    way, date = np.zeros((streams, nights)), np.full((streams, nights), -1)
    for k in range(WINDOW, CONFIRM - 1, -1):
        n = np.arange(max(BEFORE, span) + k - 1, nights)
        c = n - k + 1
        after = (cs[:, n + 1] - cs[:, c]) / k
        before = (cs[:, c] - cs[:, c - BEFORE]) / BEFORE
        if sigma is None:
            mean = (cs[:, c] - cs[:, c - span]) / span
            s = np.sqrt(np.maximum((cs2[:, c] - cs2[:, c - span]) / span - mean ** 2, 0) * span / (span - 1))
        else:
            s = sigma
        d = after - before
        hit = (np.abs(d) >= FLOOR) & (np.abs(d) > bar * s * np.sqrt(1 / k + 1 / BEFORE))
        w, dt = way[:, n], date[:, n]
        new = hit & (w == 0)
        w[new], dt[new] = np.sign(d[new]), np.broadcast_to(c, d.shape)[new]
        way[:, n], date[:, n] = w, dt
    return way, date


def false_alarms(way: np.ndarray, date: np.ndarray, start: int) -> int:
    events, prev_way, prev_date = 0, np.zeros(len(way)), np.full(len(way), -99)
    for n in range(start, way.shape[1]):
        w, d = way[:, n], date[:, n]
        events += int(((w != 0) & ((prev_way != w) | (np.abs(prev_date - d) > CONFIRM))).sum())
        prev_way, prev_date = w, np.where(w != 0, d, -99)
    return events


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--years", type=int, default=300, help="flat series-years per noise level")
    p.add_argument("--steps", type=int, default=3000, help="step streams per level and size")
    p.add_argument("--sigma-nights", type=int, default=BEFORE,
                   help="nights the estimated sigma comes from (the level always from 36)")
    args = p.parse_args(argv)
    span = max(BEFORE, args.sigma_nights)
    rng = np.random.default_rng(args.seed)
    print("| sigma | bar | false alarms per 10 series-years: at 1 % noise; over the four levels "
          "| 2 % step within 3 nights (0.3, 0.5, 0.7, 1 %; pooled) | 3 % step |")
    print("|---|---|---|---|---|")
    for known in (True, False):
        flat = {lv: rng.normal(0, lv, (args.years, span + WINDOW + 365)) for lv in LEVELS}
        for bar in BARS:
            fa = [10 * false_alarms(*calls(flat[lv], bar, lv if known else None, span), span + WINDOW) / args.years
                  for lv in LEVELS]
            cells = []
            for size in (0.02, 0.03):
                got = []
                for lv in LEVELS:
                    y = rng.normal(0, lv, (args.steps, span + CONFIRM))
                    y[:, span:] += np.log1p(size)
                    way, _ = calls(y, bar, lv if known else None, span)
                    got.append(float((way[:, span:] == 1).any(1).mean()))
                cells.append(", ".join(f"{g:.0%}" for g in got) + f"; **{np.mean(got):.1%}**")
            print(f"| {'known' if known else f'SD of {span} nights'} | {bar} | {fa[-1]:.2f}; {np.mean(fa):.2f} | "
                  + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
