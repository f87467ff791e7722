"""Confirm a nightly change by a same-machine A/B before anyone acts on it.

  python -m bench confirm --series BACKEND/DEVICE/MODEL/MODE --good VERSION --bad VERSION
                          [--work DIR] [--out FILE] [--budget-minutes 20]
                          [--first 8] [--step 8] [--max-pairs 64]

GOOD is the last good keras-nightly version of the series, BAD the first bad
one (the alert names both). Pipeline: load (benchmarks.yaml's compare
settings; each version installed in a venv of its own by
scripts/install-backend.sh, BENCH_KERAS_VERSION, the backend from the job's
BENCH_INSTALL) -> compute (batches of `bench run --ab GOOD BAD --workers K`
for the one benchmark, added until the sequential rule of
bench/compare/confirm.py says DIFFERENT or SAME, or the budget runs out:
UNKNOWN) -> write (one line on stdout; the result record, format 1, at
--out, default WORK/confirm.json). A series "<mode>.<figure>" (vs-ref, p99,
...) is confirmed on its mode's own figure. docs/ab.md states the rules.

Exit status 0 whatever the answer (the record says it); 2 on bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench import config
from bench.commands.arguments import positive_int
from bench.errors import UsageError

VERSION_HELP = "a keras-nightly version, e.g. 3.16.0.dev2026102704"


def add_arguments(parser):
    from bench.compare.confirm import Plan

    confirm_plan = Plan()  # the defaults: bench/compare/confirm.py says why
    parser.add_argument("--series", required=True, metavar="BACKEND/DEVICE/MODEL/MODE")
    parser.add_argument("--good", required=True, metavar="VERSION", help=f"the last good nightly: {VERSION_HELP}")
    parser.add_argument("--bad", required=True, metavar="VERSION", help=f"the first bad nightly: {VERSION_HELP}")
    parser.add_argument("--work", default=".bench-confirm", metavar="DIR",
                        help="venvs and A/B records (default: .bench-confirm)")
    parser.add_argument("--out", metavar="FILE", help="the result record (default: WORK/confirm.json)")
    parser.add_argument("--budget-minutes", type=float, default=20.0,
                        help="stop adding pairs when the next batch would pass this (default: 20)")
    parser.add_argument("--first", type=positive_int, default=confirm_plan.first,
                        help=f"pairs before the first look (default: {confirm_plan.first})")
    parser.add_argument("--step", type=positive_int, default=confirm_plan.step,
                        help=f"pairs added per look (default: {confirm_plan.step})")
    parser.add_argument("--max-pairs", type=positive_int, default=confirm_plan.max_pairs,
                        help=f"the most pairs (default: {confirm_plan.max_pairs})")


def main(args) -> int:
    from bench.compare.bisect_probe import ABPairs, install_venv

    cfg = config.load(args.config)

    def make_source(key, good, bad):
        work = Path(args.work)
        good_py = install_venv(work, f"nightly-{good}", version=good)
        bad_py = install_venv(work, f"nightly-{bad}", version=bad)
        return ABPairs(good_py, bad_py, key, work / "runs", args.config)

    return run_confirm(args, cfg.compare, make_source)


def run_confirm(args, settings, make_source) -> int:
    """The verb with an injectable pair source: make_source(series key with
    the benchmark's own mode, good, bad) -> a source with .better after a call."""
    from dataclasses import replace

    from bench.analyse.series import parse_key
    from bench.compare import confirm
    from bench.config import VERSION
    from bench.records import atomic

    try:
        key = parse_key(args.series)
        for flag, v in (("--good", args.good), ("--bad", args.bad)):
            if not VERSION.fullmatch(v):
                raise ValueError(f"{flag} is {v!r}; expected {VERSION_HELP}")
        if not args.budget_minutes > 0:
            raise ValueError(f"--budget-minutes is {args.budget_minutes!r}; expected minutes > 0")
        plan = confirm.plan_of(settings, first=args.first, step=args.step, max_pairs=args.max_pairs,
                               budget_s=args.budget_minutes * 60.0)
    except ValueError as e:  # ConfirmError too: one line, exit 2
        raise UsageError(str(e)) from None
    bench_key = (key[0], key[1], key[2], key[3].split(".")[0])
    source = make_source(bench_key, args.good, args.bad)
    print(f"bench confirm: {args.series}: {args.bad} against {args.good}, up to {plan.max_pairs} pairs "
          f"in {args.budget_minutes:g} min", file=sys.stderr)

    def echo(k):
        got = source(k)
        print(f"bench confirm: +{len(got)} pair(s)", file=sys.stderr)
        return got

    outcome = confirm.run(echo, plan, "bigger")
    outcome = replace(outcome, better=getattr(source, "better", None) or "bigger")
    out = Path(args.out) if args.out else Path(args.work) / "confirm.json"
    atomic.write_text(out, confirm.result_json(outcome, args.series, args.good, args.bad))
    print(f"{args.series}: {args.bad} against {args.good}: {outcome.describe()}")
    print(f"bench confirm: wrote {out}", file=sys.stderr)
    return 0
