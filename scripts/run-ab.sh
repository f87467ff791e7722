#!/usr/bin/env bash
# The keras-ref A/B on this runner (keras-ref.yml): the current keras-nightly
# (A, base) and keras-team/keras at KERAS_REF (B, head), each in its own fresh
# virtual environment, benchmarked on the same machine, then compared.
#
#   bash scripts/run-ab.sh
#
# Inputs (env): what install-backend.sh and run-bench.sh take (job-paths.sh
# sets the paths), KERAS_REF. Writes, below $(dirname BENCH_OUT):
#   ab/            the two records and both install logs (the artifact)
#   compare.md     `bench compare --base A --head B` as markdown (job summary)
# With protocol 2's `bench run --ab A_PYTHON B_PYTHON` (A and B workers in duets) when
# this checkout's bench has it; otherwise A then B, one `bench run` each. A set-up
# that fails still leaves records (failed/install) and a compare.md saying so.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"
out="$(dirname "${BENCH_OUT:?set BENCH_OUT (scripts/job-paths.sh)}")"
ab="$out/ab"
venv_a="${BENCH_VENV:?set BENCH_VENV}"
venv_b="$venv_a-ref"
ref="${KERAS_REF:?set KERAS_REF}"
mkdir -p "$ab/base" "$ab/head"

BENCH_KERAS_REF="" BENCH_KERAS_VERSION="" BENCH_VENV="$venv_a" BENCH_INSTALL_LOG="$ab/install-nightly.json" \
  bash "$here/install-backend.sh" || echo "run-ab: the nightly (A) did not install; see $ab/install-nightly.json" >&2
BENCH_KERAS_REF="$ref" BENCH_KERAS_VERSION="" BENCH_VENV="$venv_b" BENCH_INSTALL_LOG="$ab/install-ref.json" \
  bash "$here/install-backend.sh" || echo "run-ab: keras@$ref (B) did not install; see $ab/install-ref.json" >&2

a_py="$venv_a/bin/python"
b_py="$venv_b/bin/python"
if [[ -x "$a_py" && -x "$b_py" ]] && "$a_py" -m bench run --help 2>/dev/null | grep -q -- '--ab'; then
  extra=()
  [[ -n "${BENCH_MODELS:-}" ]] && extra+=(--models "$BENCH_MODELS")
  [[ -n "${BENCH_MODES:-}" ]] && extra+=(--modes "$BENCH_MODES")
  "$a_py" -m bench run --backend "$BENCH_BACKEND" --device "$BENCH_DEVICE" --out "$ab" \
    ${extra[@]+"${extra[@]}"} --ab "$a_py" "$b_py"
else
  echo "run-ab: A then B, one bench run each (no bench run --ab here)" >&2
  # An A/B compares two builds already: never a reference build beside them.
  BENCH_REFERENCE="" BENCH_KERAS_REF="" BENCH_VENV="$venv_a" BENCH_OUT="$ab/base" \
    BENCH_INSTALL_LOG="$ab/install-nightly.json" bash "$here/run-bench.sh"
  BENCH_REFERENCE="" BENCH_KERAS_REF="$ref" BENCH_VENV="$venv_b" BENCH_OUT="$ab/head" \
    BENCH_INSTALL_LOG="$ab/install-ref.json" bash "$here/run-bench.sh"
fi

# The comparison, with whichever environment has bench's requirements.
for py in "$a_py" "$b_py" "${BENCH_PYTHON:-python3}"; do
  if [[ -x "$(command -v "$py" || true)" ]] && "$py" -c 'import jsonschema, yaml' 2>/dev/null; then
    (cd "$(dirname "$here")" && KERAS_REF="$ref" "$py" -m bench comment ref --summary-only "$ab") > "$out/compare.md"
    exit 0
  fi
done
printf '### keras-ref %s\n\nNo comparison: neither environment could run bench (see the install logs in the artifact).\n' "$ref" > "$out/compare.md"
