#!/usr/bin/env bash
# bisect.yml's setup step: check the dispatch inputs, then the matrix of the
# series' one device and backend.
#
#   scripts/bisect-setup.sh OUTPUT_FILE
#
# Inputs (env): SERIES (BACKEND/DEVICE/MODEL/MODE), GOOD and BAD (a
# keras-nightly version or a commit SHA), ISSUE (an issue number of this
# repository, or empty), BENCH_PYTHON. Appends matrix=, count=, model= and
# mode= to OUTPUT_FILE. Exit 2 with one line for a malformed input.
set -euo pipefail
out="${1:?usage: bisect-setup.sh OUTPUT_FILE}"
cd "$(dirname "$0")/.."
label='[A-Za-z0-9._-]+'
[[ "${SERIES:-}" =~ ^($label)/($label)/($label)/($label)$ ]] || {
  echo "bisect-setup: error: series is '${SERIES:-}'; expected BACKEND/DEVICE/MODEL/MODE such as jax/rtx-5070-ti/cnn/train" >&2; exit 2; }
backend="${BASH_REMATCH[1]}" device="${BASH_REMATCH[2]}" model="${BASH_REMATCH[3]}" mode="${BASH_REMATCH[4]}"
for side in GOOD BAD; do
  [[ "${!side:-}" =~ ^[A-Za-z0-9][A-Za-z0-9.+]*$ ]] || {
    echo "bisect-setup: error: ${side,,} is '${!side:-}'; expected a keras-nightly version or a commit SHA" >&2; exit 2; }
done
[[ -z "${ISSUE:-}" || "$ISSUE" =~ ^[1-9][0-9]*$ ]] || {
  echo "bisect-setup: error: issue is '$ISSUE'; expected an issue number or nothing" >&2; exit 2; }
"${BENCH_PYTHON:-python3}" -m bench matrix --devices "$device" --backends "$backend" --github-output "$out" >/dev/null
printf 'model=%s\nmode=%s\n' "$model" "$mode" >> "$out"
