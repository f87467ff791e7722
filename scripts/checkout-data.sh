#!/usr/bin/env bash
# A fresh, shallow, partial and sparse checkout of the data branch: what `--data DIR` reads.
#
#   scripts/checkout-data.sh DEST
#
# publish.yml (report, site) and pr-comment.yml (the baseline of `bench
# compare`). Inputs: DATA_REPO, DATA_BRANCH (as publish-records.sh), GH_TOKEN
# for a private repository; DATA_MONTHS (default 2: the baseline of `bench
# compare` is the last 7 nights) newest months of runs/ are checked out besides
# summary/. A data branch that does not exist yet (before the
# first nightly) gives an empty DEST and a notice: no history, not an error.
# Only `git ls-remote --exit-code`'s 2 means that; any other failure (128: the
# repository is unreachable or refuses the credentials) fails the step, so a
# network blip never deploys an empty dashboard or an empty README table.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:?usage: checkout-data.sh DEST}"
repo="${DATA_REPO:-https://github.com/${GITHUB_REPOSITORY:?set DATA_REPO or GITHUB_REPOSITORY}.git}"
branch="${DATA_BRANCH:-gh-pages}"
# shellcheck source=scripts/git-auth.sh
source "$here/git-auth.sh"

rm -rf "$dest"
rc=0
git ls-remote --exit-code --heads "$repo" "$branch" >/dev/null || rc=$?
if [[ "$rc" -ne 0 && "$rc" -ne 2 ]]; then
  echo "::error title=data branch unreachable::git ls-remote $branch exited $rc; the data repository is unreachable or refused access"
  echo "checkout-data: error: cannot read the data repository (git ls-remote exit $rc); expected it to answer or to lack '$branch' (exit 2)" >&2
  exit 1
fi
if [[ "$rc" -eq 0 ]]; then
  depth=()
  [[ "$repo" == *://* ]] && depth=(--depth 1 --filter=blob:none)  # git ignores both for a local path, noisily
  # Partial and sparse (docs/scale.md): the trees, then the blobs of the
  # summary and of the newest DATA_MONTHS months of runs/ only, not every
  # record (91,000 files at ten years x 100 series). The readers read the
  # summary; months left out are trusted as it covers them (git's sparse-checkout is on).
  git clone --quiet ${depth[@]+"${depth[@]}"} --no-checkout --single-branch --branch "$branch" "$repo" "$dest"
  mapfile -t months < <(git -C "$dest" ls-tree -d --name-only HEAD runs/ | while read -r year; do
                          git -C "$dest" ls-tree -d --name-only HEAD "$year/"; done | sort | tail -n "${DATA_MONTHS:-2}")
  # Sparse only where a summary covers the months left out: a branch without
  # summary/ (written before it existed) or without runs/YYYY/MM is checked out
  # whole, or its readers would see two months as the whole history.
  if ! git -C "$dest" cat-file -e HEAD:summary/coverage.json 2>/dev/null; then
    echo "::notice title=no summary on the data branch::a full checkout; run 'bench summary --data DIR' on it once and push summary/ (docs/scale.md)"
    months=()
  fi
  if [[ ${#months[@]} -gt 0 ]]; then
    git -C "$dest" sparse-checkout set summary "${months[@]}"
  fi
  git -C "$dest" checkout --quiet "$branch"
  if [[ ${#months[@]} -gt 0 ]]; then
    what="summary/ and the newest ${#months[@]} month(s) of runs/"
  else
    what="all of it"
  fi
  echo "checkout-data: $branch at $(git -C "$dest" rev-parse --short HEAD) in $dest ($what)" >&2
else
  mkdir -p "$dest"
  echo "checkout-data: no branch '$branch' in the data repository yet; empty history in $dest" >&2
fi
