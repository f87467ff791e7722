#!/usr/bin/env bash
# Install nightly Keras and one backend into a fresh virtual environment, and
# write a JSON log of what was asked for and what got installed (versions).
#
# A benchmark job step (nightly.yml, pr-bench.yml); runs the same locally.
# All inputs come from the environment (the matrix entry of `bench matrix`):
#   BENCH_INSTALL_LOG    where to write the log (required)
#   BENCH_VENV           the virtual environment to create (default .bench-venv)
#   BENCH_PYTHON         the Python that creates it (default python3)
#   BENCH_INSTALL        the backend's pip arguments, shell-quoted (matrix.install)
#   BENCH_PLUGINS        plugin requirements, installed with --no-deps so pip keeps
#                        keras-nightly instead of the stable keras they declare
#   BENCH_KERAS_VERSION  a keras-nightly version (default: the newest)
#   BENCH_KERAS_REF      a keras-team/keras commit (full SHA) to install instead of nightly
#   BENCH_SKIP_INSTALL=1 create and install nothing: log what BENCH_VENV already
#                        has (the local rehearsal, scripts/local-nightly.sh)
#
# Exit status: 0 when everything installed; 1 when a step failed (the log says
# which -- venv, harness (bench's own requirements), backend, keras, plugins -- with
# the last lines of its output; `bench run --install-log`, or when bench itself
# is missing `bench failure-record --kind install`, then records every benchmark as
# failed/install); 2 for bad inputs. bash 3.2 (macOS) safe: no mapfile, and
# every possibly empty array is expanded as ${a[@]+"${a[@]}"}.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
log="${BENCH_INSTALL_LOG:?set BENCH_INSTALL_LOG to the install log path}"
venv="${BENCH_VENV:-.bench-venv}"
python="${BENCH_PYTHON:-python3}"
keras_version="${BENCH_KERAS_VERSION:-}"
keras_ref="${BENCH_KERAS_REF:-}"
# Where a git ref comes from: keras-team/keras, or a mirror/clone (bench bisect --keras-repo).
keras_repo="${BENCH_KERAS_REPO:-https://github.com/keras-team/keras.git}"

die() { echo "install-backend: error: $*" >&2; exit 2; }

# Inputs can come from a workflow_dispatch form: accept only their plain forms.
if [[ -n "$keras_version" && ! "$keras_version" =~ ^[0-9][0-9A-Za-z.+!-]*$ ]]; then
  die "BENCH_KERAS_VERSION is '$keras_version'; expected a version such as 3.14.0.dev2026120203"
fi
# A full commit SHA only: a branch, tag or refs/pull/N/head resolves when the job
# runs, hours after the dispatch, to whatever was pushed there meanwhile.
if [[ -n "$keras_ref" && ! "$keras_ref" =~ ^[0-9a-f]{40}$ ]]; then
  die "BENCH_KERAS_REF is '$keras_ref'; expected a full 40-hex-digit keras-team/keras commit SHA (a branch, tag or pull ref moves)"
fi
if [[ ! "$keras_repo" =~ ^(https://|file:///)[A-Za-z0-9._/~-]+$ ]]; then
  die "BENCH_KERAS_REPO is '$keras_repo'; expected an https:// or file:/// git URL"
fi
if [[ -n "$keras_version" && -n "$keras_ref" ]]; then
  die "BENCH_KERAS_VERSION ('$keras_version') and BENCH_KERAS_REF ('$keras_ref') both set; expected at most one"
fi

# keras_source (docs/DESIGN.md 'Points'): only "nightly", the newest nightly, makes points.
if [[ -n "$keras_ref" ]]; then
  keras_spec="keras @ git+$keras_repo@$keras_ref"
  keras_source="git"
elif [[ -n "$keras_version" ]]; then
  keras_spec="keras-nightly==$keras_version"
  keras_source="pinned"
else
  keras_spec="keras-nightly"
  keras_source="nightly"
fi

# lines VAR TEXT: the array VAR gets one element per line of TEXT. bash 3.2
# (macOS) has no mapfile; the text comes from a command substitution first so
# that a failing command fails the script (set -e) instead of giving no lines.
lines() {
  local line
  eval "$1=()"
  while IFS= read -r line; do
    [[ -n "$line" ]] && eval "$1+=(\"\$line\")"
  done <<< "$2"
  return 0
}
# Shell-quoted lists (bench/ci/matrix.py) back into one argument per line.
split() { "$python" -c 'import shlex, sys; sys.stdout.write("".join(a + "\n" for a in shlex.split(sys.argv[1])))' "$1"; }
backend_args=(); plugin_args=(); harness_args=()
text="$(split "${BENCH_INSTALL:-}")"; lines backend_args "$text"
text="$(split "${BENCH_PLUGINS:-}")"; lines plugin_args "$text"
# bench's own runtime requirements, plus the harness extra without keras.
text="$("$python" - "$repo/pyproject.toml" <<'EOF'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
extra = project.get("optional-dependencies", {}).get("harness", [])
for req in project["dependencies"] + [r for r in extra if not r.startswith("keras")]:
    print(req)
EOF
)"
lines harness_args "$text"

mkdir -p "$(dirname "$log")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
failed_step=""

# step NAME ARGS...: run one pip step, its output to the job log and to a file
# whose tail goes into the install log when it fails.
step() {
  local name="$1"; shift
  echo "::group::install-backend: $name: $*"
  if "$venv/bin/python" -m pip install --disable-pip-version-check "$@" 2>&1 | tee "$work/$name.out"; then
    echo "::endgroup::"
    return 0
  fi
  echo "::endgroup::"
  echo "::error title=install failed::step '$name' failed: pip install $*"
  failed_step="$name"
  return 1
}

if [[ "${BENCH_SKIP_INSTALL:-}" == "1" ]]; then
  [[ -x "$venv/bin/python" ]] || die "BENCH_SKIP_INSTALL=1 but BENCH_VENV '$venv' has no bin/python; expected an existing virtual environment"
  echo "install-backend: BENCH_SKIP_INSTALL=1: recording what $venv has"
elif ! "$python" -m venv --clear "$venv" > "$work/venv.out" 2>&1; then
  # No environment, no bench: run-bench.sh writes the install-failure record.
  echo "::error title=install failed::cannot create a virtual environment at '$venv' with $python"
  failed_step="venv"
else
  # Without bench's own requirements bench cannot run: run-bench.sh then
  # writes the install-failure record (`bench failure-record`) instead.
  # The backend and Keras in pip calls of their own: a backend's install may
  # name its own index (--index-url replaces PyPI for the whole call, and
  # keras-nightly is only on PyPI). The backend first, so that Keras's files
  # win over a stable keras that a backend may pull in.
  step harness ${harness_args[@]+"${harness_args[@]}"} \
    && { [[ ${#backend_args[@]} -eq 0 ]] || step backend "${backend_args[@]}"; } \
    && step keras "$keras_spec" \
    && { [[ ${#plugin_args[@]} -eq 0 ]] || step plugins --no-deps "${plugin_args[@]}"; } \
    || true
fi

# The log: sorted keys, written atomically (rename) so a reader never sees half.
"$python" - "$venv/bin/python" "$log" "$work" "$started" "$failed_step" "$keras_spec" "$keras_source" \
  "${BENCH_SKIP_INSTALL:-0}" "${#backend_args[@]}" ${backend_args[@]+"${backend_args[@]}"} \
  ${plugin_args[@]+"${plugin_args[@]}"} <<'EOF'
import json, os, subprocess, sys, tempfile
from datetime import datetime, timezone

# A Keras installed from git: the commit pip resolved the ref to (PEP 610 direct_url.json).
COMMIT = """import json, importlib.metadata as m
try:
    print(json.loads(m.distribution("keras").read_text("direct_url.json") or "{}").get("vcs_info", {}).get("commit_id", ""))
except Exception:
    print("")
"""

venv_python, log, work, started, failed_step, keras_spec, keras_source, skipped, n = sys.argv[1:10]
rest = sys.argv[10:]
backend_args, plugin_args = rest[:int(n)], rest[int(n):]
def ask(*args):
    """The venv python's answer, or '' when there is no venv (its creation failed)."""
    if not os.path.exists(venv_python):
        return ""
    return subprocess.run([venv_python, *args], capture_output=True, text=True).stdout.strip()

listing = ask("-m", "pip", "list", "--format", "json", "--disable-pip-version-check")
version = ask("-c", "import platform; print(platform.python_version())")
packages = {p["name"].lower(): p["version"] for p in json.loads(listing or "[]")}
commit = ask("-c", COMMIT) if keras_source == "git" else ""
error = None
if failed_step:
    with open(os.path.join(work, failed_step + ".out"), errors="replace") as f:
        tail = f.read().splitlines()[-20:]
    what = "python -m venv" if failed_step == "venv" else f"pip install ({failed_step})"
    error = f"{what} failed:\n" + "\n".join(tail)
data = {
    "ok": not failed_step,
    "failed_step": failed_step or None,
    "error": error,
    "keras": keras_spec,
    "keras_source": keras_source,
    "keras_commit": commit or None,
    "keras_version": packages.get("keras-nightly") or packages.get("keras"),
    "requested": backend_args,
    "plugins": plugin_args,
    "skipped_install": skipped == "1",
    "python": version or None,
    "packages": dict(sorted(packages.items())),
    "started_at": started,
    "finished_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
}
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(log)), suffix=".tmp")
with os.fdopen(fd, "w") as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
os.replace(tmp, log)
print(f"install-backend: wrote {log} (ok={data['ok']}, keras {data['keras_version']})", file=sys.stderr)
EOF

[[ -z "$failed_step" ]]
