#!/usr/bin/env bash
# Download benchmark records uploaded as artifacts by workflow runs (`gh`).
#
#   scripts/collect-artifacts.sh DEST
#
# The publish job's first step (publish.yml), and pr-comment.yml's. Inputs from
# the environment; `gh` authenticates with GH_TOKEN (actions: read suffices):
#   GITHUB_REPOSITORY  owner/name (required)
#   RUN_ID             download this run's artifacts; without it, sweep:
#   SWEEP_DAYS         every run of WORKFLOW created in the last N days (default 3),
#                      finished or not, so records of jobs that ran while another
#                      device was still offline get published too
#   WORKFLOW           workflow file to sweep (default nightly.yml)
#   BRANCH             sweep only runs on this branch (the default branch: a
#                      dispatch on a feature branch must not make nightly points)
#   PATTERN            artifact name glob (default record-*)
# Writes DEST/<run id>/<artifact>/...; prints how many JSON files it has. A run
# without matching artifacts (none yet, or expired) is noted and skipped.
set -euo pipefail

dest="${1:?usage: collect-artifacts.sh DEST}"
repo="${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY to owner/name}"
pattern="${PATTERN:-record-*}"
workflow="${WORKFLOW:-nightly.yml}"
days="${SWEEP_DAYS:-3}"

if [[ -n "${RUN_ID:-}" ]]; then
  [[ "$RUN_ID" =~ ^[0-9]+$ ]] || { echo "collect-artifacts: error: RUN_ID is '$RUN_ID'; expected a workflow run id (digits)" >&2; exit 2; }
  runs=("$RUN_ID")
else
  [[ "$days" =~ ^[0-9]+$ ]] || { echo "collect-artifacts: error: SWEEP_DAYS is '$days'; expected a number of days" >&2; exit 2; }
  since="$(python3 -c 'import sys, datetime as d; print((d.datetime.now(d.timezone.utc) - d.timedelta(days=int(sys.argv[1]))).date())' "$days")"
  branch_filter=()
  [[ -n "${BRANCH:-}" ]] && branch_filter=(--branch "$BRANCH")
  mapfile -t runs < <(gh run list --repo "$repo" --workflow "$workflow" --created ">=$since" \
                        "${branch_filter[@]}" --limit 200 --json databaseId --jq '.[].databaseId')
  echo "collect-artifacts: ${#runs[@]} run(s) of $workflow since $since" >&2
fi

mkdir -p "$dest"
for run in "${runs[@]}"; do
  if gh run download "$run" --repo "$repo" --pattern "$pattern" --dir "$dest/$run" 2>"$dest/.gh-error"; then
    echo "collect-artifacts: run $run: downloaded" >&2
  else
    echo "collect-artifacts: run $run: nothing downloaded ($(head -c 300 "$dest/.gh-error" | tr '\n' ' '))" >&2
  fi
done
rm -f "$dest/.gh-error"
find "$dest" -name '*.json' -type f | wc -l | tr -d ' '
