#!/usr/bin/env bash
# Install the device's reference build -- a frozen keras-nightly version
# (benchmarks.yaml devices.<d>.reference, the matrix entry's `reference`) --
# with the same backend into a virtual environment of its own, for
# `bench run --reference` (scripts/run-bench.sh passes it on).
#
# Same backend means the same versions: everything the nightly's venv
# (BENCH_VENV, made by install-backend.sh just before) holds, as `pip freeze`
# lists it less Keras itself (keras, keras-nightly) and less what pip cannot
# take as a constraint (editable installs, direct URLs), is written to
# <log>.constraints.txt beside the log and passed as PIP_CONSTRAINT: the
# reference gets the nightly's jax, torch, numpy ... or fails to install
# (then the nightly runs alone, as below). With no nightly venv there is
# nothing to take: it says so and installs unconstrained. `bench run
# --reference` still refuses a ratio whose sides report different backend
# or numpy versions (bench/measure/reference.py, mismatch).
#
# A nightly.yml job step, after install-backend.sh; scripts/local-nightly.sh
# runs it too when BENCH_REFERENCE is set. Never in an A/B job (pr-bench.yml,
# keras-ref.yml, bisect.yml): those compare two builds already.
# Inputs from the environment:
#   BENCH_REFERENCE              the keras-nightly version; empty: nothing to do
#   BENCH_REFERENCE_VENV         its virtual environment (default .bench-reference-venv;
#                                never the nightly's BENCH_VENV)
#   BENCH_REFERENCE_INSTALL_LOG  its install log (JSON, as install-backend.sh writes it),
#                                never the nightly's; pip's output goes beside it, as
#                                the same name ending in .out instead of .json
#   BENCH_PYTHON, BENCH_INSTALL, BENCH_PLUGINS  as for install-backend.sh (the same backend)
#
# Exit status: 0 when the reference is installed, when there is none, and when
# its install failed -- then one line says so (pip's last lines follow it,
# folded), the half-made environment is removed (so run-bench.sh runs the
# nightly alone: its own figures never depend on the reference); 2 for bad
# inputs, as install-backend.sh. bash 3.2 safe.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
reference="${BENCH_REFERENCE:-}"

die() { echo "install-reference: error: $*" >&2; exit 2; }

if [[ -z "$reference" ]]; then
  echo "install-reference: this device has no reference build; the nightly runs alone"
  exit 0
fi
# From benchmarks.yaml (bench/config.py checks it too): accept only a plain version.
if [[ ! "$reference" =~ ^[0-9][0-9A-Za-z.+!-]*$ ]]; then
  die "BENCH_REFERENCE is '$reference'; expected a keras-nightly version such as 3.16.0.dev2026102704"
fi
venv="${BENCH_REFERENCE_VENV:-.bench-reference-venv}"
log="${BENCH_REFERENCE_INSTALL_LOG:-}"
[[ -n "$log" ]] || die "BENCH_REFERENCE_INSTALL_LOG is not set; expected the reference's install log path"
if [[ "$venv" == "${BENCH_VENV:-.bench-venv}" ]]; then
  die "BENCH_REFERENCE_VENV is '$venv', the nightly's BENCH_VENV; expected a virtual environment of its own"
fi
if [[ -n "${BENCH_INSTALL_LOG:-}" && "$log" == "$BENCH_INSTALL_LOG" ]]; then
  die "BENCH_REFERENCE_INSTALL_LOG is '$log', the nightly's BENCH_INSTALL_LOG; expected a log of its own"
fi
output="${log%.json}.out"
constraints="${log%.json}.constraints.txt"
tail_lines=30
mkdir -p "$(dirname "$log")"

nightly_python="${BENCH_VENV:-.bench-venv}/bin/python"
if [[ -x "$nightly_python" ]] && "$nightly_python" -m pip freeze --disable-pip-version-check --exclude-editable \
     > "$constraints.all" 2>/dev/null; then
  # Less Keras (the one thing that differs), editable installs and direct URLs.
  grep -v -i -E '^(keras|keras-nightly|keras_nightly)([=<>!~ @;]|$)|^-e |^#| @ ' "$constraints.all" > "$constraints" || true
  rm -f "$constraints.all"
  export PIP_CONSTRAINT="$PWD/$constraints"
  [[ "$constraints" == /* ]] && export PIP_CONSTRAINT="$constraints"
  echo "install-reference: constrained to the nightly's $(wc -l < "$constraints" | tr -d ' ') packages ($constraints)"
else
  rm -f "$constraints.all"
  echo "install-reference: no nightly venv at ${BENCH_VENV:-.bench-venv} to take versions from; installing unconstrained"
fi

# The pinned version only: no git ref, and a real install (not the rehearsal's skip).
if BENCH_VENV="$venv" BENCH_INSTALL_LOG="$log" BENCH_KERAS_VERSION="$reference" BENCH_KERAS_REF="" \
     BENCH_SKIP_INSTALL="" bash "$here/install-backend.sh" > "$output" 2>&1; then
  echo "install-reference: the reference keras-nightly==$reference is installed in $venv"
  exit 0
fi
rm -rf "$venv"
echo "::warning title=reference not installed::install-reference: the reference keras-nightly==$reference did not install (see $log and $output); the nightly runs alone"
# The runner's files go at the end of the job and the artifact holds records
# only, so the job log keeps the reason: pip's last lines, folded on GitHub.
echo "::group::install-reference: the last $tail_lines lines of $output"
tail -n "$tail_lines" "$output"
echo "::endgroup::"
exit 0
