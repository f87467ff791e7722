#!/usr/bin/env bash
# Commit and push a changed README table (git only: no Python runs here).
#
#   scripts/push-readme.sh README
#
# publish.yml's readme job, after update-readme.sh built the table in an
# earlier step that had no credentials. A changed README is committed in
# README's repository and pushed to README_BRANCH (default: the checked-out
# branch), rebasing and retrying when another push won the race; an
# unchanged table makes no commit. GH_TOKEN authenticates the push
# (git-auth.sh), or, when README_DEPLOY_KEY holds a deploy key's private key,
# the push goes over SSH with that key: a protected default branch lets it
# through when the ruleset lists "Deploy keys" as a bypass actor (see
# "Where the README table lives" in docs/workflows.md). GitHub's host key is pinned
# (scripts/github-known-hosts). README_RETRY_SECONDS (default 2) scales the
# wait between push attempts. A push refused five times fails the step
# (exit 1, an ::error line): the publish workflow shows it, and the
# dashboard deploys from its own job.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readme="$(cd "$(dirname "${1:?usage: push-readme.sh README}")" && pwd)/$(basename "$1")"

remote="origin"
if [[ -n "${README_DEPLOY_KEY:-}" ]]; then
  key="$(mktemp)"
  trap 'rm -f "$key"' EXIT
  printf '%s\n' "$README_DEPLOY_KEY" > "$key"
  chmod 600 "$key"
  export GIT_SSH_COMMAND="ssh -i $key -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=$here/github-known-hosts"
  remote="git@github.com:${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY}.git"
else
  # shellcheck source=scripts/git-auth.sh
  source "$here/git-auth.sh"
fi
cd "$(dirname "$readme")"
name="$(basename "$readme")"
if git diff --quiet -- "$name"; then
  echo "update-readme: table unchanged; no commit" >&2
  exit 0
fi
branch="${README_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}"
git -c user.name="keras-nightly-bench[bot]" -c user.email="keras-nightly-bench@users.noreply.github.com" \
  commit --quiet -m "README: nightly benchmark table" -- "$name"
for attempt in 1 2 3 4 5; do
  if git push --quiet "$remote" "HEAD:refs/heads/$branch"; then
    echo "update-readme: pushed the table to $branch" >&2
    exit 0
  fi
  echo "update-readme: push $attempt refused; rebasing on $branch and retrying" >&2
  sleep $((attempt * ${README_RETRY_SECONDS:-2}))
  git fetch --quiet "$remote" "$branch"
  git -c user.name="keras-nightly-bench[bot]" -c user.email="keras-nightly-bench@users.noreply.github.com" \
    rebase --quiet FETCH_HEAD || { git rebase --abort; break; }
done
echo "::error title=README not updated::could not push the table to $branch after 5 attempts (branch protection? see docs/workflows.md, Where the README table lives)"
exit 1
