#!/usr/bin/env bash
# pr-bench.yml's benchmark step: the pull request's bench beside the default
# branch's, as a same-machine A/B on one Keras nightly (one venv): side a runs
# the default branch's workers (BASE_BENCH, its checkout), side b this
# checkout's (`bench run --ab PY PY --ab-root BASE_BENCH .`). `bench compare`
# (pr-comment.yml) then pairs b with a; past nights are only its fallback.
#
#   bash scripts/pr-ab.sh
#
# Inputs (env): what run-bench.sh takes, BASE_BENCH (default base-bench).
# When the A/B cannot run (no venv, no default-branch checkout, or this
# bench has no --ab-root), run-bench.sh benchmarks the pull request alone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$here")"
base="${BASE_BENCH:-base-bench}"
py="${BENCH_VENV:-.bench-venv}/bin/python"
if [[ -x "$py" && -f "$base/bench/measure/worker.py" ]] && "$py" -m bench run --help 2>/dev/null | grep -q -- '--ab-root'; then
  args=(run --backend "${BENCH_BACKEND:?set BENCH_BACKEND}" --device "${BENCH_DEVICE:?set BENCH_DEVICE}"
        --out "${BENCH_OUT:?set BENCH_OUT}" --ab "$py" "$py" --ab-root "$base" .)
  [[ -n "${BENCH_MODELS:-}" ]] && args+=(--models "$BENCH_MODELS")
  [[ -n "${BENCH_MODES:-}" ]] && args+=(--modes "$BENCH_MODES")
  [[ -n "${BENCH_INSTALL_LOG:-}" && -f "$BENCH_INSTALL_LOG" ]] && args+=(--install-log "$BENCH_INSTALL_LOG")
  echo "pr-ab: the default branch's bench ($base, side a) beside this pull request's (side b)" >&2
  exec "$py" -m bench "${args[@]}"
fi
echo "pr-ab: no A/B here (venv, $base or --ab-root missing): the pull request alone, against past nights" >&2
BENCH_REFERENCE="" exec bash "$here/run-bench.sh"
