"""`python -m bench <verb>`: one module per verb under bench/commands/.

Each verb module has a docstring (its help), `add_arguments(parser)` and
`main(args) -> int`, and reads as its pipeline: load -> compute -> write.
Modules are imported lazily so `bench report` never pays for Keras.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from bench import __version__
from bench.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, BenchError

VERBS = ("run", "report", "site", "compare", "publish", "matrix", "export-gab", "import-gab", "serve",
         "show", "check", "bisect", "alert", "night", "job-summary", "failure-record", "pr-info", "comment",
         "confirm", "summary", "triage")


CONFIG_HELP = ("benchmarks.yaml to use, before or after the verb (default: $BENCH_CONFIG, "
               "else ./benchmarks.yaml, else the copy inside the package)")


def _add_config(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--config", default=default, metavar="FILE", help=CONFIG_HELP)


def _module(verb: str):
    return importlib.import_module(f"bench.commands.{verb.replace('-', '_')}")


def build_parser(verbs=VERBS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_config(parser, None)
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in verbs:
        mod = _module(verb)
        doc = (mod.__doc__ or verb).strip()
        p = sub.add_parser(verb, help=doc.splitlines()[0], description=doc,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        _add_config(p, argparse.SUPPRESS)  # after the verb it overrides one given before
    return parser


def _verb(argv: list[str]) -> str | None:
    """The first word that is neither a flag nor --config's value."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--config":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Only the chosen verb's module is imported: building every subparser
    # would import them all, so pick the verb first.
    verb = _verb(argv)
    if verb is None and "--version" in argv:
        print(f"bench {__version__}")
        return 0
    verbs = (verb,) if verb in VERBS else VERBS
    try:
        args = build_parser(verbs).parse_args(argv)
    except SystemExit as e:  # --help, --version, a bad flag (argparse printed it): 0 or 2
        return int(e.code or 0)
    # The one place an error becomes an exit code (bench/errors.py, README "Exit codes").
    try:
        return int(_module(args.verb).main(args) or 0)
    except BenchError as e:
        print(f"bench {args.verb}: {e.label}: {e}", file=sys.stderr)
        return e.exit_code
    except FileNotFoundError as e:  # ours carry their message; the OS's name the file
        text = f"{e.filename}: no such file or folder; expected an existing path" if e.filename else e
        print(f"bench {args.verb}: error: {text}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"bench {args.verb}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
