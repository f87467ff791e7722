#!/usr/bin/env bash
# The confirm job on this runner (confirm.yml): `bench confirm`, a
# same-machine A/B of the last good nightly (GOOD) against the first bad one
# (BAD), each installed by install-backend.sh in a venv of its own, adding
# worker pairs until DIFFERENT or SAME (docs/ab.md).
#
#   bash scripts/run-confirm.sh
#
# Inputs (env): what install-backend.sh takes (job-paths.sh sets the paths),
# SERIES, GOOD, BAD, CONFIRM_MINUTES (default 20). Writes
# $(dirname BENCH_OUT)/confirm/ (result.json, the A/B records, the install
# logs: the artifact) and $(dirname BENCH_OUT)/confirm.md (job summary).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"
out="$(dirname "${BENCH_OUT:?set BENCH_OUT (scripts/job-paths.sh)}")"
work="$out/confirm"
mkdir -p "$work"
# bench itself runs from a fresh nightly environment of the backend (its requirements are there).
BENCH_KERAS_REF="" BENCH_KERAS_VERSION="" BENCH_INSTALL_LOG="$work/install-bench.json" \
  bash "$here/install-backend.sh"
py="${BENCH_VENV:?set BENCH_VENV}/bin/python"
status=0
"$py" -m bench confirm --series "$SERIES" --good "$GOOD" --bad "$BAD" --work "$work" \
  --out "$work/result.json" --budget-minutes "${CONFIRM_MINUTES:-20}" > "$out/confirm.txt" || status=$?
{
  printf '### confirm %s\n\n' "$SERIES"
  if [[ -s "$out/confirm.txt" ]]; then cat "$out/confirm.txt"; else echo "No result: bench confirm exited $status (see the log)."; fi
} > "$out/confirm.md"
exit "$status"
