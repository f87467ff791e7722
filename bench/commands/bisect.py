"""Bisect a slowdown to the first Keras commit beyond the noise.

  python -m bench bisect --series BACKEND/DEVICE/MODEL/MODE --good KERAS --bad KERAS
                         [--keras-repo PATH_OR_URL] [--data DIR] [--work DIR]
                         [--state FILE] [--out FILE]

KERAS is a nightly version the series has in --data (its record's
environment.keras_commit, else the default branch's commit at the wheel's
build time) or a commit SHA. Pipeline: load (the two commits, the commits
between them from the Keras repository, the saved state of this bisect if
any) -> compute (a same-machine A/B of each probed commit against good,
`bench run --ab`, judged by bench compare's paired rule; binary search,
bad first: 64 commits take 7 probes) -> write (the result on stdout and as a
JSON record, --out; the state after every probe, --state, so rerunning the
same command after an interruption resumes). When bad is not slower beyond
the noise it says so and names no culprit. With --data, when the change
between --good and --bad is a device's (bench.analyse.triangulate: every
backend on that device moved, the other devices held) it says so and
searches nothing: no Keras commit caused it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from bench import config
from bench.errors import UsageError
from bench.records import atomic

DEFAULT_REPO = "https://github.com/keras-team/keras"
_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
MAX_LISTED = 30  # nightlies named when --good/--bad is not one of them


def add_arguments(parser):
    parser.add_argument("--series", required=True, metavar="BACKEND/DEVICE/MODEL/MODE")
    parser.add_argument("--good", required=True, metavar="KERAS", help="a nightly version in --data, or a commit")
    parser.add_argument("--bad", required=True, metavar="KERAS", help="a nightly version in --data, or a commit")
    parser.add_argument("--keras-repo", default=DEFAULT_REPO, metavar="PATH_OR_URL",
                        help=f"the Keras git repository (default: {DEFAULT_REPO})")
    parser.add_argument("--data", metavar="DIR", help="the data branch checkout, to look up nightly versions")
    parser.add_argument("--work", default=".bench-bisect", metavar="DIR",
                        help="venvs, A/B records, clone cache and the default state (default: .bench-bisect)")
    parser.add_argument("--state", metavar="FILE", help="the resume state (default: under --work)")
    parser.add_argument("--out", metavar="FILE", help="write the result record here (default: under --work)")


def main(args) -> int:
    from bench.compare.bisect_probe import RealProbe

    cfg = config.load(args.config)

    def make_probe(key, good_sha):
        return RealProbe(repo=args.keras_repo, good=good_sha, series=key, work=Path(args.work),
                         settings=cfg.compare, config=args.config)

    return run_bisect(args, make_probe)


def run_bisect(args, make_probe) -> int:
    """The verb with an injectable probe factory: make_probe(series key, good sha) -> probe."""
    from bench.analyse.series import parse_key
    from bench.compare import bisect as b
    from bench.compare import keras_git

    try:
        key = parse_key(args.series)
    except ValueError as e:  # BisectError and the rest reach the CLI's one handler
        raise UsageError(f"--series: {e}") from None
    work = Path(args.work)
    series = _series(args.data) if args.data else None
    nightlies = _nightlies(series, key, args.data) if series is not None else None
    origin = _origin(args, key, nightlies, series)
    if origin is not None and not origin.bisect_keras():
        # A device's change (bench.analyse.triangulate): no Keras commit caused it.
        print(f"{args.series}: {origin.text()}: the device changed, not Keras; no Keras commits to search")
        return 0
    if origin is not None:
        print(f"bench bisect: whose change: {origin.text()}", file=sys.stderr)
    repo = keras_git.open_repo(args.keras_repo, work / "clones")
    good = _commit(repo, "--good", args.good, nightlies, args)
    bad = _commit(repo, "--bad", args.bad, nightlies, args)
    commits = keras_git.commits_between(repo, good, bad)
    name = f"{'-'.join(key)}-{good[:12]}-{bad[:12]}"
    state_path = Path(args.state) if args.state else work / f"state-{name}.json"
    state = b.load_state(state_path, args.series, good, bad, commits)
    resumed = len(state.order)
    if resumed:
        print(f"bench bisect: resuming {state_path}: {resumed} probe(s) already measured", file=sys.stderr)
    print(f"bench bisect: {len(commits)} commits after {good[:12]} up to {bad[:12]}", file=sys.stderr)
    result = b.bisect(state, _echo(make_probe(key, good)), save=lambda s: s.save(state_path))
    out = Path(args.out) if args.out else work / f"bisect-{name}.json"
    atomic.write_text(out, result.to_json())
    print(result.message())
    print(f"bench bisect: wrote {out}", file=sys.stderr)
    return 0


def _echo(probe):
    def run(commit):
        p = probe(commit)
        print(f"bench bisect: probe {commit[:12]}: {p.verdict} ({p.delta * 100:+.1f}%, p={p.p_value:.2g})",
              file=sys.stderr)
        return p
    return run


def _series(data: str) -> dict:
    """Every series of `data`, read once for the versions and for whose change it is."""
    from bench.commands.source import load_series

    # The summary when fresh: scripts/checkout-data.sh checks out only the newest months' records.
    return load_series(data, verb="bisect", warn=sys.stderr).series


def _nightlies(series: dict, key, data: str) -> dict:
    """{keras version: its first point} of the series `key`, oldest first."""
    from bench.analyse.series import is_headline
    from bench.compare.bisect import BisectError

    headline = [k for k in series if is_headline(k[3])]
    if key not in headline:
        known = ", ".join("/".join(k) for k in headline[:MAX_LISTED]) or "no series"
        raise BisectError(f"--series {'/'.join(key)} is not in {data}; it has: {known}")
    out: dict = {}
    for p in series[key].points:
        if p.keras_version:
            out.setdefault(p.keras_version, p)
    return out


def _origin(args, key, nightlies, series):
    """Whose change the series' change is, when --good and --bad are nightlies
    of --data that bracket its first night; else None (nothing to narrow)."""
    from bench.analyse.trends import assess
    from bench.analyse.triangulate import triangulate

    if not nightlies or args.good not in nightlies or args.bad not in nightlies:
        return None
    newest = max(s.last_seen for s in series.values())
    trends = config.load(args.config).trends
    origin = triangulate(series, {k: assess(s, newest, trends) for k, s in series.items()}).get(key)
    if origin is None or not nightlies[args.good].day < origin.night <= nightlies[args.bad].day:
        return None
    return origin


def _commit(repo, flag: str, value: str, nightlies, args) -> str:
    from bench.analyse.window import Nightly, build_time
    from bench.compare import keras_git
    from bench.compare.bisect import BisectError

    if nightlies is not None and value in nightlies:
        p = nightlies[value]
        if p.keras_commit:
            return keras_git.resolve(repo, p.keras_commit)
        return keras_git.commit_at(repo, build_time(Nightly.of(p)))
    if _SHA.match(value):
        return keras_git.resolve(repo, value)
    if nightlies is None:
        raise BisectError(f"{flag} {value!r} is not a commit; expected a commit SHA, or a nightly version "
                          "with --data DIR to look it up")
    listed = [f"{v} ({p.day})" for v, p in nightlies.items()]
    more = f" and {len(listed) - MAX_LISTED} more" if len(listed) > MAX_LISTED else ""
    raise BisectError(f"{flag} {value!r} is not a nightly of {args.series} in {args.data}; it has: "
                      f"{', '.join(listed[-MAX_LISTED:]) or 'none'}{more}")
