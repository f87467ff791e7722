#!/usr/bin/env bash
# The test command (README Quick start, .ci/run, ci.yml): set up .venv, run pytest.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k trends`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -rs "$@"
