"""Read the maintainers' triage marks back from the alert issues.

  python -m bench triage --data DIR [--repo OWNER/NAME] [--author LOGIN]

Pipeline: load (every issue the bot opened with a series marker, open or
closed, and its `acknowledged` / `invalid` / `fixed` label, through `gh api`)
-> compute (one mark per labelled issue: series, the change's night, the
link a maintainer gave) -> write (DIR/triage.json, sorted keys, format 1;
bench/records/triage.py), which `bench report`, `site`, `show` and `alert`
read. When GitHub cannot be read, one line says so and the file is left as
it was. docs/triage.md says what each mark does.
"""

from __future__ import annotations

import os
import sys



def add_arguments(parser):
    parser.add_argument("--data", required=True, metavar="DIR", help="a data-branch checkout (holding runs/)")
    parser.add_argument("--repo", metavar="OWNER/NAME",
                        help="where the alert issues live (default: $GITHUB_REPOSITORY)")
    parser.add_argument("--author", metavar="LOGIN", default=None,
                        help="who opens the alert issues (default github-actions[bot])")


def main(args) -> int:
    from bench.ci import triage as read
    from bench.ci.github import GitHubError, repo_name
    from bench.records import triage

    repo = repo_name(args.repo or os.environ.get("GITHUB_REPOSITORY", ""), "--repo (or $GITHUB_REPOSITORY)")
    try:
        marks = read.read_marks(repo, args.author or read.BOT, warn=sys.stderr)
    except GitHubError as e:
        # The dashboard still builds: the marks stay as the file last had them.
        print(f"bench triage: cannot read the alert issues ({e}); {triage.FILE} left as it was", file=sys.stderr)
        return 0
    path = triage.write(args.data, marks)
    counts = {m: sum(x.mark == m for x in marks) for m in triage.MARKS}
    print(f"bench triage: {path}: " + ", ".join(f"{n} {m}" for m, n in counts.items()), file=sys.stderr)
    return 0
