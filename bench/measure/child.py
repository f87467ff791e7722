"""One benchmark in its own process: `python -m bench.measure.child SPEC_JSON`.

The parent (bench/measure/runner.py) starts one child per (model, mode) with
KERAS_BACKEND and the device's env set, and reads the JSON the child writes to
`spec.result_path`. The child's steps, each timed:

  import   the backend's prepare(), then Keras            -> failed/install
  build    a seeded model, compiled (bench.measure.workloads)
  compile  the first fit/predict call (traces and compiles) -> compile_seconds
  gate     bench/measure/workloads/gate.py                          -> failed/quality
  timing   bench/measure/harness.py: warm-up, calibration, repeats  -> ok, samples/s
           mode "latency": bench/measure/latency.py, batch-1 predict_on_batch -> ok, p50 ms
  usage    bench/measure/usage.py: peak host/device memory, energy over the timed calls
  native   with Spec.native, pairs of a Keras call and the same steps in the backend's
           own code (bench/measure/native.py) -> result "native", never a failure
  profile  with Spec.profile, one call under the backend's profiler, after all of the
           above (bench/measure/profiling.py) -> result "profile", never a failure

A Python exception becomes a classified failure in the result file; a child
that dies without writing one is classified by the parent.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.measure import backends, barrier, disturbance, failures, harness, latency, profiling, usage, verify

SEED = 1234
# Batches per fit/predict call in the timed region: as many as fit in
# CHUNK_BYTES of input, so Keras's per-call set-up (data adapter, callbacks,
# about 2-5 ms) is spread over many batches while the data stays bounded.
CHUNK_BYTES = 128 * 2**20
UNIT, BETTER = "samples/s", "bigger"
MODES = ("train", "predict", "latency")
LATENCY_UNIT, LATENCY_BETTER = "ms", "smaller"


def backend_mode(mode: str) -> str:
    """What a mode asks of the backend (backends' supports()): latency is a predict."""
    return "predict" if mode == "latency" else mode

# The latency mode's quality gate predicts the test digits in batches of this
# many (one call per digit would only slow the gate down).
LATENCY_GATE_BATCH = 128


@dataclass(frozen=True)
class Spec:
    """What one child runs; JSON between parent and child."""

    backend: str  # label, e.g. mlx-main
    keras_backend: str
    model: str
    mode: str
    batch_size: int
    repeats: int
    min_repeat_seconds: float
    warmup_steps: int
    result_path: str
    env: dict = field(default_factory=dict)  # the device's env settings
    steps: int | None = None  # protocol 2: the fixed work per call (None: calibrate here)
    latency_calls: int = latency.MIN_CALLS  # mode "latency": timed batch-1 calls ...
    latency_warmup: int = 20                # ... after this many untimed ones
    canary_tolerance: float = 3.0  # throughput repeats (harness.canary_tolerance)
    spread_goal: float | None = None  # ... and their extra repeats (harness.spread_goal)
    canary_floor: float | None = None  # the fastest canary seen earlier in the run, seconds
    stored_steps: int | None = None  # workers v13: the series' stored work, checked against harness.STEPS_BAND
    sync_dir: str | None = None  # workers v13: a duet's barrier folder (bench/measure/barrier.py) ...
    sync_side: str = ""  # ... and this worker's side in it ("a" or "b")
    native: int = 0  # pairs of Keras and native calls timed after the benchmark (bench/measure/native.py); 0: off
    profile: bool = False  # one profiled call after everything timed (pool.py picks the worker)

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"Spec.mode is {self.mode!r}; expected one of {', '.join(MODES)}")
        if self.batch_size < 1:
            raise ValueError(f"Spec.batch_size is {self.batch_size!r}; expected a positive integer")

    def duet_barrier(self) -> "barrier.Barrier | None":
        """This benchmark's barrier with the other side of its duet, or None (no duet)."""
        if not self.sync_dir:
            return None
        return barrier.Barrier(self.sync_dir, self.sync_side, f"{self.model}.{self.mode}")

    def protocol(self) -> harness.Protocol:
        return harness.Protocol(repeats=self.repeats, min_repeat_seconds=self.min_repeat_seconds,
                                warmup_steps=self.warmup_steps, canary_tolerance=self.canary_tolerance,
                                spread_goal=self.spread_goal)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Spec":
        return cls(**json.loads(text))

    def base_result(self) -> dict:
        unit, better = (LATENCY_UNIT, LATENCY_BETTER) if self.mode == "latency" else (UNIT, BETTER)
        return {"model": self.model, "mode": self.mode, "unit": unit, "better": better,
                "batch_size": self.batch_size}


class _Failed(Exception):
    def __init__(self, failure: failures.Failure, extra: dict | None = None):
        super().__init__(failure.message)
        self.failure, self.extra = failure, extra or {}


def _stage(name: str, fn, *args):
    """Run one step; an exception becomes a classified failure of that step."""
    try:
        return fn(*args)
    except _Failed:
        raise
    except BaseException as e:  # noqa: BLE001 - every failure must be recorded, not raised
        traceback.print_exc(file=sys.stderr)
        raise _Failed(failures.from_exception(e, name)) from e


def execute(spec: Spec, clock=time.perf_counter) -> dict:
    """Run the benchmark; return {"result": {...}, "environment": {...}}."""
    t_start = clock()
    env_info: dict = {}
    result = spec.base_result()
    sync = spec.duet_barrier()  # a duet's: both sides start each timed repeat together
    try:
        backend = _stage("import", backends.get, spec.keras_backend)
        keras = _stage("import", _import_keras, backend, spec, env_info)
        # this benchmark's own peak memory, not an earlier one's in the same worker
        settled = usage.settle(keras)
        peak_scope = "benchmark" if usage.reset_peaks(backend) else "process"
        usage.trace(f"reset:{spec.model}/{spec.mode}")
        model, data = _stage("build", _build, keras, spec)
        usage.trace("build")
        env_info["jit"] = getattr(model, "jit_compile", None)  # what jit_compile="auto" resolved to
        measure = _latency if spec.mode == "latency" else _throughput
        result.update(measure(model, data, spec, backend, _device_name(env_info), clock, sync))
        result["memory"] = usage.memory_block(backend, scope=peak_scope, settled=settled)
        if spec.native and spec.mode != "latency" and result.get("status") == "ok":  # after the memory is read
            result["native"] = _native(model, data, spec, backend, result["steps_per_call"])
        if spec.profile:  # last: the profiler cannot move a figure, a check or a peak read above
            result["profile"] = profiling.take(backend, *_profiled(model, data, spec, backend))
    except _Failed as f:
        result.update(status="failed", error=f.failure.as_error(), **f.extra)
    finally:
        if sync:
            sync.end()  # failed before its repeats, or done: the other side stops waiting for this one
    result["child_seconds"] = round(clock() - t_start, 3)
    return {"result": result, "environment": env_info}


def _throughput(model, d: "_Data", spec: Spec, backend, device: str, clock, sync=None) -> dict:
    """Modes train and predict: samples/s through the harness's timed repeats."""
    run = _runner(model, d, spec, backend)
    compile_seconds = _stage("compile", harness.time_call, lambda: run(1), clock)
    usage.trace("compile")
    quality = _stage("gate", _gate, model, d, spec, clock)
    usage.trace("gate")
    reset = _stage("timing", _start_state, model, spec, backend) if spec.mode == "train" else None
    last: dict = {}

    def kept(steps):  # keeps the last timed call's result for _verify
        last["out"] = run(steps)
        # inside the timed call (the harness times `kept`): 0.2 µs when off; when
        # BENCH_MEMORY_TRACE is on, ~70 µs, against timed repeats of 0.25-0.5 s and more
        usage.trace(f"call:{steps}")
        return last["out"]

    meter = usage.meter(device)  # read around each timed call, outside it (harness.timed)
    timing = _stage("timing", harness.benchmark, kept, spec.batch_size, spec.protocol(), clock, None,
                    spec.steps, disturbance.snapshot, time.time, spec.canary_floor, reset,
                    spec.stored_steps, sync.wait if sync else None, meter)
    if sync:
        sync.end()
        sync.await_end()  # the profiled call below overlaps none of the other side's rounds
        sync.await_end()  # the verify, set-up, native and profiled calls below overlap none of its repeats
    energy = meter.energy(len(timing.repeats), spec.batch_size)
    # the model as the last timed call left it, before the set-up calls put the state back
    quality["timed"] = _stage("verify", _verify, model, d, spec, last.get("out"))
    usage.trace("verify")
    setup = _stage("timing", harness.setup_seconds, run, timing, clock, harness.SETUP_CALLS, reset)
    return dict(status="ok", value=timing.value, samples=list(timing.samples),
                compile_seconds=round(compile_seconds, 6), quality=quality, **timing.summary(),
                steps_per_call=timing.steps, setup_seconds=round(setup, 6), energy=energy,
                min_repeat_seconds=spec.min_repeat_seconds, **({"sync": sync.summary()} if sync else {}))


def _profiled(model, d: "_Data", spec: Spec, backend):
    """(the profiled call, its steps): profiling.STEPS batches of the timed
    fit or predict, or profiling.LATENCY_CALLS batch-1 calls. A train model is
    put back to the committed start every timed call starts from (untimed,
    here), whatever ran after the repeats: the native pairs train it on from a
    state of their own, so without this a device with native on would profile
    another model state than one without."""
    if spec.mode == "latency":
        x1 = d.x_test[:1]
        return (lambda: [backend.sync(model.predict_on_batch(x1)) for _ in range(profiling.LATENCY_CALLS)],
                profiling.LATENCY_CALLS)
    if spec.mode == "train":
        _start_state(model, spec, backend)()
    run = _runner(model, d, spec, backend)
    return (lambda: run(profiling.STEPS)), profiling.STEPS


def _native(model, d: "_Data", spec: Spec, backend, steps: int) -> dict:
    """The native block (bench/measure/native.py): Keras against the backend's native code."""
    from bench.measure import native

    keras_side = native.Keras(model, _runner(model, d, spec, backend), steps, spec.mode, d.x_test, d.x_time,
                              d.y_time, d.chunk)
    return native.measure(backend, keras_side, spec.batch_size, spec.native)


def _start_state(model, spec: Spec, backend) -> "harness.Reset":
    """reset(): the model's weights to the committed ones (bench/measure/workloads/
    weights/<model>.npz, the predict benchmarks' weights) and Adam's momentums,
    velocities and step count to the committed state that goes with them
    (<model>.train.npz; both made by studies/make_weights.py), then a backend
    sync, so nothing of the reset is left for the timed call to wait on.

    Workers v13: the same start on both sides of a pair and on every night.
    Workers v11 put back the state the quality gate left, which the Keras version
    under test had trained: a nightly and a reference started their timed calls
    from different models. A fresh Adam (moments at zero) on the trained weights
    is no start either: its first steps move every weight by the full learning
    rate, and held-out accuracy fell from 0.97 to 0.83 in one timed call (jax
    mlp/train). Without any reset each call trained on from the last, so a
    worker's later repeats timed a model much further along than its first, and
    how far depended on the steps per call (26-72 for torch cnn/train). Far
    along, torch's weights and Adam's moments go denormal (~5 % of them after
    ~600 mlp steps, loss ~1e-4) and x86 computes those slowly: torch
    mlp/train's workers read ~47k samples/s for 4 repeats, then ~38k
    (studies/bench_train_state.py). XLA flushes denormals to zero, which is why
    jax never showed it."""
    import numpy as np

    from bench.measure.workloads import gate

    committed, adam = gate.load_reference(spec.model).weights, gate.load_train_start(spec.model)
    opt = model.optimizer
    momentums, velocities = list(getattr(opt, "_momentums", ())), list(getattr(opt, "_velocities", ()))
    variables = list(model.weights) + momentums + velocities + [opt.iterations]
    start = list(committed) + list(adam.momentums) + list(adam.velocities) + [np.array(adam.iterations)]
    shapes = [tuple(v.shape) for v in variables], [tuple(np.shape(a)) for a in start]
    if len(model.trainable_variables) != len(adam.momentums) or shapes[0] != shapes[1]:
        raise _Failed(failures.Failure("quality", f"the committed train start of {spec.model} ({adam.source}) "
                                                  f"does not fit the model and its optimizer (shapes {shapes[1]} "
                                                  f"vs {shapes[0]})"))
    saved = [np.asarray(a).astype(v.dtype) for v, a in zip(variables, start)]

    def reset() -> None:
        for v, value in zip(variables, saved):
            v.assign(value)
        backend.sync([v.value for v in variables])

    return reset


def _device_name(env_info: dict) -> str:
    return str(env_info.get("device", {}).get("device", "cpu"))


def _latency(model, d: "_Data", spec: Spec, backend, device: str, clock, sync=None) -> dict:
    """Mode "latency": batch-1 `predict_on_batch` (Keras's compiled single-batch
    path, the one online inference takes) in rounds of `spec.latency_calls`
    timed calls, each round a harness repeat between two canaries, after
    `spec.latency_warmup` untimed calls; value = p50 in ms over the calls of
    the rounds the canaries kept (bench/measure/latency.py says why)."""
    x1 = d.x_test[:1]

    def call():
        return backend.sync(model.predict_on_batch(x1))

    compile_seconds = _stage("compile", harness.time_call, call, clock)
    gate_spec = Spec(**{**spec.__dict__, "mode": "predict", "batch_size": LATENCY_GATE_BATCH})
    quality = _stage("gate", _gate, model, d, gate_spec, clock)

    def timed_round(calls):  # the harness's run(steps): `calls` batch-1 calls, each timed
        return latency.measure(call, calls, 0, clock).samples_ms

    # The meter is read around each round, outside it (harness.timed), never inside a timed call.
    meter = usage.meter(device)
    got = _stage("timing", latency.measure_rounds, timed_round, spec.latency_calls,
                 latency.protocol(spec.repeats, spec.latency_warmup), clock, None, disturbance.snapshot,
                 spec.canary_floor, sync.wait if sync else None, meter)
    if sync:
        sync.end()
    lat = got.latency
    summary = {k: v for k, v in got.timing.summary().items()
               if k not in ("calibration", "warmup_seconds", "steps_source", "steps_why")}
    if sync:
        summary["sync"] = sync.summary()
    summary["canary"]["disturbed_samples"] = got.disturbed_samples  # in ms (the harness gives samples/s)
    return dict(status="ok", value=lat.p50_ms, samples=got.samples,
                latency=lat.summary(rounds=len(got.samples)), compile_seconds=round(compile_seconds, 6),
                quality=quality, energy=meter.energy(len(got.timing.repeats), 1), **summary)  # J per 1000 calls


def _import_keras(backend, spec: Spec, env_info: dict):
    env_info["settings"] = backend.prepare(spec.env)
    import keras

    env_info["keras_version"] = keras.__version__
    # This worker's own venv: in an A/B or --reference run the parent's python is another build.
    env_info["versions"] = backend.versions()
    # numpy too: a reference ratio is refused when its two sides differ in it (bench/measure/reference.py)
    env_info["numpy_version"] = backends.installed_versions(("numpy",)).get("numpy")
    env_info["device"] = backend.device_info()
    env_info["keras_config"] = {"floatx": keras.config.floatx(),
                                "dtype_policy": keras.config.dtype_policy().name}
    return keras


@dataclass(frozen=True)
class _Data:
    x_gate: object  # digits train split, a whole number of batches
    y_gate: object
    x_test: object
    y_test: object
    x_time: object  # `chunk` batches of digits, tiled
    y_time: object
    chunk: int  # batches per fit/predict call


def _build(keras, spec: Spec):
    from bench.measure import workloads
    from bench.measure.workloads import data, gate

    w = workloads.get(spec.model)
    split = data.digits()
    keras.utils.set_random_seed(SEED)
    model = w.build()
    workloads.compile_model(model)
    if spec.mode in ("predict", "latency"):
        ref = gate.load_reference(spec.model)
        current = model.get_weights()
        shapes = [tuple(a.shape) for a in current], [tuple(a.shape) for a in ref.weights]
        if shapes[0] != shapes[1]:
            raise _Failed(failures.Failure("quality", f"committed weights {ref.source} do not fit the "
                                                      f"{spec.model} model (shapes {shapes[1]} vs {shapes[0]})"))
        model.set_weights(list(ref.weights))
    n = len(split.x_train) // spec.batch_size * spec.batch_size
    if n == 0:
        raise ValueError(f"batch size {spec.batch_size} is larger than the {len(split.x_train)} training digits")
    x_train = data.for_model(split.x_train, w.flat_input)
    # (latency times one test digit: no tiled timing data)
    chunk = 1 if spec.mode == "latency" else max(1, CHUNK_BYTES // (spec.batch_size * x_train[0].nbytes))
    # predict times the held-out digits tiled, so its last timed output can be
    # checked row by row against the reference logits (bench/measure/verify.py)
    x_src, y_src = ((data.for_model(split.x_test, w.flat_input), split.y_test) if spec.mode == "predict"
                    else (x_train, split.y_train))
    x_time, y_time = data.tiled(x_src, y_src, chunk * spec.batch_size)
    return model, _Data(x_train[:n], split.y_train[:n], data.for_model(split.x_test, w.flat_input),
                        split.y_test, x_time, y_time, chunk)


def _runner(model, d: _Data, spec: Spec, backend):
    """run(steps): `steps` batches of fit or predict, returning host values.

    Calls cover at most `d.chunk` batches each (so the data stays bounded);
    every batch is full, so no call compiles a new shape. fit's loss comes back
    as a Python float, and the backend's sync covers any device work left.
    """
    bs = spec.batch_size

    def chunks(steps: int):
        full, rest = divmod(steps, d.chunk)
        return [d.chunk] * full + ([rest] if rest else [])

    def fit(steps: int):
        for n in chunks(steps):
            h = model.fit(d.x_time[:n * bs], d.y_time[:n * bs], batch_size=bs, epochs=1, verbose=0, shuffle=False)
        return backend.sync(h.history["loss"][-1])

    def predict(steps: int):
        for n in chunks(steps):
            out = model.predict(d.x_time[:n * bs], batch_size=bs, verbose=0)
        return backend.sync(out)

    return fit if spec.mode == "train" else predict


def _held_out_logits(model, d: _Data, spec: Spec):
    """The model's logits for the held-out digits, for _gate and _verify.

    At the benchmark's batch size (protocol workers v5). One batch of all 360
    held-out digits, as before, left torch's heap grown by 3 to 31 MiB,
    process by process, and the benchmark's peak with it: torch cnn/train's
    workers peaked 737-791 MiB (docs/measurements.md, "Peak memory")."""
    return model.predict(d.x_test, batch_size=spec.batch_size, verbose=0)


def _gate(model, d: _Data, spec: Spec, clock) -> dict:
    from bench.measure.workloads import gate

    t0 = clock()
    if spec.mode == "train":
        accs: list[float] = []
        while len(accs) < gate.MAX_EPOCHS and not (accs and accs[-1] >= gate.TRAIN_ACCURACY):
            model.fit(d.x_gate, d.y_gate, batch_size=spec.batch_size, epochs=1, verbose=0, shuffle=False)
            logits = _held_out_logits(model, d, spec)
            accs.append(gate.accuracy(logits, d.y_test))
        verdict = gate.check_train(accs, gate.TRAIN_ACCURACY)
    else:
        logits = _held_out_logits(model, d, spec)
        verdict = gate.check_predict(logits, d.y_test, gate.load_reference(spec.model))
    numbers = dict(verdict.numbers, seconds=round(clock() - t0, 3))
    if not verdict.passed:
        raise _Failed(failures.Failure("quality", verdict.message), {"quality": numbers})
    return numbers


def _verify(model, d: _Data, spec: Spec, last) -> dict:
    """Check the timed calls' own results; wrong ones fail as `quality`."""
    from bench.measure.workloads import gate

    if spec.mode == "train":
        logits = _held_out_logits(model, d, spec)
        verdict = verify.timed_train(last, gate.accuracy(logits, d.y_test))
    else:
        verdict = verify.timed_predict(last, gate.load_reference(spec.model))
    if not verdict.passed:
        raise _Failed(failures.Failure("quality", verdict.message), {"quality": {"timed": verdict.numbers}})
    return verdict.numbers


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m bench.measure.child SPEC_JSON", file=sys.stderr)
        return 2
    spec = Spec.from_json(argv[0])
    payload = execute(spec)
    path = Path(spec.result_path)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, sort_keys=True, allow_nan=False))
    os.replace(tmp, path)  # the parent sees a whole file or none
    return 0


if __name__ == "__main__":
    sys.exit(main())
