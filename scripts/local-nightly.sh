#!/usr/bin/env bash
# The main job, on this machine: a local nightly across the backends installed
# here, published into a local data branch, then the table and the dashboard.
#
#   .venv/                   keras-nightly + jax, torch, mlx (CPU), openvino
#   .local/runs/<stamp>/     this run's records (what a nightly job uploads)
#   .local/data.git          a bare git repo: the local stand-in for the remote
#   .local/data/             a checkout of its data branch (what `--data` reads)
#   .local/site/             the dashboard, ready for GitHub Pages
#   .local/reference-venv/   with BENCH_REFERENCE only (below)
#
# Options go to `bench run`, e.g. `bash scripts/local-nightly.sh --backend jax`.
# BENCH_REFERENCE=<keras-nightly version> also installs that frozen build with
# the same backends into .local/reference-venv (scripts/install-reference.sh;
# its log is .local/install-reference.json) and runs it beside the nightly,
# `bench run --reference`; when it fails to install, the nightly runs alone.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
PY=.venv/bin/python
BRANCH=gh-pages
stamp=$(date -u +%Y%m%dT%H%M%SZ)
runs=.local/runs/$stamp
mkdir -p "$runs"

reference=()
if [ -n "${BENCH_REFERENCE:-}" ]; then
  echo "== reference keras-nightly==$BENCH_REFERENCE -> .local/reference-venv" >&2
  BENCH_REFERENCE_VENV="$PWD/.local/reference-venv" BENCH_REFERENCE_INSTALL_LOG=.local/install-reference.json \
    BENCH_INSTALL="-r requirements/local.txt" BENCH_PLUGINS="-r requirements/plugins.txt" \
    bash scripts/install-reference.sh >&2
  [ -x .local/reference-venv/bin/python ] && reference=(--reference "$PWD/.local/reference-venv/bin/python")
fi

echo "== bench run (device local-cpu, quick) -> $runs" >&2
# the local data branch's records give each series its stored steps per call (workers v13)
stored=()
[ -d .local/data ] && stored=(--steps-from .local/data)
"$PY" -m bench run --device local-cpu --quick --out "$runs" ${stored[@]+"${stored[@]}"} ${reference[@]+"${reference[@]}"} "$@"

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
