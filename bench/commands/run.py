"""Run the benchmarks of one device: one record per backend, one child process per (model, mode).

Writes DIR/<backend>--<device>--<run id>-<attempt>.json (validated against
run.schema.json) and prints each written path on stdout; progress and a
summary table go to stderr. Exits 0 even when benchmarks failed (the failures
are in the record); 2 on usage or configuration errors.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial

from bench.measure import backends, check, environment, lock, machine, native, pool, reference, runner, schedule, telemetry
from bench.measure import steps as stored_steps

from bench import config

from bench.records import record
from bench.measure.child import Spec
from bench.commands.arguments import positive_float, split_names
from bench.errors import UsageError
from bench.config import ConfigError
from bench.measure.harness import Protocol
from bench.measure.child import backend_mode
from bench.measure.summary import Eta, eta_line, progress_line, summary_table


def add_arguments(parser):
    parser.add_argument("--backend", action="append", default=None,
                        help="backend label (repeatable or comma-separated; default: every backend of the device)")
    parser.add_argument("--device", default=None,
                        help="device label from benchmarks.yaml (default: $BENCH_DEVICE or local-cpu)")
    parser.add_argument("--models", nargs="+", default=None, help="models, comma- or space-separated (default: all)")
    parser.add_argument("--modes", nargs="+", default=None, help="modes, comma- or space-separated (default: all)")
    parser.add_argument("--out", default=".", help="folder for the record files (default: .)")
    parser.add_argument("--quick", action="store_true",
                        help="a demo, not the nightly's protocol: harness.quick_workers worker processes of "
                             "harness.quick_repeats shorter repeats (quick_min_repeat_seconds), run at the same "
                             "time where the device gives each worker its own CPUs (worker_cpus), disturbed "
                             "workers flagged but not rerun; the nightly uses harness.workers x harness.repeats")
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=2,
                        help="2 (default): worker processes, fixed work, disturbance reruns (bench/measure/pool.py); "
                             "1: one process per benchmark, as before")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes per benchmark (default: harness.workers; --quick: quick_workers; "
                             "--ab and --reference: ab_workers pairs)")
    parser.add_argument("--ab", nargs=2, metavar=("A_PYTHON", "B_PYTHON"), default=None,
                        help="same-machine A/B: the python of two venvs, each holding a Keras build; their "
                             "workers run in this job (--ab-mode); writes one record per side with run.ab")
    parser.add_argument("--ab-root", nargs=2, metavar=("A_ROOT", "B_ROOT"), default=None,
                        help="with --ab: the checkout whose bench each side's workers run (default: this one "
                             "for both), for an A/B of two bench versions on one Keras (pr-bench.yml)")
    parser.add_argument("--reference", metavar="REF_PYTHON", default=None,
                        help="the python of a venv holding a frozen Keras build (devices.<d>.reference): its "
                             "workers run beside this build's, pair by pair as in --ab; this build's record "
                             "makes the points and carries each result's ratio to the reference "
                             "(the '<mode>.vs-ref' series), the reference's record says keras_source pinned")
    parser.add_argument("--ab-mode", choices=("auto", "duet", "turns"), default="auto",
                        help="how --ab (or --reference) runs the two sides' workers: duet (worker i of A and of B at the same time, "
                             "each on its own half of the CPUs) or turns (A, then B); auto (default): duet on a "
                             "cpu device, turns on a gpu device (a duet would share its one accelerator); "
                             "a machine that cannot give each side a CPU runs turns")
    parser.add_argument("--native", choices=("on", "off"), default=None,
                        help="time each train/predict benchmark against the backend's native code too, "
                             "interleaved in the same worker (the '<mode>.vs-native' series, docs/native.md); "
                             "default: the device's `native` in benchmarks.yaml")
    parser.add_argument("--timeout", type=positive_float, default=None,
                        help="seconds per (model, mode) child (default: harness.timeout)")
    parser.add_argument("--keras-source", default=None, choices=("nightly", "pinned", "git"),
                        help="which Keras was installed: the newest nightly (default), a pinned "
                             "keras-nightly version, or a git ref; only nightly makes points")
    parser.add_argument("--install-log", default=None, help="JSON from scripts/install-backend.sh, kept in the record")
    parser.add_argument("--steps-from", metavar="DIR", action="append", default=[],
                        help="a folder of earlier records (the data branch's checkout; repeatable) whose newest "
                             "record of each series under this protocol gives its stored steps per call "
                             "(workers v13; --out's folder is always read too)")
    parser.add_argument("--no-profile", action="store_true",
                        help="skip the one profiled call per benchmark (results[].profile, docs/profiles.md); "
                             "--ab and a --quick run side by side never profile; --reference profiles this build's side")
    parser.add_argument("--verbose", action="store_true", help="show the children's own output on stderr")


def main(args) -> int:
    # load
    cfg = config.load(args.config)
    device = cfg.device(args.device or os.environ.get("BENCH_DEVICE") or "local-cpu")
    labels = _choose(args.backend, device.backends, "--backend", cfg.backends)
    models = _choose(args.models, tuple(cfg.models), "--models", cfg.models)
    modes = _choose(args.modes, cfg.modes, "--modes", cfg.modes)
    try:
        install_log = environment.read_install_log(args.install_log) if args.install_log else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    protocol = Protocol.from_config(cfg.harness, args.quick)
    timeout = args.timeout or cfg.harness.timeout
    workers = args.workers or (cfg.harness.quick_workers if args.quick else
                               cfg.harness.ab_workers if args.ab or args.reference else cfg.harness.workers)
    if workers < 1:
        raise ConfigError(f"--workers is {workers!r}; expected a positive integer")
    if args.ab and args.reference:
        raise UsageError("--ab and --reference are two kinds of paired run; expected one of them")
    if (args.ab or args.reference) and args.protocol != 2:
        raise ConfigError(f"{'--ab' if args.ab else '--reference'} needs --protocol 2 (the two sides' workers interleave)")
    sides = _sides(args.ab, args.reference)
    for folder in args.steps_from:
        if not os.path.isdir(folder):
            raise UsageError(f"--steps-from {folder!r} is not a folder; expected a folder of run records")
    roots = _roots(args)
    problem = check.resources(device.threads, device.cpus, _available_cpus(), f"devices.{device.label}",
                              device.worker_cpus)
    if problem:  # before any benchmark starts
        raise ConfigError(f"{cfg.path}: {problem}")
    device, duet = _duet(args, device)
    findings = check.findings(check.readings(), device.threads, device.cpus)
    for f in findings:
        if f["status"] == "warn":
            print(f"bench run: check: {f['topic']}: {f['advice']}", file=sys.stderr)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    run = environment.run_info(os.environ, now)
    host = environment.host_info()

    # compute + write, one backend at a time (each record is written as soon as it is complete),
    # holding the machine lock so no other bench run on this host overlaps
    written = []
    eta = Eta(sum(_planned(cfg, label, models, modes, workers, sides, duet) for label in labels))
    together = _together(args, device, workers)
    with lock.held(lock.path(), lambda line: print(line, file=sys.stderr, flush=True)):
        for index, label in enumerate(labels, 1):
            place = (index, len(labels), eta)
            written += _run_backend(args, cfg, device, label, models, modes, protocol, timeout, workers, sides,
                                    install_log, run, host, findings, duet, place, together, roots)
    print("\n" + summary_table(written), file=sys.stderr, end="")
    return 0


def _planned(cfg, label, models, modes, workers, sides, duet) -> int:
    """How many benchmark runs (one worker, one benchmark) a backend's plan holds."""
    module = _backend_module(cfg, cfg.backend(label))
    runnable = sum(module.supports(backend_mode(mode)) for _ in models for mode in modes)
    return runnable * (workers * len(sides) + (1 if duet else 0))  # a duet's calibration worker


def _together(args, device, workers) -> int:
    """How many workers run at the same time: with --quick on a device that pins
    each worker to CPUs of its own (worker_cpus), as many as its CPUs hold; else 1."""
    if not args.quick or args.ab or args.reference or not device.worker_cpus:
        return 1
    cpus = device.cpus or _available_cpus() or ()
    return max(1, min(workers, len(cpus) // device.worker_cpus))


def _profiles(args, together: int) -> bool:
    """Whether this run profiles each benchmark once (bench/measure/profiling.py):
    not with --no-profile, an A/B (both sides are figures), or a --quick run
    whose workers run side by side. A --reference run profiles this build's
    side only: the duet's barrier holds the reference's next timed repeat until
    this side arrives, so the profiled call overlaps no timed repeat of either."""
    return not (getattr(args, "no_profile", False) or args.ab or together > 1)


def _profile_side(args, together: int) -> str | None:
    """The side whose benchmarks are profiled (run_backend's `profile`): this build's."""
    if not _profiles(args, together):
        return None
    return "b" if args.reference else ""


def _sides(ab, ref=None) -> dict[str, str]:
    """{side: python}: {"": this python}, {"a": A, "b": B} for --ab, or
    {"a": the reference, "b": this python} for --reference."""
    if ref:
        pythons = {"--reference REF_PYTHON": ref}
    elif ab:
        pythons = dict(zip(("--ab A_PYTHON", "--ab B_PYTHON"), ab))
    else:
        return {"": sys.executable}
    for flag, python in pythons.items():
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise ConfigError(f"{flag} is {python!r}; expected the python executable of a venv")
    return {"a": ref, "b": sys.executable} if ref else {"a": ab[0], "b": ab[1]}


def _aligned(roots: dict[str, str]) -> bool:
    """Whether both sides' checkouts have the duet's barrier (workers v13): an
    older base bench under --ab-root has none, and its partner would wait for it."""
    return all(os.path.isfile(os.path.join(root, "bench", "measure", "barrier.py")) for root in (roots or {}).values())


def _roots(args) -> dict[str, str]:
    """{side: checkout} from --ab-root (each holding bench/), else {}."""
    if not getattr(args, "ab_root", None):
        return {}
    if not args.ab:
        raise UsageError("--ab-root names the two sides of an --ab run; expected --ab A_PYTHON B_PYTHON too")
    for flag, root in zip(("A_ROOT", "B_ROOT"), args.ab_root):
        if not os.path.isfile(os.path.join(root, "bench", "measure", "worker.py")):
            raise ConfigError(f"--ab-root {flag} is {root!r}; expected a checkout of this project (holding bench/)")
    return {"a": os.path.abspath(args.ab_root[0]), "b": os.path.abspath(args.ab_root[1])}


def _duet(args, device):
    """(device, CPU halves) for a duet A/B run, else (device, None). A side
    gets at most its half's CPUs as threads (said in one line)."""
    flag = "--reference" if args.reference else "--ab"
    if not (args.ab or args.reference) or args.ab_mode == "turns":
        return device, None
    if args.ab_mode == "auto" and device.accelerator != "cpu":
        print(f"bench run: {flag} runs in turns on {device.accelerator} device {device.label}: a duet would share "
              f"its one accelerator (--ab-mode duet to try it)", file=sys.stderr)
        return device, None
    cpus = device.cpus or _available_cpus()
    pair = schedule.halves(cpus)
    if pair is None:
        why = f"this machine offers {len(cpus)}" if cpus else "this platform cannot pin CPUs"
        print(f"bench run: {flag} runs in turns: a duet needs 2 CPUs to pin, {why}", file=sys.stderr)
        return device, None
    if device.threads is not None and device.threads > len(pair[0]):
        print(f"bench run: {flag} duet: devices.{device.label}.threads {device.threads} -> {len(pair[0])}, "
              f"the CPUs of one side ({', '.join(map(str, pair[0]))})", file=sys.stderr)
        device = replace(device, threads=len(pair[0]))
    return device, pair


def _worker_cpus(task, device):
    """A (non-duet) worker's CPUs: its slice with `worker_cpus`, else the device's `cpus`."""
    if device.worker_cpus:
        return schedule.worker_slice(task, device.cpus or _available_cpus(), device.worker_cpus)
    return device.cpus


def _available_cpus():
    return set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def _run_backend(args, cfg, device, label, models, modes, protocol, timeout, workers, sides, install_log,
                 run, host, findings, duet=None, place=(1, 1, None), together=1, roots=None) -> list:
    """One backend's record(s); place: (its index, how many backends, the run's Eta)."""
    backend = cfg.backend(label)
    module = _backend_module(cfg, backend)
    # an A/B compares two builds, not Keras with native code: off unless asked for
    native_on = args.native == "on" if args.native else (device.native and not args.ab)
    specs = [_spec(backend, device, m, mode, cfg, protocol, native.PAIRS if native_on else 0)
             for m in models for mode in modes]
    started = datetime.now(timezone.utc)
    state_start = telemetry.snapshot()
    if args.protocol == 2:
        def spawn(task, todo):
            cpus = schedule.duet_cpus(task, duet) if duet else _worker_cpus(task, device)
            return pool.spawn_worker(task, todo, timeout=timeout, python=sides[task.side], cpus=cpus,
                                     echo=args.verbose, on_event=partial(_tell, label, task, workers, place),
                                     **({"root": roots[task.side]} if roots else {}))

        def progress(side, line):
            print(f"{label}/{device.label} {line}", file=sys.stderr, flush=True)

        done = pool.run_backend(specs, workers, spawn, sides=tuple(sides), supports=module.supports,
                                install_error=runner.install_failed(install_log),
                                unstable_limit=cfg.harness.unstable_spread, progress=progress,
                                duet=duet is not None, together=together, rerun=not args.quick,
                                stored=_stored(args, label, device, specs),
                                profile=_profile_side(args, together), aligned=_aligned(roots),
                                native_side="b" if args.reference else None)
    else:
        jobs = [runner.Job(replace(s, profile=_profiles(args, together)), timeout) for s in specs]
        done = {"": runner.run_jobs(jobs, _progress(label, device.label, len(jobs)),
                                    partial(runner.spawn, echo=args.verbose),
                                    install_error=runner.install_failed(install_log))}
    state_end = telemetry.snapshot()
    finished = record.utc_now()
    if args.reference:  # this build's results carry their ratio to the reference's, pair by pair
        done["b"] = replace(done["b"], results=tuple(reference.attach(
            done["a"].results, done["b"].results, duet=duet is not None,
            refused=reference.mismatch(done["a"].environments, done["b"].environments))))
    out = {}
    for side, part in done.items():  # side a first: its Keras version goes into b's run.ab
        extra = {"protocol": dict(schedule.PROTOCOL) if args.protocol == 2 else {"name": "single-process", "version": 1}}
        if native_on:  # how the vs-native series was measured: a new one starts a new baseline for them
            extra["protocol"]["native"] = {"version": native.VERSION, "pairs": native.PAIRS}
        if side:
            extra.update(id=f"{run['id']}-{side}", ab={"id": run["id"], "side": side, "python": sides[side],
                                                       "mode": "duet" if duet else "turns",
                                                       **({"cpus": [list(h) for h in duet]} if duet else {})})
        if args.reference:
            extra["ab"].update(reference=True, **(
                {"reference_keras_version": out["a"].keras_version} if side == "b" and out["a"].keras_version else {}))
        reference_side = args.reference and side == "a"  # --install-log is the nightly's, not its
        rec = _record(args, backend, device, label, module, part, {**run, **extra}, started, finished,
                      None if reference_side else install_log, host, state_start, state_end, findings,
                      "pinned" if reference_side else args.keras_source, _settings(device, cfg.harness))
        path = record.write(rec, args.out)
        print(path, flush=True)
        out[side] = rec
    return list(out.values())


def _stored(args, label, device, specs) -> dict:
    """Each throughput series' stored steps per call (bench/measure/steps.py): from
    --steps-from's folders and --out's, the newest record under this protocol."""
    wanted = {(s.model, s.mode): (s.batch_size, s.min_repeat_seconds) for s in specs if s.mode != "latency"}
    return stored_steps.load(args.steps_from, backend=label, device=device.label, protocol=schedule.PROTOCOL,
                             wanted=wanted, flat=[args.out]) if wanted else {}


def _tell(label, task, workers, place, event: dict) -> None:
    """One progress line per benchmark a worker starts: where the run is, and the time left."""
    index, backends, eta = place
    if eta is None:
        return
    if "done" in event:
        eta.finished()
        return
    if "start" not in event:
        return
    eta.started(extra=task.rerun)
    side = f"{task.side} " if task.side else ""
    which = ("calibration worker" if task.calibration else
             f"worker {task.worker + 1} (rerun)" if task.rerun else f"worker {task.worker + 1}/{workers}")
    model, mode = event["start"]
    print(eta_line(label, index, backends, side + which, model, mode, eta), file=sys.stderr, flush=True)


def _record(args, backend, device, label, module, done, run, started, finished, install_log, host,
            state_start, state_end, findings, keras_source, settings):
    return record.RunRecord.from_dict({
        "schema_version": record.SCHEMA_VERSION,
        "run": {**run, "started_at": record.format_time(started), "finished_at": finished},
        "target": {"backend": label, "keras_backend": backend.keras_backend, "device": device.label},
        "environment": {**environment.capture(
            versions=module.versions(), children=list(done.environments), accelerator=device.accelerator,
            keras_source=keras_source, install_log=install_log, device_env=settings,
            environ=os.environ, host=host),
            **machine.environment_block(state_start, state_end, list(done.environments), os.environ),
            # protocol 2: the device's thread/CPU settings and bench check's findings
            "threads": device.threads, "cpus": list(device.cpus) if device.cpus else None,
            **({"worker_cpus": device.worker_cpus} if device.worker_cpus else {}), "check": findings},
        "results": list(done.results),
    }, source=f"{label}/{device.label} record")


def _choose(given, default, flag: str, known) -> tuple[str, ...]:
    """Comma- and/or space-separated names, each one known, in the given order."""
    if not given:
        return tuple(default)
    names = tuple(split_names(given))
    for n in names:
        if n not in known:
            raise ConfigError(f"{flag} names {n!r}; expected one of: {', '.join(known)}")
    return names


def _backend_module(cfg, backend):
    try:
        return backends.get(backend.keras_backend)
    except ValueError as e:
        raise ConfigError(f"{cfg.path}: key 'backends.{backend.label}.keras_backend': {e}") from None


def _spec(backend, device, model: str, mode: str, cfg, protocol: Protocol, native_pairs: int = 0) -> Spec:
    return Spec(backend=backend.label, keras_backend=backend.keras_backend, model=model, mode=mode,
                batch_size=1 if mode == "latency" else cfg.models[model].batch_size, repeats=protocol.repeats,
                min_repeat_seconds=protocol.min_repeat_seconds, warmup_steps=protocol.warmup_steps,
                result_path="", env=benchmark_env(device, cfg.harness),
                latency_calls=cfg.latency.calls, latency_warmup=cfg.latency.warmup_calls,
                canary_tolerance=protocol.canary_tolerance, spread_goal=protocol.spread_goal,
                native=native_pairs)


def benchmark_env(device, harness) -> dict:
    """What every benchmark process of this device runs with: the harness's malloc
    settings, the device's env (which wins), and its `threads` for the backend's
    prepare() (bench/measure/backends)."""
    env = _settings(device, harness)
    if device.threads is not None:
        env[backends.THREADS_VAR] = str(device.threads)
    return env


def _settings(device, harness) -> dict:
    """The environment variables a record lists as its settings (environment.settings)."""
    return {**harness.worker_env(), **device.env}


def _progress(backend: str, device: str, total: int):
    count = [0]

    def report(job, result):
        count[0] += 1
        print(progress_line(backend, device, count[0], total, result), file=sys.stderr, flush=True)

    return report
