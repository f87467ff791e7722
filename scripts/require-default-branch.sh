#!/usr/bin/env bash
# Refuse, with one line, a publish that runs on a branch other than the
# default one (publish.yml's first step after checkout).
#
#   REF_NAME=<github.ref_name> bash scripts/require-default-branch.sh
#
# A publish dispatched on a feature branch would run that branch's code with
# the publish job's write token and commit its README to that branch. Inputs:
# REF_NAME (the branch this run is on), GITHUB_REPOSITORY, DEFAULT_BRANCH
# (default: asked of `gh api`, GH_TOKEN). Exit 0 on the default branch, 1 with
# an ::error line otherwise.
set -euo pipefail
ref="${REF_NAME:?set REF_NAME to the branch this run is on (github.ref_name)}"
default="${DEFAULT_BRANCH:-}"
if [[ -z "$default" ]]; then
  default="$(gh api "repos/${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY}" --jq .default_branch)"
fi
if [[ "$ref" != "$default" ]]; then
  echo "::error title=publish refused::this run is on branch '$ref'; publish runs only on the default branch '$default' (dispatch it there)"
  exit 1
fi
echo "require-default-branch: on the default branch '$default'" >&2
