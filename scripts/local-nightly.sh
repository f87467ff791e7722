#!/usr/bin/env bash
# The main job, on this machine: a local nightly across the backends installed
# here, published into a local data branch, then the table and the dashboard.
#
#   .venv/                   keras-nightly + jax, torch, mlx (CPU), openvino
#   .local/runs/<stamp>/     this run's records (what a nightly job uploads)
#   .local/data.git          a bare git repo: the local stand-in for the remote
#   .local/data/             a checkout of its data branch (what `--data` reads)
#   .local/site/             the dashboard, ready for GitHub Pages
#
# Options go to `bench run`, e.g. `bash scripts/local-nightly.sh --backend jax`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
PY=.venv/bin/python
BRANCH=gh-pages
stamp=$(date -u +%Y%m%dT%H%M%SZ)
runs=.local/runs/$stamp
mkdir -p "$runs"

echo "== bench run (device local-cpu, quick) -> $runs" >&2
"$PY" -m bench run --device local-cpu --quick --out "$runs" "$@"

echo "== bench publish -> .local/data.git ($BRANCH)" >&2
[ -d .local/data.git ] || git init --quiet --bare .local/data.git
"$PY" -m bench publish --repo .local/data.git --branch "$BRANCH" "$runs"/*.json

if [ -d .local/data/.git ]; then
  git -C .local/data fetch --quiet origin "$BRANCH"
  git -C .local/data checkout --quiet --detach FETCH_HEAD
else
  git clone --quiet --branch "$BRANCH" .local/data.git .local/data
fi

echo "== bench site -> .local/site" >&2
"$PY" -m bench site --data .local/data --out .local/site >&2

echo "== bench report (.local/data)" >&2
"$PY" -m bench report --data .local/data --format markdown
cat >&2 <<MSG

Dashboard: $(pwd)/.local/site/index.html   (open it in a browser, straight from disk)
  or serve it:  .venv/bin/bench serve .local/site   (then open http://127.0.0.1:8000/)
MSG
