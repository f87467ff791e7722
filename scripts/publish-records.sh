#!/usr/bin/env bash
# Append every record found below a folder to the data branch (`bench publish`).
#
#   scripts/publish-records.sh ARTIFACTS_DIR
#
# The publish job's step (publish.yml). `bench publish` validates each record,
# adds only the new ones and retries on push races, so sweeping the same
# artifacts twice adds no commit. Inputs from the environment:
#   DATA_REPO    path or URL of the repository (default: this GitHub repository)
#   DATA_BRANCH  the data branch (default gh-pages)
#   BENCH_PYTHON the Python with bench's requirements (default python3)
#   GH_TOKEN     for pushing to github.com (see git-auth.sh)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "${1:?usage: publish-records.sh ARTIFACTS_DIR}" && pwd)"
repo="${DATA_REPO:-https://github.com/${GITHUB_REPOSITORY:?set DATA_REPO or GITHUB_REPOSITORY}.git}"
branch="${DATA_BRANCH:-gh-pages}"
# shellcheck source=scripts/git-auth.sh
source "$here/git-auth.sh"

count="$(find "$src" -name '*.json' -type f | wc -l | tr -d ' ')"
if [[ "$count" -eq 0 ]]; then
  echo "publish-records: no record below $src; nothing to publish" >&2
  exit 0
fi
echo "publish-records: $count record(s) -> $branch" >&2
cd "$(dirname "$here")"
# A folder argument: bench publish takes every *.json below it.
exec "${BENCH_PYTHON:-python3}" -m bench publish --repo "$repo" --branch "$branch" "$src"
