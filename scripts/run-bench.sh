#!/usr/bin/env bash
# Run one backend's benchmarks on this device with the job's virtual
# environment: `python -m bench run`, one record written into BENCH_OUT.
#
# A benchmark job step (nightly.yml, pr-bench.yml); runs the same locally.
# Inputs from the environment (extra arguments go to `bench run`, e.g. --quick):
#   BENCH_BACKEND, BENCH_DEVICE  the matrix entry (required)
#   BENCH_OUT                    folder for the record (required)
#   BENCH_VENV                   the environment install-backend.sh made (default .bench-venv)
#   BENCH_INSTALL_LOG            its install log; passed on when the file exists, so a
#                                failed install is recorded as failed/install
#   BENCH_MODELS, BENCH_MODES    subsets, comma-separated (default: all)
#   BENCH_KERAS_REF              set when a keras git ref was installed: the record
#                                says keras_source git:<ref> and never becomes a point
# Prints the record paths (bench run's stdout).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"   # `python -m bench` from this checkout
python="${BENCH_VENV:-.bench-venv}/bin/python"
[[ -x "$python" ]] || { echo "run-bench: error: '$python' not found; expected the virtual environment of scripts/install-backend.sh (BENCH_VENV)" >&2; exit 2; }

args=(run --backend "${BENCH_BACKEND:?set BENCH_BACKEND}" --device "${BENCH_DEVICE:?set BENCH_DEVICE}"
      --out "${BENCH_OUT:?set BENCH_OUT}")
[[ -n "${BENCH_MODELS:-}" ]] && args+=(--models "$BENCH_MODELS")
[[ -n "${BENCH_MODES:-}" ]] && args+=(--modes "$BENCH_MODES")
[[ -n "${BENCH_KERAS_REF:-}" ]] && args+=(--keras-source "git:$BENCH_KERAS_REF")
[[ -n "${BENCH_INSTALL_LOG:-}" && -f "$BENCH_INSTALL_LOG" ]] && args+=(--install-log "$BENCH_INSTALL_LOG")

mkdir -p "$BENCH_OUT"
exec "$python" -m bench "${args[@]}" "$@"
