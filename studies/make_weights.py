"""Make the predict gate's committed weights: bench/measure/workloads/weights/<model>.npz.

    .venv/bin/python studies/make_weights.py            # rewrite both files
    .venv/bin/python studies/make_weights.py --check    # regenerate in memory, compare
    .venv/bin/python studies/make_weights.py --train-start  # only <model>.train.npz

Each model also gets <model>.train.npz (workers v13): Adam's momentums,
velocities and step count at the end of the same training, stored as float32.
With the committed weights they are where every timed train call starts
(bench/measure/child.py _start_state): a trained model with a fresh Adam
(moments at zero) takes steps of the full learning rate in every weight and
fell from 0.97 to 0.83 held-out accuracy within one timed call (jax mlp).

Reproducible: fixed seed (keras.utils.set_random_seed), fixed data split,
unshuffled epochs, on the jax CPU backend (KERAS_BACKEND is forced to jax
unless --backend says otherwise). Weights are stored as float16 to keep the
files small; the reference logits are computed from exactly those rounded
weights, so a backend that loads them must reproduce the logits up to float32
rounding (bench/measure/workloads/gate.py holds the tolerance).

Bit-identical weights come back only with the same library versions on a CPU
with the same widest vector extension: a new jax or Keras nightly, or XLA
compiling for AVX-512 instead of AVX2, changes float32 summation order, and six
epochs carry that into the last float16 bit of thousands of weights. So each
file records the versions it was built with (BUILT_WITH) and the CPU's
(cpu_isa; files from before 2026-12-04 read it as unrecorded); --check demands
identical weights when they all match and, when they do not, that the
retrained model passes the predict gate against the committed file (the same
model up to rounding).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SEED = 1234
EPOCHS = {"cnn": 6, "mlp": 5}
BUILT_WITH = ("keras", "jax", "jaxlib", "numpy")  # distributions whose versions decide the bits


def versions() -> dict:
    """{"<dist>_version": installed version or "absent"} for BUILT_WITH."""
    from importlib import metadata

    def version(*dists):  # the first of these distributions installed
        for dist in dists:
            try:
                return metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        return "absent"
    # keras-nightly installs the `keras` module under another distribution name
    got = {f"{d}_version": version(d, "keras-nightly") if d == "keras" else version(d) for d in BUILT_WITH}
    got["cpu_isa"] = cpu_isa()
    return got


# XLA compiles for the CPU it runs on, so the widest vector extension changes the
# order of float sums and with it the last bits of every weight (2026-12-04: the
# same versions on an AVX-512 EPYC gave weights that differ from the committed
# ones in the last bits, at the same accuracy to 4 digits). Widest first.
ISA_LEVELS = ("avx512f", "avx2", "avx", "sse4_2", "sve", "asimd")


def cpu_isa() -> str:
    """'X86_64 avx512f': the CPU architecture and its widest vector extension (py-cpuinfo)."""
    from bench.measure.telemetry import cpu

    try:
        info = cpu.info()
    except Exception as e:  # noqa: BLE001 - an unknown CPU only loosens the check
        return f"unknown ({type(e).__name__})"
    flags = set(info.get("flags", []))
    return " ".join([str(info.get("arch", "unknown"))] + [f for f in ISA_LEVELS if f in flags][:1])


def version_changes(committed: dict, here: dict) -> list[str]:
    """'jax 0.10.1 -> 0.10.2' for every BUILT_WITH version, and the CPU's vector
    extension (cpu_isa), that differs (missing reads 'unrecorded')."""
    return [f"{k.removesuffix('_version')} {committed.get(k, 'unrecorded')} -> {v}"
            for k, v in here.items() if committed.get(k) != v]


def train(name: str, batch_size: int):
    import keras
    import numpy as np

    from bench.measure import workloads
    from bench.measure.workloads import data

    w = workloads.get(name)
    split = data.digits()
    keras.utils.set_random_seed(SEED)
    model = w.build()
    workloads.compile_model(model)
    n = len(split.x_train) // batch_size * batch_size
    x = data.for_model(split.x_train[:n], w.flat_input)
    model.fit(x, split.y_train[:n], batch_size=batch_size, epochs=EPOCHS[name], verbose=0, shuffle=False)
    opt = model.optimizer
    adam = (int(keras.ops.convert_to_numpy(opt.iterations)),
            [keras.ops.convert_to_numpy(m.value) for m in opt._momentums],
            [keras.ops.convert_to_numpy(v.value) for v in opt._velocities])
    # Round to what is stored, then take the reference logits from the rounded weights.
    weights = [np.asarray(v, dtype=np.float16).astype(np.float32) for v in model.get_weights()]
    model.set_weights(weights)
    logits = model.predict(data.for_model(split.x_test, w.flat_input), batch_size=batch_size, verbose=0)
    return weights, logits, split.y_test, adam


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="cnn,mlp")
    p.add_argument("--backend", default="jax", help="KERAS_BACKEND to train with (default jax)")
    p.add_argument("--out", type=Path, default=None, help="folder (default bench/measure/workloads/weights)")
    p.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    p.add_argument("--train-start", action="store_true",
                   help="write only <model>.train.npz, Adam's state at the end of the training")
    args = p.parse_args(argv)
    os.environ["KERAS_BACKEND"] = args.backend

    import numpy as np

    from bench import config
    from bench.measure.workloads import gate

    cfg = config.load()
    bad = 0
    for name in args.models.split(","):
        weights, logits, labels, adam = train(name, cfg.models[name].batch_size)
        acc = gate.accuracy(logits, labels)
        path = (args.out / f"{name}.npz") if args.out else gate.reference_path(name)
        meta = {"backend": args.backend, "seed": SEED, "epochs": EPOCHS[name],
                "batch_size": cfg.models[name].batch_size, **versions()}
        if not args.check:
            start = (args.out / f"{name}.train.npz") if args.out else gate.train_start_path(name)
            gate.save_train_start(start, *adam, meta)
            print(f"{name}: Adam's state after {adam[0]} steps -> {start} ({start.stat().st_size // 1024} KiB)")
            if args.train_start:
                continue
        if args.check:
            ref = gate.load_reference(name, path)
            same = len(ref.weights) == len(weights) and all(
                np.array_equal(a, b) for a, b in zip(ref.weights, weights))
            verdict = gate.check_predict(logits, labels, ref)
            changes = version_changes(ref.meta, versions())
            if same:
                state = "identical"
            elif changes:
                state = f"differ, as expected across versions ({', '.join(changes)})"
            else:
                state = "DIFFER with the same versions"
            print(f"{name}: weights {state}; accuracy {acc:.4f} "
                  f"(committed {ref.accuracy:.4f}); gate {'passes' if verdict.passed else 'FAILS: ' + verdict.message}")
            bad += not ((same or changes) and verdict.passed)
            continue
        gate.save_reference(path, weights, logits, acc, meta)
        print(f"{name}: accuracy {acc:.4f}, {sum(w.size for w in weights)} weights -> {path} "
              f"({path.stat().st_size // 1024} KiB)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
