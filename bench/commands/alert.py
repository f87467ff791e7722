"""Open, update and close one GitHub issue per Regressed series.

  python -m bench alert --data DIR [--repo OWNER/NAME] [--dry-run] [--link URL] [--author LOGIN] [--confirm]

Pipeline: load (thresholds, DIR/summary or every record under DIR/runs, the open issues
that --author (the bot) opened with a hidden series marker, through `gh
api`; bench/ci/issues.py says why not by label) -> compute (the status table;
per series: open an issue when it turns Regressed, comment when the change
moves by at least trends.min_change, close when it is back at its old level
or Faster past it; bench/ci/alert.py) -> write (each action through `gh`,
one line each on stdout; --dry-run prints them and changes nothing). An
issue has a stable title and a hidden marker, so a series never gets a
second one. Before opening, the labels (bench-regression, backend:B,
device:D) are created when missing; when the token may not, one line says
so and what to do (docs/security.md), and the issue opens without them.
With --confirm, each new issue also dispatches confirm.yml, a same-machine
A/B of the change window's last good against its first bad nightly, whose
answer comes back to the issue (bench/ci/confirm_alert.py, docs/ab.md).
--repo defaults to $GITHUB_REPOSITORY.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from statistics import median

from bench import config
from bench.records import triage


def add_arguments(parser):
    parser.add_argument("--data", required=True, metavar="DIR", help="a data-branch checkout (holding runs/)")
    parser.add_argument("--repo", metavar="OWNER/NAME", help="where the issues live (default: $GITHUB_REPOSITORY)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    parser.add_argument("--link", metavar="URL", help="the dashboard's URL, shown in a new issue")
    parser.add_argument("--confirm", action="store_true",
                        help="dispatch confirm.yml (a same-machine A/B of the last good against the first bad "
                             "nightly) for each new alert issue; the job needs actions: write")
    parser.add_argument("--author", metavar="LOGIN", default=None,
                        help="who opens the alert issues (default github-actions[bot], the workflow token's); "
                             "only that login's issues with a series marker count as open alerts")


def main(args) -> int:
    from bench.ci import alert, confirm_alert, issues
    from bench.ci.github import repo_name
    from bench.commands.source import TABLE, load_series
    from bench.analyse.profile import records_lookup
    from bench.present.table import alerting, build_rows

    repo = repo_name(args.repo or os.environ.get("GITHUB_REPOSITORY", ""), "--repo (or $GITHUB_REPOSITORY)")
    cfg = config.load(args.config)
    series = load_series(args.data, TABLE, verb="alert", warn=sys.stderr).series  # the summary when fresh
    rows = build_rows(series, cfg.trends, triage.load(args.data, warn=sys.stderr), records_lookup(args.data))
    recent = {"/".join(k): median(s.values()[-cfg.trends.confirm:]) for k, s in series.items() if s.points}
    try:
        open_issues = issues.list_open(repo, args.author or issues.BOT)
    except issues.AlertError as e:
        if not args.dry_run:
            raise
        # A dry run still says what it would do, as if no alert issue were open.
        print(f"bench alert: cannot list the open issues ({e}); dry run as if none were open", file=sys.stderr)
        open_issues = []
    links = {"/".join(r.key): args.link for r in rows} if args.link else {}
    # Where a device runs a reference build, its ratio series alerts, not samples/s.
    actions = alert.plan(alerting(rows), open_issues, cfg.trends.min_change, recent, links)
    confirm = {"/".join(r.key): confirm_alert.confirm_inputs(r, series[r.key]) for r in alerting(rows)
               if r.key in series}
    if not args.dry_run:
        actions = _with_labels(repo, actions, issues)
    failed = 0
    for a in actions:
        if args.dry_run:
            print(f"would {a.summary()}")
            continue
        try:
            shown, number = issues.apply(repo, a)
            print(f"{a.summary()} -> {shown}")
            if a.kind == "open" and number is not None and args.confirm:
                _dispatch_confirm(repo, confirm.get(a.series), number)
        except issues.AlertError as e:  # one failed call loses no other series' alert
            failed += 1
            print(f"bench alert: error: {a.summary()}: {e}", file=sys.stderr)
    print(f"bench alert: {len(actions)} action(s){' (dry run)' if args.dry_run else ''}, "
          f"{len(open_issues)} open alert issue(s) before", file=sys.stderr)
    return 1 if failed else 0


def _dispatch_confirm(repo: str, inputs: dict | None, issue: int) -> None:
    """A new alert asks confirm.yml for a same-machine A/B of the last good
    against the first bad nightly (docs/ab.md); its answer comes back to the
    issue. No versions to compare (unknown, or the same): one line, no run."""
    from bench.ci.github import GitHubError, workflow_run

    if inputs is None:
        print(f"bench alert: #{issue}: no two nightly versions to confirm between; no confirm run",
              file=sys.stderr)
        return
    try:
        workflow_run("confirm.yml", repo, {**inputs, "issue": str(issue)})
        print(f"confirm #{issue}: {inputs['series']} {inputs['good']}..{inputs['bad']} dispatched")
    except GitHubError as e:
        print(f"bench alert: #{issue}: could not dispatch confirm.yml ({e}); run it by hand: "
              f"gh workflow run confirm.yml -f series={inputs['series']} -f good={inputs['good']} "
              f"-f bad={inputs['bad']} -f issue={issue}", file=sys.stderr)


def _with_labels(repo, actions, issues):
    """The actions, each new issue keeping only the labels that exist (made
    here when missing); one line per label the token could not make."""
    wanted = {lb for a in actions if a.kind == "open" for lb in a.labels}
    if not wanted:
        return actions
    have, failed = issues.ensure_labels(repo, wanted)
    for name, why in sorted(failed.items()):
        print(f"bench alert: cannot create label {name!r} ({why}); the issue opens without it and is still "
              "found by its hidden marker, so none is opened twice. To label alerts, create it under "
              "Issues > Labels, or see docs/security.md", file=sys.stderr)
    return [dataclasses.replace(a, labels=tuple(lb for lb in a.labels if lb in have)) if a.kind == "open" else a
            for a in actions]
