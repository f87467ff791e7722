"""Print the GitHub Actions matrix (JSON) of (device, backend) jobs from benchmarks.yaml.

Output: {"include": [{device, backend, keras_backend, runs_on, install, plugins}, ...]}
on stdout (one line, sorted keys). local_only devices are left out unless
--include-local. --devices/--backends filter (comma- or space-separated;
empty means all); unknown names are refused, naming the valid ones.
--changed-files FILE (one repository path a line, '-' for stdin) keeps only
the backends those changes can affect (pull-request benchmarks).
--github-output FILE also appends `matrix=<json>` and `count=<n>` to FILE
(the step's $GITHUB_OUTPUT), so a workflow can skip an empty matrix.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench import config as config_mod
from bench.ci.affected import affected_backends
from bench.commands.arguments import split_names
from bench.ci.matrix import build_matrix, undeclared_labels
from bench.config import ConfigError
from bench.errors import UsageError

ACTIONLINT = ".github/actionlint.yaml"


def add_arguments(parser):
    parser.add_argument("--devices", nargs="*", default=[], metavar="D",
                        help="device labels (comma- or space-separated; default: all)")
    parser.add_argument("--backends", nargs="*", default=[], metavar="B",
                        help="backend labels (comma- or space-separated; default: all)")
    parser.add_argument("--include-local", action="store_true",
                        help="also list local_only devices (the local rehearsal)")
    parser.add_argument("--changed-files", metavar="FILE", default=None,
                        help="keep only backends affected by these paths (one a line; '-' = stdin)")
    parser.add_argument("--actionlint", metavar="FILE", default=ACTIONLINT,
                        help=f"check that it declares every runner label (default {ACTIONLINT}, when present)")
    parser.add_argument("--github-output", metavar="FILE", default=None,
                        help="append matrix=<json> and count=<n> to this file ($GITHUB_OUTPUT)")


def main(args) -> int:
    cfg = config_mod.load(args.config)
    _check_labels(cfg, args.actionlint)
    backends = split_names(args.backends)
    if args.changed_files is not None:
        affected = affected_backends(cfg, _read_lines(args.changed_files))
        backends = [b for b in (backends or cfg.backends) if b in affected]
        print(f"bench matrix: backends affected by the change: {', '.join(affected) or 'none'}",
              file=sys.stderr)
        if not backends:
            return _write([], args.github_output)
    entries = build_matrix(cfg, split_names(args.devices), backends, args.include_local)
    if not entries:
        print("bench matrix: no (device, backend) pair matches the filters", file=sys.stderr)
    return _write([e.to_json() for e in entries], args.github_output)


def _check_labels(cfg, path: str) -> None:
    """A runner label missing from .github/actionlint.yaml fails ci.yml's lint:
    say so here, naming the labels, instead of in a red test later."""
    p = Path(path)
    if not p.is_file():
        if path != ACTIONLINT:
            raise UsageError(f"--actionlint {path}: no such file; expected actionlint's config")
        return  # not in a checkout (an installed package): nothing to keep in step
    missing = undeclared_labels(cfg, p.read_text(encoding="utf-8"))
    if missing:
        raise ConfigError(f"{cfg.path}: runner label(s) {', '.join(missing)} (devices.*.runs_on) are not "
                          f"declared in {path}; expected each under self-hosted-runner.labels")


def _write(include: list[dict], github_output: str | None) -> int:
    text = json.dumps({"include": include}, sort_keys=True)
    print(text)
    if github_output:
        with open(github_output, "a", encoding="utf-8") as f:
            f.write(f"matrix={text}\ncount={len(include)}\n")
    return 0


def _read_lines(path: str) -> list[str]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return text.splitlines()
