#!/usr/bin/env bash
# Turn a maintainer's `/benchmark <sha>` comment into a pr-bench.yml dispatch of
# that exact commit (pr-command.yml's step, GitHub-hosted), and reply on the PR.
#
#   /benchmark <40-hex sha>   the commit you reviewed; it must be the PR's head now
#
# Only that form is taken: a bare `/benchmark` would take whatever the head is
# when the API is asked (a fork author can push in between), and a short SHA
# can be ground to match. Only a user whose permission on this repository is
# write, maintain or admin (repos/R/collaborators/LOGIN/permission) may ask;
# the author association of the comment (MEMBER, COLLABORATOR) is not enough:
# it also covers read-only members. Every refusal is one line in the log and a
# reply on the PR saying why; a dispatch is replied to as well.
#
# Inputs (env): GITHUB_REPOSITORY, PR_NUMBER, COMMENT_BODY (untrusted text),
# COMMENT_AUTHOR (the comment's user.login), DEFAULT_BRANCH, GH_TOKEN
# (actions: write to dispatch, pull-requests: write to reply).
# Exit 0 dispatched; 1 refused (replied); 2 bad inputs.
set -euo pipefail

repo="${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY}"
pr="${PR_NUMBER:?set PR_NUMBER}"
branch="${DEFAULT_BRANCH:?set DEFAULT_BRANCH}"
login="${COMMENT_AUTHOR:-}"
[[ "$pr" =~ ^[1-9][0-9]*$ ]] || { echo "pr-dispatch: error: PR_NUMBER is '$pr'; expected a pull request number" >&2; exit 2; }
[[ "$login" =~ ^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$ ]] || { echo "pr-dispatch: error: COMMENT_AUTHOR is '$login'; expected a GitHub login" >&2; exit 2; }

reply() {  # one comment on the PR; the text is ours (no comment text is echoed back)
  python3 -c 'import json, sys; print(json.dumps({"body": sys.argv[1]}))' "$1" |
    gh api "repos/$repo/issues/$pr/comments" -X POST --input - > /dev/null ||
    echo "pr-dispatch: warning: could not reply on PR #$pr" >&2
}
refuse() {
  echo "::error title=benchmark refused::$1"
  reply "\`/benchmark\` refused: $1"
  exit 1
}

permission="$(gh api "repos/$repo/collaborators/$login/permission" --jq .permission 2>/dev/null || echo none)"
case "$permission" in
  admin|maintain|write) ;;
  *) refuse "the comment's author has '$permission' permission on this repository; only users with write, maintain or admin permission may start a benchmark" ;;
esac
# The first line only: "/benchmark" and exactly one word after it.
first="$(printf '%s\n' "${COMMENT_BODY:-}" | head -n 1 | tr -d '\r')"
read -r command wanted extra <<< "$first" || true
if [[ "$command" != "/benchmark" || -n "${extra:-}" || ! "${wanted:-}" =~ ^[0-9a-f]{40}$ ]]; then
  refuse "expected \`/benchmark <sha>\` with the full 40-hex-digit commit SHA you reviewed (lowercase) on the first line; a short SHA or none at all is not taken, since the head can move between your comment and the dispatch"
fi
head="$(gh api "repos/$repo/pulls/$pr" --jq .head.sha)"
[[ "$head" =~ ^[0-9a-f]{40}$ ]] || { echo "pr-dispatch: error: PR #$pr head is '$head'; expected 40 hex digits" >&2; exit 1; }
if [[ "$head" != "$wanted" ]]; then
  refuse "PR #$pr has head $head, not $wanted; review the new head and ask for it by its SHA"
fi
gh workflow run pr-bench.yml --repo "$repo" --ref "$branch" -f "pr=$pr" -f "sha=$head"
echo "pr-dispatch: pr-bench.yml dispatched for PR #$pr at $head" >&2
reply "pr-bench dispatched for $head; the comparison is posted here when it is done."
