"""The machine lock: two `bench run`s on one host never overlap.

An exclusive fcntl lock on a well-known file ($BENCH_LOCK, default
<tempdir>/keras-nightly-bench.lock), shared by every checkout and runner
service on the host. The kernel drops it when the holder exits, even on a
crash or kill, so a stale file never blocks. A second run prints one line
naming the holder and waits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Mapping

ENV = "BENCH_LOCK"


def path(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get(ENV) or Path(tempfile.gettempdir()) / "keras-nightly-bench.lock")


@contextlib.contextmanager
def held(where: Path, say: Callable[[str], None], who: str = "") -> Iterator[None]:
    """Hold the lock at `where` for the block; if another process has it, `say`
    one line and wait for it."""
    with open(where, "a+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            say(f"bench run: waiting for the machine lock {where} (held by {holder}); "
                f"another benchmark run is in progress on this host")
            fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(who or f"pid {os.getpid()}")
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            f.flush()
            fcntl.flock(f, fcntl.LOCK_UN)
