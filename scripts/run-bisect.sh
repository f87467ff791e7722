#!/usr/bin/env bash
# The bisect on this runner (bisect.yml): the data branch (to look up the
# nightly versions), then `bench bisect`, whose probes install each Keras
# commit with install-backend.sh and A/B it against good with `bench run --ab`.
#
#   bash scripts/run-bisect.sh
#
# Inputs (env): what install-backend.sh takes (job-paths.sh sets the paths),
# SERIES, GOOD, BAD, GITHUB_REPOSITORY or DATA_REPO, DATA_BRANCH. Writes
# $(dirname BENCH_OUT)/bisect/ (the result record, the state, the install
# logs: the artifact) and $(dirname BENCH_OUT)/bisect.md (job summary).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"
out="$(dirname "${BENCH_OUT:?set BENCH_OUT (scripts/job-paths.sh)}")"
work="$out/bisect"
mkdir -p "$work"
bash "$here/checkout-data.sh" "$out/data"
# bench itself runs with a fresh nightly environment of the backend: its
# requirements are there, and it is good's kind of environment too.
BENCH_KERAS_REF="" BENCH_KERAS_VERSION="" BENCH_INSTALL_LOG="$work/install-bench.json" \
  bash "$here/install-backend.sh"
py="${BENCH_VENV:?set BENCH_VENV}/bin/python"
status=0
"$py" -m bench bisect --series "$SERIES" --good "$GOOD" --bad "$BAD" --data "$out/data" \
  --work "$work" --out "$work/result.json" > "$out/bisect.txt" || status=$?
{
  printf '### bisect %s\n\n' "$SERIES"
  if [[ -s "$out/bisect.txt" ]]; then cat "$out/bisect.txt"; else echo "No result: bench bisect exited $status (see the log)."; fi
} > "$out/bisect.md"
exit "$status"
