#!/usr/bin/env bash
# The GPU paths on a real NVIDIA card, as one script for a machine lent for minutes:
#
#   bash studies/gpu_check.sh OUT [SECONDS [nightly|quick]]   # PYTHON=python3 by default
#
# 1. `bench check` on a device whose accelerator is gpu (NVML: driver, clocks,
#    other processes on the card), as text and as JSON.
# 2. One quick `bench run` of jax and torch on that device: CUDA workers, NVML
#    state at start and end, energy, device peak memory, latency, the quality gate.
# 3. Then more `bench run`s of jax and torch, one after another, in the nightly
#    protocol (or the quick one, the third argument), until SECONDS (default 240)
#    have passed since the start: how far the headlines of separate invocations
#    lie apart on a GPU (report them here with `studies/bench_stability.py --from
#    OUT/records`). On an H100 machine the quick run alone took 250 s (docs/protocol.md,
#    "On a GPU"): where one command may run 600 s, `OUT 560 quick` gives a second
#    quick invocation to compare with the first.
#
# The device is `gpu-check` in a copy of benchmarks.yaml (OUT/benchmarks.yaml):
# jax and torch, accelerator gpu, no thread or CPU settings, like the homelab's
# rtx-5070-ti, whose label would misname another card in the records.
# Everything lands in OUT: log.txt, check.txt, check.json and records.tar.gz
# (few files, so that a lent machine's file limit holds).
set -uo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    echo "gpu_check: usage: gpu_check.sh OUT [SECONDS [nightly|quick]]" >&2; exit 2
fi
out=$1 budget=${2:-240} protocol=${3:-nightly}
if ! [[ $budget =~ ^[0-9]+$ ]]; then
    echo "gpu_check: SECONDS is '$budget'; expected a whole number of seconds" >&2; exit 2
fi
case $protocol in
    nightly) more=() ;;
    quick) more=(--quick) ;;
    *) echo "gpu_check: the protocol is '$protocol'; expected nightly or quick" >&2; exit 2 ;;
esac
py=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
mkdir -p "$out/records" && out=$(cd "$out" && pwd) || exit 1
cd "$repo" || exit 1
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export BENCH_CONFIG="$out/benchmarks.yaml" BENCH_DEVICE=gpu-check

log() { echo "gpu_check [$((SECONDS - start)) s]: $*" | tee -a "$out/log.txt" >&2; }

"$py" - "$repo/benchmarks.yaml" "$BENCH_CONFIG" <<'EOF' || exit 1
import sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
cfg["devices"]["gpu-check"] = {"runs_on": [], "backends": ["jax", "torch"],
                               "accelerator": "gpu", "local_only": True}
yaml.safe_dump(cfg, open(sys.argv[2], "w"), sort_keys=False)
EOF

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv 2>&1 || true
  "$py" -c 'import sys, jax, torch; print(sys.version.split()[0], "jax", jax.__version__, jax.devices(),
                                         "torch", torch.__version__, torch.cuda.is_available())' 2>&1
} | tee -a "$out/log.txt"

log "bench check"
"$py" -m bench check >"$out/check.txt" 2>&1; cat "$out/check.txt"
"$py" -m bench check --json >"$out/check.json" 2>>"$out/log.txt"

run() {  # run LABEL ARGS...: one bench run of jax and torch, records into OUT/records
    local label=$1; shift
    log "bench run $label: $*"
    "$py" -m bench run --backend jax,torch --out "$out/records" "$@" 2>&1 | tee -a "$out/log.txt" | tail -n 25
    log "bench run $label: rc ${PIPESTATUS[0]}"
}

run quick --quick
# A guess for the first: a nightly jax+torch run took 4x the quick one on the 2-core VM
# (368 s against 92); each later guess is the last one's time.
factor=1; [ "$protocol" = nightly ] && factor=4
n=0 last=$((factor * (SECONDS - start)))
# Another invocation only while one as long as the last still fits the budget.
while (( SECONDS - start + last < budget )); do
    n=$((n + 1)); t=$SECONDS; run "$protocol $n" ${more[@]+"${more[@]}"}; last=$((SECONDS - t))
done
log "$n $protocol invocations after the first"
tar -czf "$out/records.tar.gz" -C "$out" records benchmarks.yaml && rm -r "$out/records" "$out/benchmarks.yaml"
log "done"
