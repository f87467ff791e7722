"""Hand-built nights of a whole matrix, labelled by how they are built, for
bench.analyse.triangulate.

Each case is a (backend x device) grid, four model/mode slices per cell, 60
nights of noise with an occasional dip, and one or two changes applied by
construction: Keras's core (every slice of most backends on every device),
one backend's path (that backend, every device), one device (every backend
on it), one series alone, or two unrelated changes on the same night (a
backend's path and another device's machine). The label of each checked
series is the set of kinds whose change touched it, nothing else: this file
shares no code or constant with the classifier.

  PYTHONPATH=. .venv/bin/python tests/triangulate_cases.py [N [FIRST]]   # the right-rate per class
                                                  # on seeds FIRST..FIRST+N-1
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from bench.analyse.series import Point, Series

START = datetime(2026, 9, 1, 2, 0, tzinfo=timezone.utc)
NIGHTS = 60
BACKENDS = ("jax", "torch", "mlx", "openvino")
DEVICES = ("rtx", "m4", "ryzen", "xeon")
SLICES = (("cnn", "train"), ("cnn", "predict"), ("mlp", "train"), ("mlp", "predict"))
CLASSES = ("keras", "backend", "device", "series", "two")


@dataclass(frozen=True)
class Case:
    kind: str                                  # one of CLASSES: how it was built
    series: dict                               # key -> Series
    truth: dict                                # checked key -> frozenset of kinds
    versions: dict                             # checked key -> whether the backend's package moved
    machine: dict                              # checked key -> whether the driver moved


def build(kind: str, seed: int) -> Case:
    rng = random.Random(seed)
    backends = BACKENDS[:rng.randint(3, 4)]
    devices = DEVICES[:rng.randint(3, 4)]
    cells = [(b, d) for b in backends for d in devices]
    night = NIGHTS - rng.randint(4, 8)          # the change's first night: inside the window, confirmed
    step = rng.choice((-1, 1)) * rng.uniform(0.08, 0.2)
    hit: dict = {}                              # key -> [(kind, factor)]
    bumped_pkg, bumped_driver = set(), set()

    def touch(key, what, factor):
        hit.setdefault(key, []).append((what, factor))

    b0, d0 = rng.choice(backends), rng.choice(devices)
    if kind == "keras":
        spared = rng.choice(backends) if rng.random() < 0.3 else None  # a backend Keras's change misses
        for b, d in cells:
            if b != spared:
                for m in SLICES:
                    touch((b, d, *m), "keras", 1 + step)
    if kind in ("backend", "two"):
        for d in devices:
            for m in SLICES:
                touch((b0, d, *m), "backend", 1 + step)
        if rng.random() < 0.5:
            bumped_pkg.add(b0)
    if kind in ("device", "two"):
        dev = d0
        step2 = rng.choice((-1, 1)) * rng.uniform(0.08, 0.2) if kind == "two" else step
        for b in backends:
            for m in SLICES:
                touch((b, dev, *m), "device", 1 + step2)
        if rng.random() < 0.5:
            bumped_driver.add(dev)
    if kind == "series":
        touch((b0, d0, *rng.choice(SLICES)), "series", 1 + step)

    series = {}
    for b, d in cells:
        for m in SLICES:
            key = (b, d, *m)
            base = rng.uniform(5e3, 3e5)
            noise = rng.uniform(0.005, 0.025)
            factor = math.prod(f for _, f in hit.get(key, ()))
            pts = []
            for i in range(NIGHTS):
                level = base * (factor if i >= night else 1.0)
                v = level * math.exp(rng.gauss(0, noise))
                if rng.random() < 0.04:
                    v *= rng.uniform(0.3, 0.85)  # a shared-machine dip
                t = START + timedelta(days=i)
                env = (("driver", "575" if (d in bumped_driver and i >= night) else "570"),
                       (b, "2.1" if (b in bumped_pkg and i >= night) else "2.0"))
                state = (("driver", env[0][1]), ("runner", f"runner-{d}"))
                pts.append(Point(day=t.date(), value=v, started_at=t, attempt=1, run_id=str(i),
                                 keras_version=f"3.16.0.dev{t:%Y%m%d}02", url=None, env=env, state=state))
            series[key] = Series(key, "samples/s", "bigger", tuple(pts), (), (), START + timedelta(days=NIGHTS - 1))

    checked = _checked(kind, hit, rng, b0, d0)
    truth = {k: frozenset(w for w, _ in hit[k]) for k in checked}
    return Case(kind, series, truth, {k: k[0] in bumped_pkg for k in checked},
                {k: k[1] in bumped_driver for k in checked})


def _checked(kind: str, hit: dict, rng: random.Random, b0: str, d0: str) -> list:
    """The changed series a case is judged on: one at random, or for two
    changes one of the backend's only, one of the device's only and the one in both."""
    if kind != "two":
        return [rng.choice(sorted(hit))]
    only_b = sorted(k for k, h in hit.items() if {w for w, _ in h} == {"backend"})
    only_d = sorted(k for k, h in hit.items() if {w for w, _ in h} == {"device"})
    # The cell in both is judged only when both changes go the same way (else it may net out).
    both = sorted(k for k, h in hit.items() if len(h) == 2 and len({f > 1 for _, f in h}) == 1)
    return [rng.choice(only_b), rng.choice(only_d)] + ([rng.choice(both)] if both else [])


def newest(case: Case) -> datetime:
    return max(s.last_seen for s in case.series.values())


def judge(case: Case, origins: dict, assessed: dict) -> tuple[bool, bool]:
    """(every checked series was called Regressed/Faster by the status rule,
    every called one got exactly the kinds it was built with)."""
    called = [k for k in case.truth if assessed[k].status in ("Regressed", "Faster")]
    return (len(called) == len(case.truth),
            all(k in origins and origins[k].kinds == case.truth[k] for k in called))


if __name__ == "__main__":
    from bench.analyse.trends import assess
    from bench.analyse.triangulate import triangulate
    from bench.config import load

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    t = load().trends
    for kind in CLASSES:
        both = called = right = 0
        for seed in range(first, first + n):
            case = build(kind, seed)
            assessed = {k: assess(s, newest(case), t) for k, s in case.series.items()}
            all_called, all_right = judge(case, triangulate(case.series, assessed), assessed)
            both += all_called and all_right
            called += all_called
            right += all_called and all_right
        print(f"{kind:8s} end to end {both}/{n} ({both / n:.0%}); "
              f"of the {called} the status rule called, {right} right ({right / max(called, 1):.0%})")
