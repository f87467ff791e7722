#!/usr/bin/env bash
# keras-ref.yml's setup step: check the dispatch inputs, then the matrix of
# the named device (and backends).
#
#   scripts/ref-matrix.sh OUTPUT_FILE
#
# Inputs (env): KERAS_REF (a keras-team/keras commit, its full SHA), DEVICE (a
# device label), BACKENDS (comma-separated, empty: the device's all), PR (a pull
# request number of this repository, or empty), BENCH_PYTHON. Appends matrix=
# and count= to OUTPUT_FILE. Exit 2 with one line for a malformed input.
set -euo pipefail
out="${1:?usage: ref-matrix.sh OUTPUT_FILE}"
cd "$(dirname "$0")/.."
ref="${KERAS_REF:-}"
# A full commit SHA only: a branch or refs/pull/N/head resolves on the runner, later, to whatever is there then.
[[ "$ref" =~ ^[0-9a-f]{40}$ ]] || { echo "ref-matrix: error: keras_ref is '$ref'; expected a full 40-hex-digit keras-team/keras commit SHA (a branch, tag or pull ref moves)" >&2; exit 2; }
[[ "${DEVICE:-}" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "ref-matrix: error: device is '${DEVICE:-}'; expected one device label from benchmarks.yaml" >&2; exit 2; }
[[ -z "${PR:-}" || "$PR" =~ ^[1-9][0-9]*$ ]] || { echo "ref-matrix: error: pr is '$PR'; expected a pull request number or nothing" >&2; exit 2; }
"${BENCH_PYTHON:-python3}" -m bench matrix --devices "$DEVICE" --backends "${BACKENDS:-}" --github-output "$out" >/dev/null
