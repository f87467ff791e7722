"""The Keras git history a bisect walks: open (or clone) the repository, list
the commits between two, and find the commit a nightly was built from.

Every git failure becomes one BisectError line naming the repository or the
commit; no traceback. Git runs with a timeout and without a terminal prompt
(an unreachable URL must fail, not ask for a password).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import datetime
from pathlib import Path

from bench.compare.bisect import BisectError

GIT_TIMEOUT = 600  # seconds; a full Keras clone takes about a minute
_ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}


def git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, env=_ENV)
    except subprocess.TimeoutExpired:
        raise BisectError(f"git {args[0]} in {repo} took more than {GIT_TIMEOUT}s") from None
    if done.returncode != 0:
        raise BisectError(f"git {' '.join(args[:2])} in {repo}: {_last_line(done.stderr)}")
    return done.stdout


def open_repo(path_or_url: str, cache: Path) -> Path:
    """A local repository as is; a URL cloned (bare, no blobs) once into
    `cache`, fetched again when it is there. Unreachable -> one line."""
    local = Path(path_or_url)
    if local.exists():
        try:
            git(local, "rev-parse", "--git-dir")
        except BisectError:
            raise BisectError(f"--keras-repo {path_or_url}: not a git repository; "
                              "expected a Keras checkout or a URL") from None
        return local
    dest = cache / hashlib.sha256(path_or_url.encode()).hexdigest()[:16]
    cmd = (["git", "-C", str(dest), "fetch", "--quiet", "origin"] if dest.exists() else
           ["git", "clone", "--quiet", "--bare", "--filter=blob:none", path_or_url, str(dest)])
    cache.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=GIT_TIMEOUT, env=_ENV)
    except subprocess.TimeoutExpired:
        done = None
    if done is None or done.returncode != 0:
        why = _last_line(done.stderr) if done is not None else f"no answer in {GIT_TIMEOUT}s"
        raise BisectError(f"--keras-repo {path_or_url} cannot be reached: {why}; "
                          "expected a reachable git URL or a local checkout")
    return dest


def resolve(repo: Path, rev: str) -> str:
    """The full SHA of `rev`, or one line saying the repository lacks it."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except BisectError:
        raise BisectError(f"commit {rev!r} is not in {repo}; expected a commit of the Keras history") from None


def commits_between(repo: Path, good: str, bad: str) -> list[str]:
    """Commits after good up to bad, oldest first, along bad's first parents
    (the default branch's own history: each a state a nightly could be)."""
    out = git(repo, "rev-list", "--reverse", "--first-parent", f"{good}..{bad}").split()
    if not out:
        raise BisectError(f"no commits between good {good[:12]} and bad {bad[:12]}; "
                          "expected good to be an ancestor of bad")
    return out


def commit_at(repo: Path, when: datetime, branch: str = "HEAD") -> str:
    """The newest commit on `branch` at `when` (UTC): what a nightly built then had."""
    out = git(repo, "rev-list", "-1", "--first-parent", f"--before={when:%Y-%m-%dT%H:%M:%SZ}", branch).strip()
    if not out:
        raise BisectError(f"no commit on {branch} in {repo} before {when:%Y-%m-%d %H:%M} UTC")
    return out


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
