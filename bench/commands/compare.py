"""Compare head run records with a baseline: faster, slower or unchanged, per benchmark.

--base is either a data folder (a checkout of the data branch, holding
runs/): the baseline of each series is then its last N nights; or run record
files (or a folder of them without runs/), e.g. a run of the merge-base on
the same runner: then all their repeat samples. When --base and --head
are the two records of one same-machine A/B run (`bench run --ab`, run.ab),
each benchmark is compared pair by pair: worker i of one side against worker
i of the other; records that are no A/B pair get the unpaired test. --head records may be of any
event and Keras source (a pull request, a git ref); they are compared, never
charted. The markdown's first line is a hidden marker for a sticky comment;
it works as a $GITHUB_STEP_SUMMARY too.

A change is called when the medians differ by at least compare.min_change
(benchmarks.yaml) and p < compare.alpha, in a Mann–Whitney U test of the
head's repeats against the baseline's values and, with 3 or more nights or
base runs, a t test of the head as one more of them. Deep dips of a shared
machine (a night or repeat >10 % below its group's median) are left out.
Every rule is listed below and in the output's footer; per benchmark the
output gives the smallest slowdown it could have called ("sees") and warns
when that is more than compare.min_change (too few repeats to see it).
Latency p99 and peak memory (one value per run, smaller is better) are
compared too, as rows of their own.

When the --head records hold both sides of one same-machine A/B run (a
pr-bench job runs the default branch's bench as side a beside the pull
request's as side b), side b is compared with side a pair by pair and --base
is not read: past nights are only the fallback. Then, against a data folder,
only the nights measured like the head count: the same protocol, and duet
(beside a reference build) or solo alike (bench.compare.baseline.setting).

Exit status: 0 whatever the verdicts; with --fail-on slower, 1 when any
benchmark is slower; 2 on bad input.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from bench import config
from bench.commands.arguments import positive_int
from bench.errors import UsageError
from bench.commands.source import baseline_records
from bench.compare.baseline import (baseline_from_history, baseline_from_records, load_baseline, run_setting,
                                    setting)
from bench.compare.files import read_records
from bench.compare.head import head_from_records
from bench.records.extensions import ab_side, reference_side
from bench.compare.jsonout import render_json
from bench.compare.markdown import render_markdown
from bench.compare.outcome import build_outcome
from bench.compare.verdicts import rules


def add_arguments(parser):
    parser.add_argument("--base", nargs="+", required=True, metavar="DIR|RECORD",
                        help="a data folder holding runs/, or base run record files/folders")
    parser.add_argument("--head", nargs="+", required=True, metavar="RECORD",
                        help="head run record files (or folders of them)")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("--nights", type=positive_int, default=None,
                        help="nights of history in the baseline (default: compare.nights in benchmarks.yaml)")
    parser.add_argument("--fail-on", choices=("slower",), default=None,
                        help="exit 1 when any benchmark is slower (for a required check)")
    parser.add_argument("--out", default=None, help="write here instead of stdout")
    parser.epilog = "rules, in the order they are checked:\n" + "\n".join(
        textwrap.fill(rule, 78, initial_indent=f"{i:2d}. ", subsequent_indent="    ")
        for i, rule in enumerate(rules(), 1))


def _from_summary(base: list[str], nights: int, like):
    """The baseline of one data folder read through its summary: only the records
    the last `nights` nights (measured `like`) came from (commands/source.py); None otherwise."""
    if len(base) != 1 or not (Path(base[0]) / "runs").is_dir():
        return None
    keep = None if like is None else (lambda run: run_setting(run) == like)
    records = baseline_records(base[0], nights, keep=keep)
    if records is None:
        return None
    how = f" measured as {like[0]}, {like[1]}" if like else ""
    return baseline_from_history(records, nights, f"last {nights} nights of {Path(base[0])}{how}", like)


def main(args) -> int:
    settings = config.load(args.config).compare
    nights = args.nights if args.nights is not None else settings.nights
    records = read_records(args.head, "--head")
    if not records:
        raise FileNotFoundError(f"--head {' '.join(map(str, args.head))}: no run records found; "
                                "expected the JSON files written by `bench run`")
    sides = ab_sides(records)
    if sides is not None:  # both sides of one A/B: b against a, pair by pair
        runs = sorted({r.data["run"]["ab"]["id"] for r in sides[0]})
        baseline = baseline_from_records(sides[0], f"side a of the same-machine A/B run{'s' * (len(runs) > 1)} "
                                                   f"{', '.join(runs)}")
        head = head_from_records(sides[1])
    else:
        like = _one_setting(records)
        try:
            baseline = _from_summary(args.base, nights, like) or load_baseline(args.base, nights, like=like)
        except ValueError as e:  # a data folder mixed with records: a usage error
            raise UsageError(str(e)) from None
        head = head_from_records(records)

    outcome = build_outcome(baseline, head, settings)

    text = render_json(outcome) if args.format == "json" else render_markdown(outcome)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"bench compare: {outcome.headline()}", file=sys.stderr)
    slower = outcome.counts().get("slower", 0)
    return 1 if args.fail_on == "slower" and slower else 0


def ab_sides(records) -> tuple[list, list] | None:
    """(side a's records, side b's) when every record is one side of a
    `bench run --ab` and each run has both sides (pr-bench: one run per
    backend), else None. A reference run is no such pair: its side b is the
    nightly, judged by its ratio series."""
    found: dict[str, dict[str, list]] = {}
    for rec in records:
        side = ab_side(rec.data)
        if side is None or reference_side(rec.data) is not None:
            return None
        found.setdefault(side[0], {}).setdefault(side[1], []).append(rec)
    if not found or any(set(run) != {"a", "b"} for run in found.values()):
        return None
    return ([r for run in found.values() for r in run["a"]], [r for run in found.values() for r in run["b"]])


def _one_setting(records):
    """The head's setting when all its records share one (else None: no filter)."""
    found = {setting(r) for r in records}
    return found.pop() if len(found) == 1 else None
