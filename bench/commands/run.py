"""Run the benchmarks of one device: one record per backend, one child process per (model, mode).

Writes DIR/<backend>--<device>--<run id>-<attempt>.json (validated against
run.schema.json) and prints each written path on stdout; progress and a
summary table go to stderr. Exits 0 even when benchmarks failed (the failures
are in the record); 2 on usage or configuration errors.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from functools import partial

from bench.measure import backends, environment, machine, runner, telemetry

from bench import config

from bench.records import record
from bench.measure.child import Spec
from bench.cli import positive_float, split_names
from bench.errors import UsageError
from bench.config import ConfigError
from bench.measure.harness import Protocol
from bench.measure.summary import progress_line, summary_table


def add_arguments(parser):
    parser.add_argument("--backend", action="append", default=None,
                        help="backend label (repeatable or comma-separated; default: every backend of the device)")
    parser.add_argument("--device", default=None,
                        help="device label from benchmarks.yaml (default: $BENCH_DEVICE or local-cpu)")
    parser.add_argument("--models", nargs="+", default=None, help="models, comma- or space-separated (default: all)")
    parser.add_argument("--modes", nargs="+", default=None, help="modes, comma- or space-separated (default: all)")
    parser.add_argument("--out", default=".", help="folder for the record files (default: .)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats (harness.quick_*)")
    parser.add_argument("--timeout", type=positive_float, default=None,
                        help="seconds per (model, mode) child (default: harness.timeout)")
    parser.add_argument("--keras-source", default=None, choices=("nightly", "pinned", "git"),
                        help="which Keras was installed: the newest nightly (default), a pinned "
                             "keras-nightly version, or a git ref; only nightly makes points")
    parser.add_argument("--install-log", default=None, help="JSON from scripts/install-backend.sh, kept in the record")
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
    now = datetime.now(timezone.utc).replace(microsecond=0)
    run = environment.run_info(os.environ, now)
    host = environment.host_info()

    # compute + write, one backend at a time (each record is written as soon as it is complete)
    written = []
    for label in labels:
        backend = cfg.backend(label)
        module = _backend_module(cfg, backend)
        jobs = [runner.Job(_spec(backend, device, m, mode, cfg, protocol), timeout)
                for m in models for mode in modes]
        started = datetime.now(timezone.utc)
        state_start = telemetry.snapshot()
        done = runner.run_jobs(jobs, _progress(label, device.label, len(jobs)),
                               partial(runner.spawn, echo=args.verbose),
                               install_error=runner.install_failed(install_log))
        state_end = telemetry.snapshot()
        rec = record.RunRecord.from_dict({
            "schema_version": record.SCHEMA_VERSION,
            "run": {**run, "started_at": record.format_time(started), "finished_at": record.utc_now()},
            "target": {"backend": label, "keras_backend": backend.keras_backend, "device": device.label},
            "environment": {**environment.capture(
                versions=module.versions(), children=list(done.environments), accelerator=device.accelerator,
                keras_source=args.keras_source, install_log=install_log, device_env=device.env,
                environ=os.environ, host=host),
                **machine.environment_block(state_start, state_end, list(done.environments), os.environ)},
            "results": list(done.results),
        }, source=f"{label}/{device.label} record")
        path = record.write(rec, args.out)
        print(path, flush=True)
        written.append(rec)
    print("\n" + summary_table(written), file=sys.stderr, end="")
    return 0


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


def _spec(backend, device, model: str, mode: str, cfg, protocol: Protocol) -> Spec:
    return Spec(backend=backend.label, keras_backend=backend.keras_backend, model=model, mode=mode,
                batch_size=1 if mode == "latency" else cfg.models[model].batch_size, repeats=protocol.repeats,
                min_repeat_seconds=protocol.min_repeat_seconds, warmup_steps=protocol.warmup_steps,
                result_path="", env=dict(device.env),
                latency_calls=cfg.latency.calls, latency_warmup=cfg.latency.warmup_calls)


def _progress(backend: str, device: str, total: int):
    count = [0]

    def report(job, result):
        count[0] += 1
        print(progress_line(backend, device, count[0], total, result), file=sys.stderr, flush=True)

    return report
