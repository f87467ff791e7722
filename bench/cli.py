"""`python -m bench <verb>`: one module per verb under bench/commands/.

Each verb module has a docstring (its help), `add_arguments(parser)` and
`main(args) -> int`, and reads as its pipeline: load -> compute -> write.
Modules are imported lazily so `bench report` never pays for Keras.
"""

from __future__ import annotations

import argparse
import importlib
import os
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


# Verbs that read the data and print: run as the program (argv None), they
# leave without freeing what they built, which at ten years x 100 series is
# millions of small objects and a tenth of the command's CPU, spent on nothing.
READERS = frozenset({"report", "site", "show"})


def main(argv: list[str] | None = None) -> int:
    program, argv = argv is None, sys.argv[1:] if argv is None else argv
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
        code = int(_module(args.verb).main(args) or 0)
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
    if program and args.verb in READERS and sys.getprofile() is None and sys.gettrace() is None:
        _leave(code)  # under a profiler or a tracer (coverage), it is left to print its report
    return code


def _leave(code: int) -> None:
    """Exit now with `code`, its output flushed, skipping the interpreter's
    teardown (atexit handlers and freeing every object): for READERS only,
    which hold no open work at this point (their files are written atomically)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe (`bench show ... | head`): nothing left to say
        pass
    os._exit(code)
