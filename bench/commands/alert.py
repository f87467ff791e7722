"""Open, update and close one GitHub issue per Regressed series.

  python -m bench alert --data DIR [--repo OWNER/NAME] [--dry-run] [--link URL]

Pipeline: load (thresholds, DIR/summary or every record under DIR/runs, the open issues
labelled bench-regression through `gh api`) -> compute (the status table;
per series: open an issue when it turns Regressed, comment when the change
moves by at least trends.min_change, close when it is back at its old level
or Faster past it; bench/ci/alert.py) -> write (each action through `gh`,
one line each on stdout; --dry-run prints them and changes nothing). An
issue has a stable title and a hidden marker, so a series never gets a
second one. --repo defaults to $GITHUB_REPOSITORY.
"""

from __future__ import annotations

import os
import sys
from statistics import median

from bench import config
from bench.errors import UsageError


def add_arguments(parser):
    parser.add_argument("--data", required=True, metavar="DIR", help="a data-branch checkout (holding runs/)")
    parser.add_argument("--repo", metavar="OWNER/NAME", help="where the issues live (default: $GITHUB_REPOSITORY)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    parser.add_argument("--link", metavar="URL", help="the dashboard's URL, shown in a new issue")


def main(args) -> int:
    from bench.ci import alert, issues
    from bench.commands.source import TABLE, load_series
    from bench.present.table import build_rows

    repo = args.repo or os.environ.get("GITHUB_REPOSITORY", "")
    if "/" not in repo.strip("/"):
        raise UsageError(f"--repo {repo!r}; expected OWNER/NAME (or $GITHUB_REPOSITORY)")
    cfg = config.load(args.config)
    series = load_series(args.data, TABLE, verb="alert", warn=sys.stderr).series  # the summary when fresh
    rows = build_rows(series, cfg.trends)
    recent = {"/".join(k): median(s.values()[-cfg.trends.confirm:]) for k, s in series.items() if s.points}
    try:
        open_issues = issues.list_open(repo)
    except issues.AlertError as e:
        if not args.dry_run:
            raise
        # A dry run still says what it would do, as if no alert issue were open.
        print(f"bench alert: cannot list the open issues ({e}); dry run as if none were open", file=sys.stderr)
        open_issues = []
    links = {"/".join(r.key): args.link for r in rows} if args.link else {}
    actions = alert.plan(rows, open_issues, cfg.trends.min_change, recent, links)
    failed = 0
    for a in actions:
        if args.dry_run:
            print(f"would {a.summary()}")
            continue
        try:
            print(f"{a.summary()} -> {issues.apply(repo, a)}")
        except issues.AlertError as e:  # one failed call loses no other series' alert
            failed += 1
            print(f"bench alert: error: {a.summary()}: {e}", file=sys.stderr)
    print(f"bench alert: {len(actions)} action(s){' (dry run)' if args.dry_run else ''}, "
          f"{len(open_issues)} open alert issue(s) before", file=sys.stderr)
    return 1 if failed else 0
