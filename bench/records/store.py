"""The data branch: publish run records to it with git, exactly once.

Each record lands at RunRecord.relpath() on the branch (docs/DESIGN.md 'Layout').
The commit is built with git plumbing in a throw-away bare repository
(hash-object, mktree of the folders that change, commit-tree), from the
tip's commit and the trees of those folders alone, fetched by name: there
is no working tree to leave half-written, a publish's cost does not grow
with the history, and the push either moves the branch to a commit
holding every new record of the call or does not move it at all.

Races: nightly jobs, a late device and a rerun may publish at the same moment.
The push is a plain fast-forward push, so the server refuses it when the
branch moved since our fetch (or, on a busy server, cannot lock the ref). We
then fetch the new tip, re-add our records on top of it (each record has its
own path, so there is never a conflict to resolve), check again which are
already there, and push again, after an exponential backoff with jitter, a
bounded number of times.

Idempotent: a record whose path already holds the same content is 'already
there' and adds nothing; when every record of the call is there, no commit is
made. The same path with other content is refused: records are never edited.

Only adds, whatever the branch holds: each record is placed or refused on its
own (PublishResult.refused): other content at its path, or a file/folder
conflict (a file where the record needs a folder, a folder where the record
goes), which `git update-index` would resolve by silently deleting the file.
Before each push, the commit is checked to add exactly the new records.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence, TextIO

from bench.errors import EXIT_NO, BenchError
from bench.records.guard import Refusal
from bench.records import summary
from bench.records.history import json_files
from bench.records.record import RecordError, RunRecord, same_record_text, validate

DEFAULT_BRANCH = "gh-pages"
# Identity for the data commits, passed with -c so that publishing works on a
# machine without any git config and never touches the user's own config.
# GIT_AUTHOR_NAME/GIT_COMMITTER_* in the environment still take precedence.
IDENTITY = ("keras-nightly-bench", "keras-nightly-bench@users.noreply.github.com")

# What git says when the branch moved under us or the ref was busy: worth a
# fresh fetch and another try. Anything else (no such repository, no
# permission, a hook that declines) is final.
_RETRYABLE = re.compile(
    r"non-fast-forward|fetch first|\[rejected\]|cannot lock ref|failed to lock|"
    r"failed to update ref|stale info|incorrect old value|unable to create .*\.lock|"
    r"reference already exists|but expected",
    re.IGNORECASE,
)
_CREDENTIALS = re.compile(r"(\w+://)[^/@\s]+@")
# The one folder of files derived from the records (bench/records/summary.py):
# a publish may add or rewrite files there, never a record.
DERIVED = f"{summary.FOLDER}/"
Derive = Callable[[Callable[[str], "str | None"], list[RunRecord]], dict[str, str]]


class PublishError(BenchError, RuntimeError):
    """Publishing was refused or failed; the branch did not move."""

    label = "could not publish, the branch did not move"
    exit_code = EXIT_NO


@dataclass(frozen=True)
class Retry:
    """Bounded exponential backoff with 'full jitter' (seconds).

    The n-th wait (n = 1, 2, ...) is uniform(0, d) with d = min(cap, base * 2**(n-1)):
    the window doubles, and publishers that were rejected together spread
    out over it instead of colliding again (fewer retries and less idle time
    than waits of a fixed or half-fixed length).
    """

    attempts: int = 10
    base: float = 0.2
    cap: float = 5.0

    def __post_init__(self):
        if self.attempts < 1:
            raise ValueError(f"Retry.attempts is {self.attempts!r}; expected an integer >= 1")
        if not (self.base > 0 and self.cap >= self.base):
            raise ValueError(f"Retry base={self.base!r}, cap={self.cap!r}; expected 0 < base <= cap")

    def delay(self, n: int, rng: random.Random) -> float:
        return rng.uniform(0, min(self.cap, self.base * 2 ** (n - 1)))


@dataclass(frozen=True)
class Placed:
    """One record of a publish call: where it goes and what happened to it."""

    relpath: str
    source: str
    status: str  # 'added' | 'already there'


@dataclass(frozen=True)
class PublishResult:
    repo: str
    branch: str
    placed: tuple[Placed, ...]
    commit: str | None   # the new commit, or None when nothing was new
    tip: str | None      # the branch tip after the call
    attempts: int        # pushes tried (0 when nothing was new)
    refused: tuple[Refusal, ...] = ()  # records left off the branch, each with its reason

    @property
    def added(self) -> tuple[Placed, ...]:
        return tuple(p for p in self.placed if p.status == "added")


def record_files(args: Iterable[str | Path]) -> list[Path]:
    """Record paths from command-line arguments: a folder means every *.json
    below it (artifact downloads nest one folder per artifact)."""
    out: list[Path] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            found = [Path(f) for f in json_files(p)]
            if not found:
                raise FileNotFoundError(f"{p}: folder holds no *.json record files")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such record file or folder")
    return out


def publish(records: Sequence[RunRecord], repo: str, branch: str = DEFAULT_BRANCH, *,
            retry: Retry = Retry(), sleep: Callable[[float], None] = time.sleep,
            rng: random.Random | None = None, log: TextIO | None = None,
            derive: Derive | None = None) -> PublishResult:
    """Append `records` to `branch` of `repo` (a path or URL): each record
    whose path is free goes in one commit; the others are refused one by one.

    Refused (PublishResult.refused, never raised): an invalid record, two
    records for one path with different content, a path that already holds
    other content (records are never edited), a path where the branch has a
    file in place of a folder or a folder in place of the file (git would
    silently delete one). The branch only ever gains files: the commit is
    checked to add and nothing else before it is pushed.

    `derive(read, new_records)` gives files under DERIVED/ (the summary) to
    add or rewrite in the same commit: `read(path)` is a file's text at the
    tip (None when absent); it runs again on each retry, against the new tip.

    Raises PublishError for a git failure or a push still rejected after
    `retry.attempts` tries; then the branch did not move.
    """
    planned, refused = _plan(records)
    recs = _by_path(records)
    rng = rng or random.Random()
    repo = _absolute(repo)
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp:
        git = _Git(Path(tmp))
        blobs = git.store_blobs({path: text for path, (text, _) in planned.items()})
        for attempt in range(1, retry.attempts + 1):
            tip = git.fetch_tip(repo, branch)
            kinds = git.path_kinds(tip, list(planned)) if tip else {}
            clashes = _clashes(planned, blobs, kinds, branch, git.read_blob)
            placed = tuple(Placed(path, src, "already there" if kinds.get(path, ("", ""))[1] == "blob" else "added")
                           for path, (_, src) in planned.items() if path not in clashes)
            result = dict(repo=_redact(repo), branch=branch, placed=placed,
                          refused=tuple(refused) + tuple(clashes.values()))
            new = [p.relpath for p in placed if p.status == "added"]
            if not new:
                return PublishResult(commit=None, tip=tip, attempts=attempt - 1, **result)
            extra = derive(lambda path: git.read_at(tip, path), [recs[p] for p in new]) if derive else {}
            extra_blobs = git.store_blobs(extra) if extra else {}
            commit = git.commit(tip, {**{p: blobs[p] for p in new}, **extra_blobs}, _message(planned, new))
            git.check_only_adds(tip, commit, new, extra_blobs)
            refusal = git.push(repo, commit, branch)
            if refusal is None:
                return PublishResult(commit=commit, tip=commit, attempts=attempt, **result)
            if attempt == retry.attempts:
                raise PublishError(
                    f"push of {len(new)} record(s) to {_redact(repo)} branch {branch} was rejected "
                    f"{attempt} times; gave up after {attempt} attempts (last: {refusal})")
            wait = retry.delay(attempt, rng)
            if log is not None:
                print(f"bench publish: push rejected (attempt {attempt} of {retry.attempts}: {refusal}); "
                      f"fetching the new tip and retrying in {wait:.2f} s", file=log)
            sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises


# -- steps -------------------------------------------------------------------

def _plan(records: Sequence[RunRecord]) -> tuple[dict[str, tuple[str, str]], list[Refusal]]:
    """({relpath: (text, source)}, refusals); validates every record before any git work."""
    if not records:
        raise PublishError("no records to publish")
    planned: dict[str, tuple[str, str]] = {}
    refused: list[Refusal] = []
    for rec in records:
        try:
            validate(rec.data, rec.source)  # RunRecord(...) built by hand skips from_dict
            path, text = rec.relpath(), rec.to_json()
        except (RecordError, ValueError) as e:  # to_json: NaN in a hand-built record
            refused.append(Refusal(rec.source, str(e)))
            continue
        if path in planned and planned[path][0] != text:
            refused.append(Refusal(rec.source, f"goes to {path} like {planned[path][1]}, with different content; "
                                               "records are never edited (a rerun needs a new attempt number)"))
            continue
        planned.setdefault(path, (text, rec.source))
    return planned, refused


def _by_path(records: Sequence[RunRecord]) -> dict[str, RunRecord]:
    """{relpath: record} of the records that have a path (_plan refuses the others)."""
    out = {}
    for rec in records:
        try:
            out.setdefault(rec.relpath(), rec)
        except (RecordError, ValueError, KeyError, TypeError):
            continue
    return out


def _clashes(planned, blobs, kinds, branch, read_blob: Callable[[str], str]) -> dict[str, Refusal]:
    """{path: Refusal} for the paths the branch does not leave free for us:
    other data at the path (the same data in another layout, an older
    writer's indentation, counts as the same), or a file/folder conflict."""
    out = {}
    for path, (text, source) in planned.items():
        clash = next((f"{branch} has a {kind} at {where}, where this record needs a folder"
                      for where, (_, kind) in _parents(path, kinds) if kind not in ("tree", "")), None)
        sha, kind = kinds.get(path, ("", ""))
        if clash is None and kind not in ("blob", ""):
            clash = f"{branch} has a {kind} (not a file) at {path}"
        if clash is None and kind == "blob" and sha != blobs[path] and not same_record_text(read_blob(sha), text):
            clash = f"differs from {branch}:{path}"
        if clash:
            out[path] = Refusal(source, f"{clash}; records are never edited or replaced "
                                        "(a rerun needs a new attempt number)")
    return out


def _parents(path: str, kinds) -> list[tuple[str, tuple[str, str]]]:
    parts = path.split("/")
    return [(p, kinds.get(p, ("", ""))) for p in ("/".join(parts[:i]) for i in range(1, len(parts)))]


def _message(planned, new: list[str]) -> str:
    return (f"bench publish: {len(new)} record(s)\n\n"
            + "".join(f"{p}\n" for p in sorted(new)))


def _absolute(repo: str) -> str:
    """A local path works from any cwd (git runs in our temp dir)."""
    return str(Path(repo).resolve()) if "://" not in repo and Path(repo).exists() else repo


def _redact(text: str) -> str:
    """Never print a token embedded in a repository URL."""
    return _CREDENTIALS.sub(r"\1***@", text)


class _Git:
    """git plumbing against a private bare repository in `root`."""

    def __init__(self, root: Path):
        self.root = root
        self.dir = root / "repo.git"
        self.env = {**os.environ,
                    "GIT_DIR": str(self.dir), "GIT_INDEX_FILE": str(root / "index"),
                    "GIT_TERMINAL_PROMPT": "0",   # fail instead of waiting for a password
                    "LC_ALL": "C", "LANGUAGE": ""}  # English messages, so refusals can be recognised
        self._have: set[str] = set()   # objects fetched (or made) here
        self._tip: str | None = None    # the refspec that fetched the tip
        self._trees: dict[str, dict[str, tuple[str, str, str]]] = {}  # tree id -> its entries
        self.run("init", "--quiet", "--bare", str(self.dir))

    def run(self, *args: str, input: str | None = None, check: bool = True,
            timeout: float = 300) -> subprocess.CompletedProcess:
        cmd = ["git", "-c", f"user.name={IDENTITY[0]}", "-c", f"user.email={IDENTITY[1]}", *args]
        try:
            proc = subprocess.run(cmd, input=input, capture_output=True, text=True, env=self.env,
                                  cwd=self.root, timeout=timeout)
        except FileNotFoundError:
            raise PublishError("git is not installed (not found on PATH); publishing needs git") from None
        except subprocess.TimeoutExpired:
            raise PublishError(f"git {args[0]} did not finish within {timeout:.0f} s") from None
        if check and proc.returncode != 0:
            raise PublishError(f"git {args[0]} failed: {_redact(proc.stderr.strip() or proc.stdout.strip())}")
        return proc

    def store_blobs(self, texts: dict[str, str]) -> dict[str, str]:
        """Write each text as a blob; one git call for all of them."""
        staged = Path(tempfile.mkdtemp(dir=self.root, prefix="staged-"))
        files = []
        for i, text in enumerate(texts.values()):
            f = staged / f"{i}.json"
            f.write_text(text, encoding="utf-8")
            files.append(str(f))
        out = self.run("hash-object", "-w", "--no-filters", "--stdin-paths", input="\n".join(files) + "\n")
        self._have.update(out.stdout.split())
        return dict(zip(texts, out.stdout.split()))

    def fetch_tip(self, repo: str, branch: str) -> str | None:
        """The branch tip (fetched, depth 1, the commit alone), or None when the branch does not exist.

        Why the commit alone (--filter=tree:0): a publish reads the folders
        its new files go in and the summary's newest month and coverage,
        nothing else; `folders` fetches those trees (and `read_at` those
        blobs) by name, a few at a time. Fetching every tree of the tip (3,800
        at ten years x 100 series) or every blob (372 MB) would make a
        publish's cost grow with the history. A server that does not filter
        (a local bare repository without uploadpack.allowFilter) sends
        everything; the fetches by name then find it all here."""
        ref = f"refs/remotes/publish/{branch}"
        if self.run("config", "--get", "remote.publish.url", check=False).returncode != 0:
            self.run("remote", "add", "publish", repo)
            self.run("config", "remote.publish.promisor", "true")
            self.run("config", "remote.publish.partialclonefilter", "tree:0")
        proc = self.run("fetch", "--quiet", "--no-tags", "--depth=1", "--filter=tree:0", "publish",
                        f"+refs/heads/{branch}:{ref}", check=False)
        if proc.returncode == 0:
            tip = self.run("rev-parse", "--verify", ref).stdout.strip()
            self._have.add(tip)
            self._tip = f"+refs/heads/{branch}:{ref}"
            return tip
        if "couldn't find remote ref" in proc.stderr:
            # Absent when we looked. Should a rival create it right now, our
            # orphan push is refused and the next attempt fetches theirs.
            return None
        listed = self.run("ls-remote", "--heads", repo, f"refs/heads/{branch}", check=False)
        if listed.returncode == 0 and not listed.stdout.strip():
            return None
        raise PublishError(f"cannot fetch {branch} from {_redact(repo)}: "
                           f"{_redact(proc.stderr.strip() or listed.stderr.strip())}")

    def want(self, oids: Iterable[str]) -> None:
        """Fetch these objects by name, only them (not a tree's subtrees), when
        not fetched yet. Never left to git's own fetch-on-demand, which asks
        for a tree with every tree below it: the root's would be the history's."""
        missing = sorted({o for o in oids if o not in self._have})
        if not missing:
            return
        proc = self.run("-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "publish", "--no-tags",
                        "--no-write-fetch-head", "--recurse-submodules=no", "--filter=tree:0", "--stdin",
                        input="".join(f"{o}\n" for o in missing), check=False)
        if proc.returncode != 0:
            # A server that gives no object by name (protocol v0 without
            # uploadpack.allowAnySHA1InWant): every tree of the tip, as a
            # publish fetched before; the blobs come when read, as they did.
            if self._tip is None:
                raise PublishError(f"git fetch failed: {_redact(proc.stderr.strip())}")
            self.run("fetch", "--quiet", "--no-tags", "--refetch", "--depth=1", "--filter=blob:none", "publish",
                     self._tip)  # --refetch: the tip's commit is here already
        self._have.update(missing)

    def tree(self, oid: str) -> dict[str, tuple[str, str, str]]:
        """{name: (mode, type, object id)} of a tree object."""
        if oid not in self._trees:
            self.want([oid])
            out = self.run("ls-tree", "-z", "--full-tree", oid).stdout
            entries = {}
            for item in filter(None, out.split("\0")):
                meta, _, name = item.partition("\t")
                mode, kind, sha = meta.split()
                entries[name] = (mode, kind, sha)
            self._trees[oid] = entries
        return self._trees[oid]

    def folders(self, tip: str, paths: Iterable[str]) -> dict[str, dict[str, tuple[str, str, str]]]:
        """{folder: its entries} at `tip` for each folder above `paths` that is a
        tree there ('' the root), fetched a level at a time: a handful of small
        trees, however long the history."""
        wanted = {"/".join(p.split("/")[:i]) for p in paths for i in range(p.count("/") + 1)}
        # The commit's own text names its tree: `rev-parse tip^{tree}` would check
        # that the tree is here, and git would fetch it with every tree below it.
        root = self.run("cat-file", "commit", tip).stdout.split("\n", 1)[0].removeprefix("tree ")
        out: dict[str, dict[str, tuple[str, str, str]]] = {}
        level = {"": root}
        while level:
            self.want(level.values())
            below = {}
            for folder, oid in level.items():
                out[folder] = self.tree(oid)
                for name, (_, kind, sha) in out[folder].items():
                    child = f"{folder}/{name}" if folder else name
                    if kind == "tree" and child in wanted:
                        below[child] = sha
            level = below
        return out

    def path_kinds(self, tip: str, paths: list[str]) -> dict[str, tuple[str, str]]:
        """{path: (object id, 'blob' | 'tree' | 'commit')} at `tip` for each of
        `paths` and each folder above them that exists."""
        listed = self.folders(tip, paths)
        found = {}
        for path in {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 2)}:
            folder, _, name = path.rpartition("/")
            entry = listed.get(folder, {}).get(name)
            if entry is not None and entry[1] in ("blob", "tree", "commit"):
                found[path] = (entry[2], entry[1])
        return found

    def check_only_adds(self, tip: str | None, commit: str, new: list[str], derived: Iterable[str] = ()) -> None:
        """The commit adds exactly `new` and changes nothing else, but for the
        `derived` files (the summary, DERIVED/), which it may add or rewrite:
        the last line of defence for 'never delete or rewrite a record'.
        diff-tree reads only the trees that differ: those `commit` built."""
        if not tip:
            return
        out = self.run("diff-tree", "-r", "--no-renames", "--name-status", "-z", tip, commit).stdout
        fields = out.split("\0")
        derived = {p for p in derived if p.startswith(DERIVED)}
        changes = [(st, p) for st, p in zip(fields[0::2], fields[1::2])
                   if not (p in derived and st in ("A", "M"))]
        if sorted(changes) != sorted(("A", p) for p in new):
            others = [f"{st} {p}" for st, p in changes if (st, p) not in {("A", n) for n in new}]
            raise PublishError(f"refusing to push: the commit would also change {', '.join(others[:5]) or 'nothing'}"
                               f" besides adding {len(new)} record(s); nothing was published")

    def read_blob(self, sha: str) -> str:
        self.want([sha])
        return self.run("cat-file", "blob", sha).stdout

    def read_at(self, tip: str | None, path: str) -> str | None:
        """The text of `path` at `tip`, None when it is not a file there."""
        if not tip:
            return None
        folder, _, name = path.rpartition("/")
        entry = self.folders(tip, [path]).get(folder, {}).get(name)
        return self.read_blob(entry[2]) if entry is not None and entry[1] == "blob" else None

    def commit(self, tip: str | None, blobs: dict[str, str], message: str) -> str:
        """A commit of tip's tree plus `blobs`; an orphan (root) commit when tip is None.

        Built from the folders that change alone (git mktree, bottom up): the
        tip's other trees are named, never read, so the work is the same at
        one year as at ten."""
        listed = self.folders(tip, blobs) if tip else {}
        changed: dict[str, dict[str, tuple[str, str, str]]] = {}
        for path in blobs:
            parts = path.split("/")
            for i in range(len(parts)):
                folder = "/".join(parts[:i])
                changed.setdefault(folder, dict(listed.get(folder, {})))
        for path, sha in blobs.items():
            folder, _, name = path.rpartition("/")
            changed[folder][name] = ("100644", "blob", sha)
        tree = ""
        for folder in sorted(changed, key=lambda f: (-(f.count("/") + 1 if f else 0), f)):
            text = "".join(f"{mode} {kind} {sha}\t{name}\0" for name, (mode, kind, sha) in changed[folder].items())
            tree = self.run("mktree", "-z", "--missing", input=text).stdout.strip()
            self._have.add(tree)
            if folder:
                parent, _, name = folder.rpartition("/")
                changed[parent][name] = ("040000", "tree", tree)
        parents = ["-p", tip] if tip else []
        return self.run("commit-tree", "--no-gpg-sign", tree, *parents, "-m", message).stdout.strip()

    def push(self, repo: str, commit: str, branch: str) -> str | None:
        """None when the branch moved to `commit`; the reason when the push was
        rejected in a way a fresh fetch can fix. Other failures raise."""
        proc = self.run("push", "--porcelain", "--no-verify", repo, f"{commit}:refs/heads/{branch}",
                        check=False)
        if proc.returncode == 0:
            return None
        said = _redact(f"{proc.stdout}\n{proc.stderr}")
        if _RETRYABLE.search(said):
            return _reason(said)
        raise PublishError(f"push to {_redact(repo)} branch {branch} failed: {said.strip()}")


def _reason(said: str) -> str:
    """The one line of git's output that says why the push was refused."""
    for line in said.splitlines():
        if _RETRYABLE.search(line):
            return " ".join(line.split())
    return said.strip().splitlines()[-1]


__all__ = ["DEFAULT_BRANCH", "PublishError", "PublishResult", "Placed", "Retry", "publish",
           "record_files", "RecordError"]
