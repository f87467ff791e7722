"""Derive tests/corpus/real_noise.json: night-to-night noise taken from real
github-action-benchmark histories, for the "real" noise kind of the status
evaluation's streams (tests/corpus/streams.py, studies/status_eval.py).

    .venv/bin/python studies/derive_real_noise.py --realhist DIR [--out tests/corpus/real_noise.json]

For each benchmark series in each DIR/*.js with at least MIN_POINTS
positive values: the residual of each point is log(value) minus the median
of log values over the CENTRE points around it (a running median follows
the repository's own steps, so what is left is noise: jitter, spikes and
dips). Series whose robust sigma (1.4826 MAD of residuals) lies within
SIGMA_RANGE are kept, up to PER_FILE per file (spread evenly), each as up to
KEEP consecutive residuals (rounded to 1e-4; order kept so bursts stay
together). Deterministic. The output names its source files, not a path.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from statistics import median

MIN_POINTS = 40
CENTRE = 9
SIGMA_RANGE = (0.003, 0.05)
PER_FILE = 6
KEEP = 80
# Tools whose values are times: their residuals are negated so that, as in
# the corpus, a negative residual is always a slow night (a dip).
SMALLER_TOOLS = {"customSmallerIsBetter", "cargo", "go", "catch2", "julia", "jmh", "benchmarkdotnet"}


def residuals(values: list[float]) -> list[float]:
    x = [math.log(v) for v in values]
    h = CENTRE // 2
    return [x[i] - median(x[max(0, i - h):i + h + 1]) for i in range(len(x))]


def series_of(path: Path):
    text = path.read_text(encoding="utf-8")
    data = json.loads(text[text.index("{"):].rstrip().rstrip(";"))
    for suite, entries in sorted(data.get("entries", {}).items()):
        values: dict[str, list[float]] = {}
        sign: dict[str, float] = {}
        for entry in entries:
            for b in entry.get("benches", []):
                v = b.get("value")
                if isinstance(v, (int, float)) and v > 0 and math.isfinite(v):
                    values.setdefault(b["name"], []).append(float(v))
                    sign[b["name"]] = -1.0 if entry.get("tool") in SMALLER_TOOLS else 1.0
        for name, vs in sorted(values.items()):
            if len(vs) >= MIN_POINTS:
                yield f"{suite}/{name}", vs, sign[name]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--realhist", type=Path, required=True, help="folder of data.js files")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests/corpus/real_noise.json")
    args = p.parse_args()
    files = sorted(args.realhist.glob("*.js"))
    if not files:
        print(f"derive_real_noise: no *.js files in {args.realhist}", file=sys.stderr)
        return 2
    out = []
    for path in files:
        kept = []
        for name, vs, sign in series_of(path):
            r = [sign * v for v in residuals(vs[-KEEP - CENTRE:])[CENTRE // 2:-(CENTRE // 2)][-KEEP:]]
            sigma = 1.4826 * median(abs(v) for v in r)
            if SIGMA_RANGE[0] <= sigma <= SIGMA_RANGE[1]:
                kept.append({"source": f"{path.name}:{name}", "sigma": round(sigma, 5),
                             "residuals": [round(v, 4) for v in r]})
        step = max(1, len(kept) // PER_FILE)
        out += kept[::step][:PER_FILE]
    # format 1 (2026-12): {format, about, series: [{source, sigma, residuals}]}
    doc = {"format": 1, "about": "log residuals around a running median of 9, from public "
           "github-action-benchmark histories (studies/derive_real_noise.py); negative = slower",
           "series": out}
    args.out.write_text(json.dumps(doc, sort_keys=True, indent=0) + "\n")
    print(f"derive_real_noise: {len(out)} series from {len(files)} files -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
