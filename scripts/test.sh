#!/usr/bin/env bash
# The test command (README Quick start, .ci/run, ci.yml): set up .venv, run pytest.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k trends`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The browser tests need a Chromium: Debian's (.ci/run installs it), else Playwright's own.
if [ ! -x /usr/bin/chromium ] && [ -z "${BENCH_CHROMIUM:-}" ]; then
  .venv/bin/python -m playwright install chromium >&2 ||
    echo "test: could not install Playwright's Chromium; the browser tests will be skipped" >&2
fi
exec .venv/bin/python -m pytest -q -rs "$@"
