#!/usr/bin/env bash
# The pull-request benchmark's matrix: the backends the PR's changes can affect.
#
#   scripts/pr-matrix.sh OUTPUT_FILE
#
# pr-bench.yml's setup step. Asks GitHub (`gh api`, GH_TOKEN with
# pull-requests: read) for the PR's head SHA and changed files, then runs
# `bench matrix --changed-files` (bench/ci/affected.py says which backends a path
# affects). Appends pr=, head_sha=, matrix= and count= to OUTPUT_FILE (the
# step's $GITHUB_OUTPUT). Inputs from the environment:
#   GITHUB_REPOSITORY  owner/name
#   PR_NUMBER          the pull request
#   HEAD_SHA           the head commit the maintainer reviewed (the dispatch input):
#                      refused (exit 1, one line) when the PR's head is another commit
#   BACKENDS           a maintainer's explicit choice (comma-separated): skips
#                      the changed-files filter
#   BENCH_PYTHON       the Python with bench's requirements (default python3)
set -euo pipefail

out="${1:?usage: pr-matrix.sh OUTPUT_FILE}"
repo="${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY}"
pr="${PR_NUMBER:?set PR_NUMBER}"
[[ "$pr" =~ ^[1-9][0-9]*$ ]] || { echo "pr-matrix: error: PR_NUMBER is '$pr'; expected a pull request number" >&2; exit 2; }
python="${BENCH_PYTHON:-python3}"
cd "$(dirname "$0")/.."

head_sha="${HEAD_SHA:?set HEAD_SHA to the reviewed head commit}"
[[ "$head_sha" =~ ^[0-9a-f]{40}$ ]] || { echo "pr-matrix: error: HEAD_SHA is '$head_sha'; expected the 40 lowercase hex digits of the reviewed commit" >&2; exit 2; }
now="$(gh api "repos/$repo/pulls/$pr" --jq .head.sha)"
if [[ "$now" != "$head_sha" ]]; then
  echo "::error title=PR head moved::PR #$pr has head $now, not the reviewed $head_sha; review the new commits and dispatch again"
  exit 1
fi
printf 'pr=%s\nhead_sha=%s\n' "$pr" "$head_sha" >> "$out"

if [[ -n "${BACKENDS:-}" ]]; then
  "$python" -m bench matrix --backends "$BACKENDS" --github-output "$out" >/dev/null
else
  changed="$(mktemp)"
  trap 'rm -f "$changed"' EXIT
  gh api --paginate "repos/$repo/pulls/$pr/files?per_page=100" --jq '.[].filename' > "$changed"
  echo "pr-matrix: PR #$pr changes $(wc -l < "$changed" | tr -d ' ') file(s)" >&2
  "$python" -m bench matrix --changed-files "$changed" --github-output "$out" >/dev/null
fi
