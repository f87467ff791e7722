#!/usr/bin/env bash
# Turn a maintainer's `/benchmark` comment into a pr-bench.yml dispatch for the
# PR's head commit at this moment (pr-command.yml's step, GitHub-hosted).
#
#   /benchmark          the current head
#   /benchmark <sha>    only if the head is still <sha> (7 to 40 hex digits)
#
# Inputs (env): GITHUB_REPOSITORY, PR_NUMBER, COMMENT_BODY (untrusted text),
# AUTHOR_ASSOCIATION (must be OWNER, MEMBER or COLLABORATOR: checked again here,
# not only in the workflow's `if`), DEFAULT_BRANCH, GH_TOKEN (actions: write).
# Exit 0 dispatched; 1 refused (one line says why); 2 bad inputs.
set -euo pipefail

repo="${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY}"
pr="${PR_NUMBER:?set PR_NUMBER}"
branch="${DEFAULT_BRANCH:?set DEFAULT_BRANCH}"
[[ "$pr" =~ ^[1-9][0-9]*$ ]] || { echo "pr-dispatch: error: PR_NUMBER is '$pr'; expected a pull request number" >&2; exit 2; }
case "${AUTHOR_ASSOCIATION:-}" in
  OWNER|MEMBER|COLLABORATOR) ;;
  *) echo "::error title=benchmark refused::comment author association is '${AUTHOR_ASSOCIATION:-}'; expected OWNER, MEMBER or COLLABORATOR"; exit 1 ;;
esac
# The first line only: "/benchmark" and at most one word after it.
first="$(printf '%s\n' "${COMMENT_BODY:-}" | head -n 1 | tr -d '\r')"
read -r command wanted extra <<< "$first" || true
if [[ "$command" != "/benchmark" || -n "${extra:-}" ]]; then
  echo "::error title=benchmark refused::the comment's first line is not '/benchmark' or '/benchmark <sha>'"
  exit 1
fi
if [[ -n "${wanted:-}" && ! "$wanted" =~ ^[0-9a-f]{7,40}$ ]]; then
  echo "::error title=benchmark refused::'$wanted' is not a commit SHA; expected 7 to 40 lowercase hex digits"
  exit 1
fi
head="$(gh api "repos/$repo/pulls/$pr" --jq .head.sha)"
[[ "$head" =~ ^[0-9a-f]{40}$ ]] || { echo "pr-dispatch: error: PR #$pr head is '$head'; expected 40 hex digits" >&2; exit 1; }
if [[ -n "${wanted:-}" && "$head" != "$wanted"* ]]; then
  echo "::error title=benchmark refused::PR #$pr has head $head, not $wanted; it moved since the comment"
  exit 1
fi
gh workflow run pr-bench.yml --repo "$repo" --ref "$branch" -f "pr=$pr" -f "sha=$head"
echo "pr-dispatch: pr-bench.yml dispatched for PR #$pr at $head" >&2
