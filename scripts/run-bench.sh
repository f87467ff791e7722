#!/usr/bin/env bash
# Run one backend's benchmarks on this device with the job's virtual
# environment: `python -m bench run`, one record written into BENCH_OUT (two
# with a reference build: the reference's and this build's).
#
# A benchmark job step (nightly.yml, pr-bench.yml); runs the same locally.
# Inputs from the environment (extra arguments go to `bench run`, e.g. --quick):
#   BENCH_BACKEND, BENCH_DEVICE  the matrix entry (required)
#   BENCH_OUT                    folder for the record (required)
#   BENCH_VENV                   the environment install-backend.sh made (default .bench-venv)
#   BENCH_INSTALL_LOG            its install log; passed on when the file exists, so a
#                                failed install is recorded as failed/install
#   BENCH_MODELS, BENCH_MODES    subsets, comma-separated (default: all)
#   BENCH_KERAS_REF              set when a keras git ref was installed, BENCH_KERAS_VERSION
#                                when a pinned nightly was: the record says keras_source
#                                git / pinned and never becomes a point
#   BENCH_NIGHT                  the night the run is for (run.night; `bench night`)
#   BENCH_REFERENCE              the device's reference build (matrix.reference, nightly.yml
#                                only), and BENCH_REFERENCE_VENV the virtual environment
#                                install-reference.sh made for it (default .bench-reference-venv):
#                                when both are there (its bin/python executable) the run is
#                                `bench run --reference <its python>`, the reference's workers
#                                beside this build's and one record each; without a reference,
#                                or when its install failed (no venv), this build runs alone
# When the job's set-up failed so that bench itself cannot run (no virtual
# environment: the runner's prerequisites, the venv or bench's own
# requirements failed; the install log says which), the record is written by
# `bench failure-record --kind install` with the runner's python3 instead: every
# benchmark failed/install, so the night still has a record.
# Prints the record paths (bench run's stdout).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"   # `python -m bench` from this checkout
python="${BENCH_VENV:-.bench-venv}/bin/python"
setup_failed=""
[[ -x "$python" ]] || setup_failed="no virtual environment at $python"
if [[ -z "$setup_failed" && -n "${BENCH_INSTALL_LOG:-}" && -f "$BENCH_INSTALL_LOG" ]] \
   && grep -Eq '"failed_step": "(prerequisites|venv|harness)"' "$BENCH_INSTALL_LOG"; then
  setup_failed="bench's own requirements are not installed"
fi
if [[ -n "$setup_failed" ]]; then
  echo "run-bench: $setup_failed; writing the install-failure record" >&2
  fallback="${BENCH_PYTHON:-python3}"
  command -v "$fallback" >/dev/null 2>&1 || fallback=python3
  exec "$fallback" -m bench failure-record --kind install
fi

args=(run --backend "${BENCH_BACKEND:?set BENCH_BACKEND}" --device "${BENCH_DEVICE:?set BENCH_DEVICE}"
      --out "${BENCH_OUT:?set BENCH_OUT}")
[[ -n "${BENCH_MODELS:-}" ]] && args+=(--models "$BENCH_MODELS")
[[ -n "${BENCH_MODES:-}" ]] && args+=(--modes "$BENCH_MODES")
if [[ -n "${BENCH_KERAS_REF:-}" ]]; then
  args+=(--keras-source git)
elif [[ -n "${BENCH_KERAS_VERSION:-}" ]]; then
  args+=(--keras-source pinned)
fi
[[ -n "${BENCH_INSTALL_LOG:-}" && -f "$BENCH_INSTALL_LOG" ]] && args+=(--install-log "$BENCH_INSTALL_LOG")
# workers v13: each series' stored steps per call from the data branch's records (nightly.yml)
[[ -n "${BENCH_STEPS_FROM:-}" && -d "$BENCH_STEPS_FROM" ]] && args+=(--steps-from "$BENCH_STEPS_FROM")
reference_python="${BENCH_REFERENCE_VENV:-.bench-reference-venv}/bin/python"
[[ -n "${BENCH_REFERENCE:-}" && -x "$reference_python" ]] && args+=(--reference "$reference_python")

mkdir -p "$BENCH_OUT"
exec "$python" -m bench ${args[@]+"${args[@]}"} ${1+"$@"}
