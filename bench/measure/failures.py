"""Failure kinds, decided from what a benchmark child left behind. Pure functions.

Kinds (bench.records.record.ERROR_KINDS): timeout, crash, oom, install, quality,
unsupported. The child classifies its own Python exceptions
(`from_exception`); the parent classifies a child that died without a result
(`from_exit`): killed by our timeout, by a signal, or exiting non-zero.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

# Messages by which Python, XLA, PyTorch, MLX, OpenVINO and the C++ runtime say
# they ran out of memory.
_OOM = re.compile(
    r"out of memory|outofmemory|resource_exhausted|bad_alloc|cannot allocate memory"
    r"|failed to allocate|memoryerror|\[metal\] .*insufficient memory",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Failure:
    kind: str
    message: str

    def as_error(self) -> dict:
        return {"kind": self.kind, "message": self.message}


def looks_like_oom(text: str) -> bool:
    return bool(_OOM.search(text or ""))


def from_exception(exc: BaseException, stage: str) -> Failure:
    """A child's exception at `stage` ('import', 'build', 'gate', 'timing', ...)."""
    text = f"{type(exc).__name__}: {exc}".strip()
    if isinstance(exc, MemoryError) or looks_like_oom(text):
        return Failure("oom", f"{stage}: {text}")
    if stage == "import" and isinstance(exc, ImportError):
        return Failure("install", f"cannot import the backend: {text}")
    if stage == "import":
        return Failure("install", f"backend set-up failed: {text}")
    return Failure("crash", f"{stage}: {text}")


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def from_exit(returncode: int | None, timed_out: bool, timeout: float, stderr_tail: str,
              oom_killed: bool | None) -> Failure:
    """A child that left no result.

    returncode: the exit status (negative: killed by that signal; None: unknown).
    oom_killed: whether the kernel's OOM killer fired while it ran (cgroup
    counter), or None when this system cannot tell.
    """
    last = _last_line(stderr_tail)
    if timed_out:
        return Failure("timeout", f"no result within the {timeout:g} s timeout; killed")
    if returncode is not None and returncode < 0:
        sig = -returncode
        name = signal_name(sig)
        if sig == signal.SIGKILL and oom_killed is not False:
            why = "the out-of-memory killer fired" if oom_killed else "most likely the out-of-memory killer"
            return Failure("oom", f"killed by {name} ({why})" + (f"; last output: {last}" if last else ""))
        return Failure("crash", f"killed by {name}" + (f"; last output: {last}" if last else ""))
    if looks_like_oom(stderr_tail):
        return Failure("oom", f"exit status {returncode}: {_oom_line(stderr_tail)}")
    if re.search(r"^(ModuleNotFoundError|ImportError)\b", stderr_tail or "", re.MULTILINE):
        return Failure("install", f"exit status {returncode}: {last}")
    return Failure("crash", f"exit status {returncode} without a result" + (f"; last output: {last}" if last else ""))


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1][:500] if lines else ""


def _oom_line(text: str) -> str:
    hits = [ln.strip() for ln in text.splitlines() if looks_like_oom(ln)]
    return (hits[-1] if hits else _last_line(text))[:500]
