"""`python -m bench <verb>`: one module per verb under bench/commands/.

Each verb module has a docstring (its help), `add_arguments(parser)` and
`main(args) -> int`, and reads as its pipeline: load -> compute -> write.
Modules are imported lazily so `bench report` never pays for Keras.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from bench.config import ConfigError
from bench.records.record import RecordError

VERBS = ("run", "report", "site", "compare", "publish", "matrix", "export-gab", "import-gab", "serve")


def split_names(values) -> list[str]:
    """Names given as 'a,b' 'c' (commas and/or spaces) -> [a, b, c]; empty
    strings (an unset workflow input) vanish. Shared by --backends, --models ..."""
    return [part for v in values or () for part in v.replace(",", " ").split()]


def _module(verb: str):
    return importlib.import_module(f"bench.commands.{verb.replace('-', '_')}")


def build_parser(verbs=VERBS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=None, help="benchmarks.yaml to use (default: the repo's)")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in verbs:
        mod = _module(verb)
        doc = (mod.__doc__ or verb).strip()
        p = sub.add_parser(verb, help=doc.splitlines()[0], description=doc,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Only the chosen verb's module is imported: building every subparser
    # would import them all, so pick the verb first.
    rest = argv[2:] if argv[:1] == ["--config"] else argv
    verb = next((a for a in rest if not a.startswith("-")), None)
    verbs = (verb,) if verb in VERBS else VERBS
    args = build_parser(verbs).parse_args(argv)
    try:
        return int(_module(args.verb).main(args) or 0)
    except (ConfigError, RecordError, FileNotFoundError) as e:
        print(f"bench {args.verb}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"bench {args.verb}: interrupted", file=sys.stderr)
        return 130
