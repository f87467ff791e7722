#!/usr/bin/env bash
# Refresh the README's benchmark table from the data branch, and optionally
# commit and push it.
#
#   scripts/update-readme.sh DATA_DIR README [--push]
#
# publish.yml's step: `bench report --data DATA_DIR --readme README` rewrites
# the table between the README's bench:table markers. With --push (the publish
# job), a changed README is committed in README's repository and pushed to
# README_BRANCH (default: the checked-out branch), rebasing and retrying when
# another push won the race; an unchanged table makes no commit. GH_TOKEN
# authenticates the push (git-auth.sh). BENCH_PYTHON as publish-records.sh;
# README_RETRY_SECONDS (default 2) scales the wait between push attempts.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$(cd "${1:?usage: update-readme.sh DATA_DIR README [--push]}" && pwd)"
readme="$(cd "$(dirname "${2:?usage: update-readme.sh DATA_DIR README [--push]}")" && pwd)/$(basename "$2")"
push="${3:-}"
[[ -z "$push" || "$push" == "--push" ]] || { echo "update-readme: error: third argument is '$push'; expected --push or nothing" >&2; exit 2; }

(cd "$(dirname "$here")" && "${BENCH_PYTHON:-python3}" -m bench report --data "$data" --readme "$readme" >/dev/null)
[[ -n "$push" ]] || exit 0

# shellcheck source=scripts/git-auth.sh
source "$here/git-auth.sh"
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
  if git push --quiet origin "HEAD:refs/heads/$branch"; then
    echo "update-readme: pushed the table to $branch" >&2
    exit 0
  fi
  echo "update-readme: push $attempt refused; rebasing on $branch and retrying" >&2
  sleep $((attempt * ${README_RETRY_SECONDS:-2}))
  git fetch --quiet origin "$branch"
  git -c user.name="keras-nightly-bench[bot]" -c user.email="keras-nightly-bench@users.noreply.github.com" \
    rebase --quiet FETCH_HEAD || { git rebase --abort; break; }
done
echo "::warning title=README not updated::could not push the table to $branch (branch protection? see README, Workflows)"
exit 1
