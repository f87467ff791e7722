#!/usr/bin/env bash
# Two checkouts of this project measured in turns on one machine: for ROUNDS
# rounds, `bench run` from checkout A, then from checkout B, with the same
# arguments; A's records go to OUT/a, B's to OUT/b, and each run prints one line
# with its wall time. Why turns: this VM's speed drifts by tens of percent over
# minutes, so two versions measured an hour apart also differ by that hour.
# Compare the two folders with the kept-set reports afterwards, e.g.
#   .venv/bin/python studies/bench_stability.py --flags OUT/a OUT/b
#
#   bash studies/bench_turns.sh A_DIR B_DIR OUT ROUNDS [bench run args...]
#   e.g. git worktree add /tmp/before HEAD~1
#        BACKENDS="jax openvino" bash studies/bench_turns.sh /tmp/before . .local/turns 3 --modes latency
#
# BENCH_PYTHON  the interpreter (default: this checkout's .venv/bin/python); each run
#               starts in its own checkout, so it imports that checkout's bench
# BACKENDS      backends to run one after another in each turn (default: bench run's own)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 4 ]; then
  echo "usage: bash studies/bench_turns.sh A_DIR B_DIR OUT ROUNDS [bench run args...]" >&2
  exit 2
fi
a=$1 b=$2 out=$3 rounds=$4
shift 4
python=${BENCH_PYTHON:-$here/.venv/bin/python}
for dir in "$a" "$b"; do
  if [ ! -f "$dir/bench/__main__.py" ]; then
    echo "bench_turns: $dir is not a checkout of this project (no bench/__main__.py)" >&2
    exit 2
  fi
done
case $rounds in ''|*[!0-9]*|0) echo "bench_turns: ROUNDS is '$rounds'; expected a whole number, 1 or more" >&2; exit 2;; esac
mkdir -p "$out/a" "$out/b"
out=$(cd "$out" && pwd)
read -r -a backends <<< "${BACKENDS:-}"
[ ${#backends[@]} -gt 0 ] || backends=("")
for round in $(seq 1 "$rounds"); do
  for side in a b; do
    dir=$a; [ "$side" = b ] && dir=$b
    for backend in "${backends[@]}"; do
      started=$(date +%s)
      rc=0
      (cd "$dir" && "$python" -m bench run --device local-cpu ${backend:+--backend "$backend"} --out "$out/$side" "$@") \
        > "$out/$side/r$round${backend:+-$backend}.log" 2>&1 || rc=$?
      echo "round $round $side ${backend:-all}: rc=$rc wall=$(( $(date +%s) - started ))s"
    done
  done
done
