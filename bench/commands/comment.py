"""Post a workflow's result to GitHub: the PR benchmark, a keras-ref A/B, a bisect, a confirm.

  python -m bench comment pr ARTIFACTS_DIR DATA_DIR        # pr-comment.yml: the sticky PR comment
  python -m bench comment ref [--summary-only] AB_DIR      # keras-ref.yml: the A/B comparison
  python -m bench comment bisect RESULT_JSON               # bisect.yml: the alert issue
  python -m bench comment confirm RESULT_JSON              # confirm.yml: the alert issue, then bisect or a label

Every input was written on a self-hosted runner by code under test: it is
read as data, validated, and escaped (bench/ci/pr_comment.py,
ref_comment.py, bisect_comment.py, confirm_alert.py say how). `gh` authenticates with
GH_TOKEN; `bench compare` runs in a process without it. The body also goes
to $GITHUB_STEP_SUMMARY when set.

pr: GITHUB_REPOSITORY, RUN_EVENT, RUN_HEAD_SHA, RUN_TITLE, RUN_URL (from
github.event.workflow_run), COMMENT_AUTHOR (default github-actions[bot]);
no pr.json below ARTIFACTS_DIR: nothing to do (exit 0); a refused artifact
exits 1 naming why. ref: KERAS_REF (the heading), RUN_URL, and for the
comment PR (a pull request of this repository) and GITHUB_REPOSITORY;
--summary-only prints the markdown; no A/B pair exits 1. bisect: ISSUE,
GITHUB_REPOSITORY, RUN_URL; an unreadable result is posted as such.
confirm: the same inputs; then a confirmed slowdown dispatches bisect.yml
(the result's series and versions, checked) and SAME labels the issue as
the machine's (bench.ci.confirm_alert.follow_up).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from bench.ci.github import BOT, api_json, repo_name, workflow_run
from bench.errors import UsageError

def add_arguments(parser):
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    pr = kinds.add_parser("pr", help="the PR benchmark's sticky comment")
    pr.add_argument("artifacts", metavar="ARTIFACTS_DIR", help="pr-bench's artifacts (untrusted)")
    pr.add_argument("data", metavar="DATA_DIR", help="a data-branch checkout: the baseline")
    ref = kinds.add_parser("ref", help="a keras-ref A/B comparison")
    ref.add_argument("--summary-only", action="store_true", help="print the markdown; post nothing")
    ref.add_argument("ab", metavar="AB_DIR", help="the A/B records (untrusted)")
    bisect = kinds.add_parser("bisect", help="a bisect result on its alert issue")
    bisect.add_argument("result", metavar="RESULT_JSON", help="bench bisect's result (untrusted)")
    confirm = kinds.add_parser("confirm", help="a confirm result on its alert issue, then bisect or a label")
    confirm.add_argument("result", metavar="RESULT_JSON", help="bench confirm's result (untrusted)")


def main(args) -> int:
    return {"pr": _pr, "ref": _ref, "bisect": _bisect, "confirm": _confirm}[args.kind](args, os.environ)


def _pr(args, env) -> int:
    from bench.ci import pr_comment as pc

    try:
        artifact = pc.read_artifact(Path(args.artifacts))
        if artifact is None:
            print(f"bench comment: no {pc.PR_FILE} below {args.artifacts}: the PR benchmark did not run; "
                  "nothing to do")
            return 0
        repo = pc.need(env, "GITHUB_REPOSITORY")
        pc.verify(artifact, repo, env.get("RUN_EVENT", ""), env.get("RUN_HEAD_SHA", ""), env.get("RUN_TITLE", ""))
        body = pc.render(artifact, Path(args.data), env.get("RUN_URL", ""))
    except pc.Refused as e:
        _summary(env, f"### PR benchmark comment not posted\n\n{e}\n")
        raise
    _summary(env, body)
    print(f"bench comment: {pc.upsert_comment(repo, artifact.pr, body, env.get('COMMENT_AUTHOR', BOT))}")
    return 0


def _ref(args, env) -> int:
    from bench.ci.ref_comment import pair_records, render

    pairs, problems = pair_records(Path(args.ab))
    body = render(pairs, problems, env.get("KERAS_REF", "?"), env.get("RUN_URL", ""))
    if args.summary_only:
        print(body, end="")
        return 0 if pairs else 1
    _summary(env, body)
    pr = env.get("PR", "")
    if not re.fullmatch(r"[1-9][0-9]*", pr):
        raise UsageError(f"PR is {pr!r}; expected a pull request number")
    if not pairs:
        print("bench comment: no A/B pair to compare:\n" + "\n".join(problems))
        return 1
    done = api_json(["-X", "POST", f"repos/{_repo(env)}/issues/{int(pr)}/comments"], {"body": body})
    print(f"bench comment: {done.get('html_url', '') if isinstance(done, dict) else ''}")
    return 0


def _bisect(args, env) -> int:
    from bench.ci.bisect_comment import body

    issue, repo = _issue(env), _repo(env)
    text = body(Path(args.result), env.get("RUN_URL", "this run"))
    api_json(["-X", "POST", f"repos/{repo}/issues/{issue}/comments"], {"body": text})
    print(f"bench comment: posted to #{issue}")
    return 0


VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]*")
SERIES = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+){3}")


def _confirm(args, env) -> int:
    from bench.ci import confirm_alert as ca

    issue, repo = _issue(env), _repo(env)
    result = ca.read_result(args.result)
    todo = ca.follow_up(result)
    api_json(["-X", "POST", f"repos/{repo}/issues/{issue}/comments"],
             {"body": ca.comment(result, env.get("RUN_URL", "this run"))})
    if todo == "machine":
        api_json(["-X", "POST", f"repos/{repo}/issues/{issue}/labels"], {"labels": [ca.MACHINE_LABEL]})
    if todo == "bisect":
        fields = {k: str(result.get(k, "")) for k in ("series", "good", "bad")}
        if not (SERIES.fullmatch(fields["series"]) and VERSION.fullmatch(fields["good"])
                and VERSION.fullmatch(fields["bad"])):
            raise UsageError(f"{args.result}: series {fields['series']!r}, good {fields['good']!r}, bad "
                             f"{fields['bad']!r}; expected BACKEND/DEVICE/MODEL/MODE and two versions")
        workflow_run("bisect.yml", repo, {**fields, "issue": issue})
    print(f"bench comment: posted to #{issue}; follow-up: {todo}")
    return 0


def _issue(env) -> str:
    issue = env.get("ISSUE", "")
    if not re.fullmatch(r"[1-9][0-9]*", issue):
        raise UsageError(f"ISSUE is {issue!r}; expected an issue number")
    return issue


def _repo(env) -> str:
    return repo_name(env.get("GITHUB_REPOSITORY", ""), "GITHUB_REPOSITORY")


def _summary(env, text: str) -> None:
    if env.get("GITHUB_STEP_SUMMARY"):
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as f:
            f.write(text + "\n")
