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
#   GITHUB_OUTPUT the step's output file: gets refused=<n>
# ARTIFACTS_DIR/provenance.json (collect-artifacts.sh) goes to `bench publish
# --provenance`: every record must come from the run its folder was downloaded
# from. Quarantine: when bench publish refuses some records (its exit 3, each
# named on stderr and in the job summary) the others are published, this step
# still succeeds so the site is built and deployed, and refused=<n> lets a
# later job fail the run visibly. Exit 1 when nothing could be published.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "${1:?usage: publish-records.sh ARTIFACTS_DIR}" && pwd)"
repo="${DATA_REPO:-https://github.com/${GITHUB_REPOSITORY:?set DATA_REPO or GITHUB_REPOSITORY}.git}"
branch="${DATA_BRANCH:-gh-pages}"
# shellcheck source=scripts/git-auth.sh
source "$here/git-auth.sh"

count="$(find "$src" -name '*.json' -type f ! -path "$src/provenance.json" | wc -l | tr -d ' ')"
if [[ "$count" -eq 0 ]]; then
  echo "publish-records: no record below $src; nothing to publish" >&2
  exit 0
fi
echo "publish-records: $count record(s) -> $branch" >&2
cd "$(dirname "$here")"
provenance=()
[[ -f "$src/provenance.json" ]] && provenance=(--provenance "$src/provenance.json")
# A folder argument: bench publish takes every *.json below it (not provenance.json).
errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
rc=0
"${BENCH_PYTHON:-python3}" -m bench publish --repo "$repo" --branch "$branch" \
  ${provenance[@]+"${provenance[@]}"} "$src" 2> "$errors" || rc=$?
cat "$errors" >&2
refused="$(grep -c '^bench publish: refused ' "$errors" || true)"
[[ -z "${GITHUB_OUTPUT:-}" ]] || echo "refused=$refused" >> "$GITHUB_OUTPUT"
if [[ "$rc" -eq 3 ]]; then
  echo "::warning title=records refused::$refused record(s) refused (named above and in the job summary); the rest are published"
  exit 0
fi
exit "$rc"
