#!/bin/sh
# A clean start for a job on a self-hosted runner: where it keeps its
# environment, record and install log (and those of the device's reference
# build, scripts/install-reference.sh, which only nightly.yml installs; and the
# data branch's records that give each series its stored steps per call, which
# only nightly.yml checks out), and a
# stand-in home for everything a tool would otherwise read from or leave in the
# runner user's real home.
# NAME=value lines for $GITHUB_ENV (nightly.yml, pr-bench.yml, keras-ref.yml):
#
#   sh scripts/job-paths.sh >> "$GITHUB_ENV"
#
# All below RUNNER_TEMP, which the runner empties for every job: HOME, the XDG
# folders, KERAS_HOME, the pip cache and the matplotlib/torch/HF caches start
# empty. pip reads no configuration file (PIP_CONFIG_FILE=/dev/null: pip's
# documented "load no config") and Python no user site-packages
# (PYTHONNOUSERSITE=1), so a pip.conf or a .pth file that an earlier job
# planted in the real home is never read. BENCH_RUNNER_HOME keeps the real
# home for check-runner.sh's git-config warning. POSIX sh (macOS bash 3.2, dash).
set -eu
base="${RUNNER_TEMP:?set RUNNER_TEMP (the runner sets it)}"
home="$base/home"
for d in "$home" "$home/.cache" "$home/.config" "$home/.local/share" "$home/.local/state" "$base/bench-out"; do
  mkdir -p "$d"
done
cat <<LINES
BENCH_RUNNER_HOME=${HOME:-}
BENCH_VENV=$base/bench-venv
BENCH_OUT=$base/bench-out/records
BENCH_INSTALL_LOG=$base/bench-out/install.json
BENCH_REFERENCE_VENV=$base/bench-reference-venv
BENCH_REFERENCE_INSTALL_LOG=$base/bench-out/install-reference.json
BENCH_STEPS_FROM=$base/bench-data
HOME=$home
XDG_CACHE_HOME=$home/.cache
XDG_CONFIG_HOME=$home/.config
XDG_DATA_HOME=$home/.local/share
XDG_STATE_HOME=$home/.local/state
KERAS_HOME=$home/.keras
PIP_CACHE_DIR=$home/.cache/pip
PIP_CONFIG_FILE=/dev/null
PIP_DISABLE_PIP_VERSION_CHECK=1
PYTHONNOUSERSITE=1
PYTHONUSERBASE=$home/.local
MPLCONFIGDIR=$home/.config/matplotlib
TORCH_HOME=$home/.cache/torch
HF_HOME=$home/.cache/huggingface
LINES
