#!/bin/sh
# A self-hosted runner's prerequisites, checked up front with one clear line.
#
#   sh scripts/check-runner.sh "$GITHUB_ENV"
#
# A benchmark job's first step after job-paths.sh (nightly.yml, pr-bench.yml,
# keras-ref.yml). actions/setup-python is not used on self-hosted runners: on
# macOS it installs only into /Users/runner/hostedtoolcache and it does not
# support Linux distributions other than Ubuntu. Instead the runner brings its
# own Python (README, Runner setup) and this finds it: BENCH_PYTHON if set,
# else the first of python3.13, python3.12, python3.11, python3 (also under
# /opt/homebrew/bin and /usr/local/bin, where macOS installs them) that is
# Python >= 3.11 with the venv and ensurepip modules (Debian ships them apart,
# in python3-venv: without ensurepip `python -m venv` fails). Appends
# BENCH_PYTHON=<path> to the file named by the argument. Also needs git and
# bash (any bash from 3.2 on: the step scripts avoid bash 4 features).
#
# Warns (::warning, the job goes on) when the runner's global git
# configuration -- read by actions/checkout before job-paths.sh moves HOME --
# sets a hook or a command git runs (core.hooksPath, core.fsmonitor,
# init.templateDir): a job could have planted it for the next job's checkout.
# The fix is on the runner: GIT_CONFIG_GLOBAL=/dev/null in its .env
# (docs/homelab.md). BENCH_RUNNER_HOME (job-paths.sh) is the real home.
#
# On failure: exit 1, one `::error` line naming what is missing, and the
# install log (BENCH_INSTALL_LOG) says `ok: false`, failed_step "prerequisites",
# so the Benchmark step still writes a record whose results are failed/install
# (scripts/run-bench.sh -> `bench failure-record --kind install`). POSIX sh.
set -eu
env_file="${1:?usage: check-runner.sh GITHUB_ENV_FILE}"

fail() {
  echo "::error title=runner prerequisites::$*"
  echo "check-runner: $*" >&2
  if [ -n "${BENCH_INSTALL_LOG:-}" ]; then
    mkdir -p "$(dirname "$BENCH_INSTALL_LOG")"
    msg=$(printf '%s' "$*" | sed 's/\\/\\\\/g; s/"/\\"/g')
    printf '{"error": "%s", "failed_step": "prerequisites", "ok": false}\n' "$msg" > "$BENCH_INSTALL_LOG"
  fi
  exit 1
}

# usable PYTHON: prints nothing, succeeds when PYTHON is >= 3.11 with venv and ensurepip.
usable() {
  "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

found=""
if [ -n "${BENCH_PYTHON:-}" ]; then
  usable "$BENCH_PYTHON" || fail "BENCH_PYTHON is '$BENCH_PYTHON', which is not a Python >= 3.11 with the venv and ensurepip modules; install one (Debian: python3-venv) (README, Runner setup) or unset BENCH_PYTHON"
  found="$BENCH_PYTHON"
else
  # CHECK_RUNNER_PYTHONS replaces the list (tests; a runner with its Python elsewhere).
  # shellcheck disable=SC2086  # a space-separated list, split on purpose
  for name in ${CHECK_RUNNER_PYTHONS:-python3.13 python3.12 python3.11 python3 /opt/homebrew/bin/python3 /usr/local/bin/python3}; do
    path=$(command -v "$name" 2>/dev/null || true)
    if [ -n "$path" ] && usable "$path"; then
      found="$path"
      break
    fi
  done
  [ -n "$found" ] || fail "no Python >= 3.11 with the venv and ensurepip modules on this runner (PATH=$PATH; found: $(command -v python3 2>/dev/null || echo no python3) $(python3 -V 2>&1 || true)); install one (Debian: python3-venv; README, Runner setup)"
fi
command -v git >/dev/null 2>&1 || fail "git is not on PATH; install git (README, Runner setup)"
command -v bash >/dev/null 2>&1 || fail "bash is not on PATH; any bash from 3.2 on will do (README, Runner setup)"
# The global git configuration the job's checkout read: GIT_CONFIG_GLOBAL when
# the runner sets it (/dev/null: none), else the real home's two files.
git_config_warning() {
  [ -f "$1" ] || return 0
  keys=$(git config --file "$1" --get-regexp '^(core\.hookspath|core\.fsmonitor|init\.templatedir)$' 2>/dev/null | tr '\n' ';' || true)
  [ -z "$keys" ] || echo "::warning title=runner git config::$1 sets $keys a job can plant hooks there for the next job's checkout; set GIT_CONFIG_GLOBAL=/dev/null in the runner's .env (docs/homelab.md)"
}
real_home="${BENCH_RUNNER_HOME:-$HOME}"
if [ -n "${GIT_CONFIG_GLOBAL:-}" ]; then
  git_config_warning "$GIT_CONFIG_GLOBAL"
else
  git_config_warning "$real_home/.gitconfig"
  git_config_warning "$real_home/.config/git/config"
fi
echo "BENCH_PYTHON=$found" >> "$env_file"
echo "check-runner: $("$found" -V 2>&1) at $found; $(git --version); bash $(bash -c 'echo $BASH_VERSION')"
