#!/usr/bin/env bash
# Refresh the README's benchmark table from the data branch.
#
#   scripts/update-readme.sh DATA_DIR README [--push]
#
# publish.yml's step: `bench report --data DATA_DIR --readme README` rewrites
# the table between the README's bench:table markers. It runs with no token
# or key in its environment (bench report imports numpy and scipy); the
# publish workflow pushes from a separate, git-only step (push-readme.sh).
# --push runs push-readme.sh README right after (local use, the rehearsal).
# BENCH_PYTHON: the Python with bench's requirements (default python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$(cd "${1:?usage: update-readme.sh DATA_DIR README [--push]}" && pwd)"
readme="$(cd "$(dirname "${2:?usage: update-readme.sh DATA_DIR README [--push]}")" && pwd)/$(basename "$2")"
push="${3:-}"
[[ -z "$push" || "$push" == "--push" ]] || { echo "update-readme: error: third argument is '$push'; expected --push or nothing" >&2; exit 2; }

(cd "$(dirname "$here")" && "${BENCH_PYTHON:-python3}" -m bench report --data "$data" --readme "$readme" >/dev/null)
[[ -z "$push" ]] || exec bash "$here/push-readme.sh" "$readme"
