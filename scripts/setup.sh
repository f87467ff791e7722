#!/usr/bin/env bash
# Create or refresh .venv with everything the local nightly and the tests need.
# Idempotent: skips pip when requirements/ has not changed since the last run.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
stamp="$VENV/.bench-setup-stamp"
want=$(cat requirements/*.txt pyproject.toml | sha256sum | cut -c1-16)

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PYTHON --version)" >&2
  "$PYTHON" -m venv "$VENV"
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "setup: $VENV is up to date" >&2
  exit 0
fi
pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
echo "setup: installing keras-nightly, backends and tools into $VENV (about a minute)" >&2
"${pip[@]}" --upgrade pip
"${pip[@]}" -r requirements/local.txt -r requirements/test.txt
"${pip[@]}" --no-deps -r requirements/plugins.txt
# The package itself (editable): the `bench` command, and `python -m bench` from any folder.
"${pip[@]}" --no-deps -e .
"$VENV/bin/python" - <<'PY' >&2
import importlib.metadata as m
for name in ("keras-nightly", "jax", "torch", "mlx", "openvino", "keras-mlx", "keras-openvino"):
    try:
        print(f"setup:   {name} {m.version(name)}")
    except m.PackageNotFoundError:
        print(f"setup:   {name} not installed")
PY
echo "$want" > "$stamp"
