#!/usr/bin/env bash
# Where a benchmark job keeps its environment, record and install log, as
# NAME=value lines for $GITHUB_ENV (nightly.yml, pr-bench.yml). Below
# RUNNER_TEMP, which the runner empties for every job, so each job installs
# into a fresh virtual environment even on a long-lived self-hosted runner.
set -euo pipefail
base="${RUNNER_TEMP:?set RUNNER_TEMP (the runner sets it)}"
echo "BENCH_VENV=$base/bench-venv"
echo "BENCH_OUT=$base/bench-out/records"
echo "BENCH_INSTALL_LOG=$base/bench-out/install.json"
