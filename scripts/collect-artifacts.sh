#!/usr/bin/env bash
# Download benchmark records uploaded as artifacts by this repository's own
# workflow runs (`gh`), refusing every run that did not come from them.
#
#   scripts/collect-artifacts.sh DEST
#
# The publish job's first step (publish.yml), pr-comment.yml's and
# keras-ref.yml's. Inputs from the environment; `gh` authenticates with
# GH_TOKEN (actions: read suffices):
#   GITHUB_REPOSITORY  owner/name (required)
#   RUN_ID             download this run's artifacts; without it, sweep:
#   SWEEP_DAYS         every run of WORKFLOW created in the last N days (default 3),
#                      finished or not, so records of jobs that ran while another
#                      device was still offline get published too
#   TRIGGER_RUN_ID     also this run, however old (the nightly run whose completion
#                      started this publish: a rerun of a run older than the sweep)
#   WORKFLOW           the workflow file (default nightly.yml)
#   DEFAULT_BRANCH     the repository's default branch (default: asked of `gh api`)
#   PATTERN            artifact name glob (default record-*)
# Provenance: a run is taken only when GitHub says it is a run of
# .github/workflows/$WORKFLOW, its head repository is GITHUB_REPOSITORY, its
# event is schedule or workflow_dispatch and its branch the default branch. A
# fork's pull request can add or change a workflow file of the same name, but
# its runs have another head repository or event. Each refused run is one line
# (also in the job summary). Writes DEST/<run id>/<artifact>/... and
# DEST/provenance.json (the run each folder came from, as GitHub lists it:
# `bench publish --provenance` checks every record against it); prints how
# many record files it has. A run without matching artifacts (none yet, or
# expired) is noted and skipped; any other `gh` failure fails the step (exit 1)
# after naming it. bash 3.2 safe.
set -euo pipefail

dest="${1:?usage: collect-artifacts.sh DEST}"
repo="${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY to owner/name}"
pattern="${PATTERN:-record-*}"
workflow="${WORKFLOW:-nightly.yml}"
days="${SWEEP_DAYS:-3}"
TAB="$(printf '\t')"
FIELDS='[.id, .path, .event, .head_repository.full_name, .head_branch, .created_at, .run_started_at, .run_attempt] | @tsv'

say() { echo "collect-artifacts: $*" >&2; }
note() {  # a refusal: stderr and the job summary (a fork's branch or repository name is
  say "$*"  # untrusted text: through the one markdown escaper, bench/present/escape.py)
  [[ -z "${GITHUB_STEP_SUMMARY:-}" ]] || printf '%s' "$*" | python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from bench.present.escape import markdown
print("- collect-artifacts: " + markdown(sys.stdin.read()))' "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" >> "$GITHUB_STEP_SUMMARY"
}

[[ "$workflow" =~ ^[A-Za-z0-9._-]+\.ya?ml$ ]] || { say "error: WORKFLOW is '$workflow'; expected a workflow file name such as nightly.yml"; exit 2; }
branch="${DEFAULT_BRANCH:-}"
if [[ -z "$branch" ]]; then
  branch="$(gh api "repos/$repo" --jq .default_branch)"
fi

# One line per run: id, path, event, head repository, head branch (tab-separated).
if [[ -n "${RUN_ID:-}" ]]; then
  [[ "$RUN_ID" =~ ^[0-9]+$ ]] || { say "error: RUN_ID is '$RUN_ID'; expected a workflow run id (digits)"; exit 2; }
  listing="$(gh api "repos/$repo/actions/runs/$RUN_ID" --jq "$FIELDS")"
else
  [[ "$days" =~ ^[0-9]+$ ]] || { say "error: SWEEP_DAYS is '$days'; expected a number of days"; exit 2; }
  since="$(python3 -c 'import sys, datetime as d; print((d.datetime.now(d.timezone.utc) - d.timedelta(days=int(sys.argv[1]))).date())' "$days")"
  listing="$(gh api --paginate "repos/$repo/actions/workflows/$workflow/runs?created=%3E%3D$since&per_page=100" \
               --jq ".workflow_runs[] | $FIELDS")"
  say "$(printf '%s' "$listing" | grep -c . || true) run(s) of $workflow since $since"
  if [[ -n "${TRIGGER_RUN_ID:-}" ]]; then
    [[ "$TRIGGER_RUN_ID" =~ ^[0-9]+$ ]] || { say "error: TRIGGER_RUN_ID is '$TRIGGER_RUN_ID'; expected a workflow run id (digits)"; exit 2; }
    if ! printf '%s\n' "$listing" | grep -q "^$TRIGGER_RUN_ID$TAB"; then
      say "run $TRIGGER_RUN_ID (the triggering run) is older than the sweep; taking it too"
      listing+=$'\n'"$(gh api "repos/$repo/actions/runs/$TRIGGER_RUN_ID" --jq "$FIELDS")"
    fi
  fi
fi

runs=()
accepted=""   # the accepted runs' lines, for provenance.json
while IFS="$TAB" read -r id path event head_repo head_branch created started attempt; do
  [[ -n "$id" ]] || continue
  why=""
  if [[ "$path" != ".github/workflows/$workflow" ]]; then why="workflow is '$path', expected .github/workflows/$workflow"
  elif [[ "$head_repo" != "$repo" ]]; then why="head repository is '$head_repo', expected $repo"
  elif [[ "$event" != "schedule" && "$event" != "workflow_dispatch" ]]; then why="event is '$event', expected schedule or workflow_dispatch"
  elif [[ "$head_branch" != "$branch" ]]; then why="branch is '$head_branch', expected the default branch $branch"
  fi
  if [[ -n "$why" ]]; then
    note "run $id refused: $why"
  else
    runs+=("$id")
    accepted+="$id$TAB$head_repo$TAB$event$TAB$created$TAB$started$TAB$attempt"$'\n'
  fi
done <<< "$listing"

mkdir -p "$dest"
failed=()
for run in ${runs[@]+"${runs[@]}"}; do
  if gh run download "$run" --repo "$repo" --pattern "$pattern" --dir "$dest/$run" 2>"$dest/.gh-error"; then
    say "run $run: downloaded"
  elif grep -Eqi 'no artifact matches|no valid artifacts' "$dest/.gh-error"; then
    say "run $run: no artifact yet ($(head -c 300 "$dest/.gh-error" | tr '\n' ' '))"
  else
    say "error: run $run: gh run download failed: $(head -c 300 "$dest/.gh-error" | tr '\n' ' ')"
    failed+=("$run")
  fi
done
rm -f "$dest/.gh-error"
if [[ ${#failed[@]} -gt 0 ]]; then
  say "error: could not download run(s) ${failed[*]}; failing so that the next sweep retries them"
  exit 1
fi
printf '%s' "$accepted" | python3 -c '
import json, os, sys
dest, runs = sys.argv[1], {}
for line in sys.stdin.read().splitlines():
    run_id, repo, event, created, started, attempt = line.split("\t")
    if os.path.isdir(os.path.join(dest, run_id)):
        runs[run_id] = {"run_id": run_id, "repository": repo, "event": event, "created_at": created,
                        "run_started_at": started or None, "run_attempt": int(attempt) if attempt.isdigit() else None}
with open(os.path.join(dest, "provenance.json"), "w") as f:
    json.dump({"format": 1, "artifacts": runs}, f, indent=2, sort_keys=True)
' "$dest"
find "$dest" -name '*.json' -type f ! -path "$dest/provenance.json" | wc -l | tr -d ' '
