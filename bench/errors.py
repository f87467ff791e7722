"""One base class for every error a user can cause or meet.

`bench.cli.main` catches `BenchError` once and prints one line,
``bench VERB: error: <message>``, then exits with the class's `exit_code`
(README, "Exit codes"): 0 done, 1 the verb's answer is "no" (a publish
refused, `compare --fail-on slower` found a slower benchmark), 2 bad input
(a flag, benchmarks.yaml, a record, a missing file), 130 interrupted.
Each subclass lives with the stage it belongs to (ConfigError in
bench/config.py, RecordError in bench/records/record.py, ...); they keep
their old builtin bases (ValueError, RuntimeError) so existing handlers hold.
"""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_NO = 1
EXIT_BAD_INPUT = 2
EXIT_SOME_REFUSED = 3  # bench publish: the good records went in, the named rest were refused
EXIT_INTERRUPTED = 130


class BenchError(Exception):
    """An error with a one-line message naming the input, the bad value and
    the expected form; `label` and `exit_code` say how the CLI reports it."""

    label = "error"
    exit_code = EXIT_BAD_INPUT


class UsageError(BenchError, ValueError):
    """A command-line flag has a bad value (the message names the flag)."""


def read_text(path: "str | Path", error: type[BenchError] = BenchError) -> str:
    """The UTF-8 text of `path`, or `error` naming the file in one line (no
    traceback): the one way bench reads a user's file (record, config, history)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text") from None


def shown(value: object, limit: int = 80, *, as_text=repr) -> str:
    """`value` as an error message shows it (repr by default; ascii to make
    look-alikes visible), cut to `limit` characters so a hostile value cannot
    flood a log line."""
    text = as_text(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
