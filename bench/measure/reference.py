"""The reference build: a frozen Keras run beside the nightly, pair by pair (pure).

`bench run --reference PYTHON` runs a duet (or, on an accelerator, turns) of
two builds, like `--ab`: side a is the reference (a pinned Keras in its own
venv, with the same backend packages), side b the build under test. Both
sides' worker i run at the same time on the same host, so a slow host slows
both and their ratio holds still where the samples/s do not (measured:
studies/bench_reference.py; docs/measurements.md, "The reference build").

Each of the nightly's ok results gets a `reference` block (record contract,
schema_version 1 extension):

    {"value": the reference's headline, same unit,
     "ratio": this build / the reference: exp(median of the pairs' log ratios),
     "pairs": how many worker pairs the ratio rests on,
     "log_se": the standard error of the median log ratio (log_se), with 3+ pairs}

The headline `value` is never rescaled; the ratio is a figure of its own
(bench.analyse.series: the "<mode>.vs-ref" series, same direction as the mode).

A ratio is only Keras against Keras when everything else is the same: when
the two sides' workers report different backend packages or numpy
(`mismatch`), no result gets a `reference` block; each ok result says why in
`reference_refused` (a string, an extension of schema_version 1), so the
night keeps its own figures and the vs-ref series simply has no point.
scripts/install-reference.sh installs the reference under the nightly's
`pip freeze` (less Keras) so that this is rare.
"""

from __future__ import annotations

import math
from statistics import median, stdev
from typing import Mapping, Sequence

from bench.records.workers import worker_values


def ratio(reference: Mapping, build: Mapping, duet: bool = True) -> tuple[float, int] | None:
    """(build / reference, pairs): the median log ratio of worker i of each
    side, over the first-round pairs where both are ok (extras.worker_values:
    not a rerun, a calibration or a leftover). None without such a pair.

    In a duet a pair ran at the same time on one host, so what disturbs one
    side disturbs the other: a disturbed pair counts. Measured on 20
    identical-build duets (studies/bench_reference.py report
    .local/ab-duet8/identical; 8 pairs each): the ratio's spread across them
    was ±3.3 % with every pair, ±10.1 % with the disturbed ones left out (a
    run left with 1 clean pair of 8 read 0.897) and ±4.2 % as the ratio of
    the two headlines. Taken in turns, the sides ran apart, so a disturbed
    worker leaves its pair out."""
    logs = pair_logs(reference, build, duet)
    if not logs:
        return None
    return math.exp(median(logs)), len(logs)


def pair_logs(reference: Mapping, build: Mapping, duet: bool = True) -> list[float]:
    """log(build / reference) of each usable pair (ratio says which count)."""
    return [math.log(b / a) for a, b in zip(worker_values(reference, disturbed_too=duet),
                                            worker_values(build, disturbed_too=duet))
            if a is not None and b is not None]


def log_se(logs: Sequence[float]) -> float | None:
    """The standard error of the median of the pairs' log ratios (≈ the ratio's
    relative error): 1.2533 times their standard deviation over sqrt(n), the
    median's under normal noise; None with fewer than 3 pairs. The status takes
    it as a floor under the series' noise (bench.analyse.trends)."""
    if len(logs) < 3:
        return None
    return 1.2533 * stdev(logs) / math.sqrt(len(logs))


def mismatch(reference_envs: Sequence[Mapping], build_envs: Sequence[Mapping]) -> str | None:
    """Why the two sides cannot be compared, or None: the backend packages
    (a worker environment's `versions`) and numpy (`numpy_version`) of the
    first worker that reported them on each side, e.g. "numpy 2.1.0 on the
    reference, 2.2.1 on the nightly". A side that reported nothing is not
    held against it (an install failure records its own error)."""
    ref, build = _versions(reference_envs), _versions(build_envs)
    if ref is None or build is None:
        return None
    found = [f"{name} {ref.get(name) or 'absent'} on the reference, {build.get(name) or 'absent'} on the nightly"
             for name in sorted(set(ref) | set(build)) if ref.get(name) != build.get(name)]
    return "; ".join(found) or None


# The builds a ratio compares: their versions differ by design. Since 2026-12-06
# a worker's `versions` (backends.installed_versions) lists Keras too, and without
# this every real pair's ratio was refused for "keras-nightly A on the reference,
# B on the nightly" (found by the first workers v13 smoke run, 2026-12-07).
KERAS = ("keras", "keras-nightly")


def _versions(envs: Sequence[Mapping]) -> dict[str, str] | None:
    for env in envs:
        if isinstance(env, Mapping) and isinstance(env.get("versions"), Mapping):
            got = {str(k): str(v) for k, v in env["versions"].items() if k not in KERAS}
            if env.get("numpy_version"):
                got["numpy"] = str(env["numpy_version"])
            return got
    return None


def attach(reference: Sequence[Mapping], build: Sequence[Mapping], duet: bool = True,
           refused: str | None = None) -> list[dict]:
    """The build's results, each ok one with its `reference` block when the
    reference has the same (model, mode) ok and at least one usable pair.
    A result without one keeps its value and simply has no block: the
    nightly's own figure never depends on the reference having run.
    `refused` (mismatch's reason): no block at all; each ok result carries
    the reason as `reference_refused`."""
    if refused:
        return [{**r, "reference_refused": refused} if r.get("status") == "ok" else dict(r) for r in build]
    ref = {(r.get("model"), r.get("mode")): r for r in reference if r.get("status") == "ok"}
    out = []
    for r in build:
        partner = ref.get((r.get("model"), r.get("mode"))) if r.get("status") == "ok" else None
        found = ratio(partner, r, duet) if partner is not None else None
        if found is None:
            out.append(dict(r))
            continue
        value, pairs = found
        block = {"value": partner["value"], "ratio": value, "pairs": pairs}
        se = log_se(pair_logs(partner, r, duet))
        if se is not None:
            block["log_se"] = se
        out.append({**r, "reference": block})
    return out
