"""Pre-flight check of this machine for benchmarking (like `pyperf system check`).

Reports the CPU governor, frequency scaling, load, CPU pressure and steal,
swap, other processes on the GPU and the thread settings, each with what to
change. `bench run` runs the same check and records it in the environment
(`check`). Exits 0 (1 with --strict when any finding warns).
"""

from __future__ import annotations

import json
import os
import sys

from bench import config
from bench.measure import check


def add_arguments(parser):
    parser.add_argument("--device", default=None,
                        help="device label from benchmarks.yaml whose threads/cpus to check "
                             "(default: $BENCH_DEVICE or local-cpu)")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any finding warns")


def main(args) -> int:
    # load
    cfg = config.load(args.config)
    device = cfg.device(args.device or os.environ.get("BENCH_DEVICE") or "local-cpu")
    # compute
    items = check.findings(check.readings(), device.threads, device.cpus)
    # write
    sys.stdout.write(json.dumps(items, sort_keys=True, indent=1) + "\n" if args.json else check.render(items))
    return 1 if args.strict and any(i["status"] == "warn" for i in items) else 0
