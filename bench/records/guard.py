"""The publish gate: which record files may go onto the data branch.

Artifacts are untrusted data (a runner ran third-party nightly code; a fork
could try to pass off a run of its own), so each file is admitted or refused
on its own, never all or nothing: `admit` returns a RunRecord or a Refusal
naming the file and the reason, and never raises for any input.

A file is refused when it
  - is larger than Limits.file_bytes, is not UTF-8, or is not strict JSON
    (duplicate keys, NaN/Infinity, numbers out of range, nesting deeper than
    Limits.depth);
  - has a string longer than Limits.string_chars, more than Limits.results
    results, or more than Limits.samples samples in one result (or worker);
  - fails the record contract (schema, finite values, optional field types);
  - has a backend, device or run id that is not a plain label
    ([A-Za-z0-9._-], starting with a letter or digit): these name the file on
    the branch, so a path trick or two labels mapping to one name cannot
    happen; or a model or mode that is not printable ASCII (a look-alike
    letter would make a second series that reads the same);
  - has a run.attempt that is not a JSON integer (1.0 would name a second
    file beside attempt 1, and win), or a model or mode that benchmarks.yaml
    does not name (Gate.models, Gate.modes: each one would be a new series,
    and thousands of them overrun the site's build);
  - is dated (run.started_at or run.night) more than Limits.late after the
    run it came from (its creation time), or Limits.ahead after now when that
    is unknown:
    a record dated 9999 would turn every series Stale; or has a run.night
    other than its run's own night (the UTC date it was created) or the one
    before (a dispatch before 02:17 UTC is for last night): a record of
    tonight must not rewrite a past night's point;
  - does not match its provenance: run.id must be the run the artifact came
    from (or, for the two records of a `bench run --reference`, that run's id
    with '-a'/'-b' and run.ab.id that run), and run.repository / run.event / run.attempt must agree with that
    run when given (Provenance, from `bench publish --provenance FILE` or
    `--expect-run-id ID`);
  - (from a provenance file) lies in an artifact folder whose name does not
    name it: the folder below the run's is the artifact, named
    `<prefix>-<run id>-<attempt>-<device>-<backend>` by the workflow that
    uploaded it (nightly.yml: record-...); a job can write any record into
    its own artifact, so the record's attempt, device and backend must be the
    job's. Otherwise the CPU box's job could publish the GPU's series first.

admit_all takes a batch and also caps what one artifact and one run may add
(Limits.artifact_*, run_*: files, bytes, series); every record of an artifact
or run over a cap is refused, naming the cap.

Provenance file, format 1 (written by the publish workflow from the GitHub
API, one entry per downloaded artifact folder):
  {"format": 1,
   "artifacts": {"<folder, absolute or relative to this file>":
                   {"run_id": "123", "repository": "owner/name",
                    "event": "schedule", "created_at": "2026-12-01T02:17:00Z",
                    "run_started_at": "2026-12-01T02:17:05Z", "run_attempt": 1}}}
run_id is required; the rest is checked when present. A record file below
no listed folder is refused. created_at and run_started_at are the API's
fields: a re-run attempt starts later than its run was created, so a record
may be dated up to Limits.late after the later of the two, and no earlier
than created_at.
"""

from __future__ import annotations

import json
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Mapping

from bench.errors import shown
from bench.records.extensions import ab_side
from bench.records.record import RecordError, RunRecord, parse_time, validate

PROVENANCE_FORMAT = 1
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
PRINTABLE = re.compile(r"[\x20-\x7e]+")
_SKEW = timedelta(minutes=10)  # a runner's clock a little behind GitHub's


@dataclass(frozen=True)
class Limits:
    """Caps on one record file, and on what one artifact and one run may add
    (admit_all). Generous for a real record (a nightly record is ~10 kB: a
    few results of 7 repeats, a worker list each); tight enough that a
    hostile file, or a flood of them, cannot make the branch, the report or
    the site slow or huge.

    ahead: how far after now a record without provenance may be dated (a
    runner's clock ahead of ours; the readers use it too).
    late: how far after its run's creation (or its newest attempt's start) a
    record may be dated. Two days plus two hours: a job queued for an offline
    self-hosted runner may wait up to 48 h before GitHub cancels it, and
    installing and benchmarking take a while; a device that comes back inside
    that window runs its queued job, and the record keeps its run's night.
    """

    file_bytes: int = 2 * 1024 * 1024
    results: int = 200
    samples: int = 10_000
    string_chars: int = 20_000
    label_chars: int = 64   # three of them and the attempt name the file: under 255 bytes
    attempts: int = 1000    # run.attempt; GitHub allows far fewer re-runs
    depth: int = 16
    ahead: timedelta = timedelta(hours=26)
    late: timedelta = timedelta(hours=50)
    # One artifact is one (device, backend) job: a record, and its reference
    # build's two sides; a series is (backend, device, model, mode), a few
    # models x modes x metrics. A run is one artifact per matrix entry.
    # Generous for that; the site plots ~4 series a second, so thousands of
    # new series would overrun the publish job.
    artifact_files: int = 16
    artifact_bytes: int = 16 * 1024 * 1024
    artifact_series: int = 100
    run_files: int = 256
    run_bytes: int = 64 * 1024 * 1024
    run_series: int = 1000

    def __post_init__(self):
        for name in ("file_bytes", "results", "samples", "string_chars", "label_chars", "attempts", "depth",
                     "artifact_files", "artifact_bytes", "artifact_series", "run_files", "run_bytes", "run_series"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"Limits.{name} is {v!r}; expected an integer >= 1")
        for name in ("ahead", "late"):
            v = getattr(self, name)
            if not isinstance(v, timedelta) or v < timedelta(0):
                raise ValueError(f"Limits.{name} is {v!r}; expected a timedelta >= 0")


@dataclass(frozen=True)
class Provenance:
    """The workflow run an artifact came from, as the GitHub API says."""

    run_id: str
    repository: str | None = None
    event: str | None = None
    created_at: datetime | None = None
    run_attempt: int | None = None
    run_started_at: datetime | None = None  # the newest attempt's start (later than created_at on a re-run)

    def __post_init__(self):
        if not isinstance(self.run_id, str) or not LABEL.fullmatch(self.run_id):
            raise ValueError(f"provenance run_id is {self.run_id!r}; expected a run id such as '12345678'")
        for name in ("repository", "event"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise ValueError(f"provenance {name} is {v!r}; expected a non-empty string or nothing")
        for name in ("created_at", "run_started_at"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, datetime) or v.tzinfo is None):
                raise ValueError(f"provenance {name} is {v!r}; expected an aware UTC datetime")
        if self.run_attempt is not None and (not isinstance(self.run_attempt, int) or isinstance(self.run_attempt, bool)
                                             or self.run_attempt < 1):
            raise ValueError(f"provenance run_attempt is {self.run_attempt!r}; expected an integer >= 1")

    @classmethod
    def from_dict(cls, d: Any, where: str) -> "Provenance":
        if not isinstance(d, dict):
            raise ValueError(f"{where} is {d!r}; expected an object with run_id")
        unknown = set(d) - {"run_id", "repository", "event", "created_at", "run_attempt", "run_started_at"}
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected run_id, "
                             "repository, event, created_at, run_started_at, run_attempt")
        run_id = d.get("run_id")
        run_id = str(run_id) if isinstance(run_id, int) and not isinstance(run_id, bool) else run_id
        try:
            times = {k: parse_time(d[k], f"{where}.{k}") if d.get(k) else None for k in ("created_at", "run_started_at")}
            return cls(run_id, d.get("repository"), d.get("event"), times["created_at"], d.get("run_attempt"),
                       times["run_started_at"])
        except (RecordError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from None


@dataclass(frozen=True)
class Refusal:
    """One file that stays off the branch, and why (one line)."""

    source: str
    reason: str

    def line(self) -> str:
        return f"{one_line(self.source)}: {one_line(self.reason)}"


@dataclass(frozen=True)
class Gate:
    """What `admit` checks against: the caps, the clock, and the runs the
    artifacts came from ({absolute folder: Provenance}; `every` applies to
    every file, e.g. --expect-run-id)."""

    limits: Limits = field(default_factory=Limits)
    now: datetime | None = None
    folders: Mapping[str, Provenance] = field(default_factory=dict)
    every: Provenance | None = None
    models: frozenset[str] | None = None  # benchmarks.yaml's (None: any; bench publish always sets them)
    modes: frozenset[str] | None = None

    @classmethod
    def named_by(cls, cfg, **kw) -> "Gate":
        """A gate that takes only the models and modes config `cfg` names."""
        return cls(models=frozenset(cfg.models), modes=frozenset(cfg.modes), **kw)

    def provenance(self, path: Path) -> tuple[Provenance | None, bool]:
        """(the run `path` came from, whether one was required)."""
        if self.every is not None:
            return self.every, True
        if not self.folders:
            return None, False
        best = self._folder(path)
        return (self.folders[best] if best else None), True

    def artifact(self, path: Path) -> str | None:
        """The artifact folder `path` came from, as 'name' (the first folder
        below its provenance folder), or None: no provenance file, or the
        file lies directly in the provenance folder."""
        best = self._folder(path) if self.every is None else None
        if best is None:
            return None
        parts = path.resolve().relative_to(best).parts
        return parts[0] if len(parts) > 1 else None

    def _folder(self, path: Path) -> str | None:
        here = path.resolve()
        return max((f for f in self.folders if here.is_relative_to(f)), key=len, default=None)


def one_line(text: object) -> str:
    """Text on one line with control and format characters (ESC, bidi
    overrides, zero-width ones) shown as code points."""
    s = " ".join(str(text).split())
    if s.isascii() and s.isprintable():
        return s  # the ASCII characters that are not printable are the controls (Cc); Cf are none of them
    return "".join(f"U+{ord(c):04X}" if unicodedata.category(c) in ("Cc", "Cf") else c for c in s)


def load_provenance(path: str | Path) -> dict[str, Provenance]:
    """{absolute folder: Provenance} from a provenance file (format 1 above).
    Raises ValueError naming the file and the entry."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"--provenance {path}: cannot read: {e.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"--provenance {path}: not JSON ({one_line(e)[:120]})") from None
    if not isinstance(data, dict) or data.get("format") != PROVENANCE_FORMAT or not isinstance(data.get("artifacts"), dict):
        raise ValueError(f"--provenance {path}: expected {{\"format\": {PROVENANCE_FORMAT}, \"artifacts\": "
                         "{folder: {run_id, ...}}}")
    base = path.resolve().parent
    return {str((base / folder).resolve()): Provenance.from_dict(entry, f"--provenance {path}: artifacts[{folder!r}]")
            for folder, entry in data["artifacts"].items()}


def admit(path: str | Path, gate: Gate = Gate()) -> RunRecord | Refusal:
    """The record in `path` if it may be published, else why not. Never raises."""
    source = str(path)
    try:
        return _admit(Path(path), source, gate)
    except RecordError as e:
        return Refusal(source, _without_source(str(e), source))
    except (OSError, ValueError, TypeError, KeyError, RecursionError, OverflowError) as e:
        # A check this gate lacks: still one line, still refused, never a traceback.
        return Refusal(source, f"cannot be checked ({type(e).__name__}: {one_line(e)[:200]})")


def _without_source(message: str, source: str) -> str:
    return message[len(source) + 2:] if message.startswith(source + ": ") else message


def _admit(path: Path, source: str, gate: Gate) -> RunRecord | Refusal:
    limits = gate.limits
    st = path.lstat()
    if not stat.S_ISREG(st.st_mode):  # a link to /dev/zero or a FIFO would never end
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        return Refusal(source, f"is {kind}; expected a regular record file")
    with path.open("rb") as f:
        raw = f.read(limits.file_bytes + 1)  # the size as read, not as stat says
    if len(raw) > limits.file_bytes:
        return Refusal(source, f"file is {max(st.st_size, len(raw))} bytes; the cap is {limits.file_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Refusal(source, "not UTF-8 text")
    data = _strict_json(text, source)
    too_big = _oversize(data, limits)
    if too_big:
        return Refusal(source, too_big)
    validate(data, source)
    rec = RunRecord(data, source)
    for check in (_labels, _dates, _origin):
        reason = check(rec, gate, path)
        if reason:
            return Refusal(source, reason)
    return rec


def _strict_json(text: str, source: str) -> Any:
    """parse_json's rules plus: a key twice in one object is refused (JSON
    readers disagree on which one wins)."""
    from bench.records.record import parse_json

    def pairs(items):
        d = dict(items)
        if len(d) != len(items):
            seen = set()
            dup = next(k for k, _ in items if k in seen or seen.add(k))
            raise RecordError(f"{source}: key {one_line(dup)[:80]!r} appears twice in one object; "
                              "expected each key once")
        return d

    return parse_json(text, source, object_pairs_hook=pairs)


def _oversize(data: Any, limits: Limits) -> str | None:
    """The first cap `data` breaks, naming the field, or None."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > limits.depth:
            return f"field {where or '(top level)'} is nested {depth} levels deep; the cap is {limits.depth}"
        if isinstance(value, str):
            if len(value) > limits.string_chars:
                return f"field {where} is {len(value)} characters; the cap is {limits.string_chars}"
        elif isinstance(value, dict):
            for k, v in value.items():
                if len(k) > limits.label_chars:
                    return f"a key in {where or '(top level)'} is {len(k)} characters; the cap is {limits.label_chars}"
                stack.append((v, f"{where}.{k}" if where else k, depth + 1))
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
    results = data.get("results") if isinstance(data, dict) else None
    if isinstance(results, list):
        if len(results) > limits.results:
            return f"field results holds {len(results)} results; the cap is {limits.results}"
        for i, r in enumerate(results):
            for where, samples in _sample_lists(r, f"results[{i}]"):
                if len(samples) > limits.samples:
                    return f"field {where} holds {len(samples)} samples; the cap is {limits.samples}"
    return None


def _sample_lists(r: Any, where: str):
    if not isinstance(r, dict):
        return
    if isinstance(r.get("samples"), list):
        yield f"{where}.samples", r["samples"]
    for j, w in enumerate(r.get("workers") if isinstance(r.get("workers"), list) else ()):
        if isinstance(w, dict) and isinstance(w.get("samples"), list):
            yield f"{where}.workers[{j}].samples", w["samples"]


def _labels(rec: RunRecord, gate: Gate, path: Path) -> str | None:
    n = gate.limits.label_chars
    named = (("target.backend", rec.backend), ("target.device", rec.device), ("run.id", rec.run_id))
    for where, label in named:
        if len(label) > n or not LABEL.fullmatch(label):
            return (f"field {where} is {shown(label, as_text=ascii)}; expected a label of letters, digits, '.', '_' and '-' "
                    f"starting with a letter or digit, at most {n} characters (it names the file on the branch)")
    if type(rec.attempt) is not int:  # 1.0 passes the schema's "integer" and would name another file
        return f"field run.attempt is {rec.attempt!r}; expected a JSON integer such as 1"
    if rec.attempt > gate.limits.attempts:
        return f"field run.attempt is {rec.attempt}; expected at most {gate.limits.attempts}"
    for i, r in enumerate(rec.data["results"]):
        for name, known in (("model", gate.models), ("mode", gate.modes)):
            label = r[name]
            if len(label) > n or not PRINTABLE.fullmatch(label) or label != label.strip():
                return (f"field results[{i}].{name} is {shown(label, as_text=ascii)}; expected printable ASCII without "
                        f"leading or trailing spaces, at most {n} characters")
            if known is not None and label not in known:
                return (f"field results[{i}].{name} is {shown(label, as_text=ascii)}; expected one that "
                        f"benchmarks.yaml names: {', '.join(sorted(known))}")
    return None


def _dates(rec: RunRecord, gate: Gate, path: Path) -> str | None:
    prov, _ = gate.provenance(path)
    if prov is not None and prov.run_started_at is not None and (prov.created_at is None
                                                                 or prov.run_started_at > prov.created_at):
        base, what = prov.run_started_at, f"its run's newest attempt started at {_fmt(prov.run_started_at)}"
        window = gate.limits.late
    elif prov is not None and prov.created_at is not None:
        base, what = prov.created_at, f"its run was created at {_fmt(prov.created_at)}"
        window = gate.limits.late
    else:
        base, what = (gate.now or datetime.now(timezone.utc)), "it is now " + _fmt(gate.now or datetime.now(timezone.utc))
        window = gate.limits.ahead
    latest = base + window
    if rec.started_at > latest:
        return (f"field run.started_at is {_fmt(rec.started_at)}, after {_fmt(latest)}; {what}, and a record may "
                f"be dated at most {_hours(window)} after that")
    if "night" in rec.data["run"] and rec.night > latest.date():
        return (f"field run.night is {rec.night.isoformat()}, after {latest.date().isoformat()}; {what}, and a "
                f"record may be dated at most {_hours(window)} after that")
    if prov is not None and prov.created_at is not None and rec.started_at < prov.created_at - _SKEW:
        return (f"field run.started_at is {_fmt(rec.started_at)}, before its run was created "
                f"({_fmt(prov.created_at)}); expected a record made by that run")
    if prov is not None and prov.created_at is not None and "night" in rec.data["run"]:
        own = prov.created_at.astimezone(timezone.utc).date()
        if rec.night not in (own, own - timedelta(days=1)):
            return (f"field run.night is {rec.night.isoformat()}; expected {own.isoformat()} or "
                    f"{(own - timedelta(days=1)).isoformat()}, the night of its run (created "
                    f"{_fmt(prov.created_at)}) or the one before")
    return None


def _origin(rec: RunRecord, gate: Gate, path: Path) -> str | None:
    prov, required = gate.provenance(path)
    if prov is None:
        return "no provenance entry covers its folder; expected a file from a listed artifact folder" if required else None
    run = rec.data["run"]
    if rec.run_id != prov.run_id and not _side_of(rec, prov.run_id):
        return f"field run.id is {shown(rec.run_id, as_text=ascii)}; expected {prov.run_id!r}, the run its artifact came from"
    if prov.repository is not None and "repository" in run and run["repository"] != prov.repository:
        return (f"field run.repository is {shown(run['repository'], as_text=ascii)}; expected {prov.repository!r}, "
                "the repository of the run its artifact came from")
    if prov.event is not None and rec.event != prov.event:
        return f"field run.event is {shown(rec.event, as_text=ascii)}; expected {prov.event!r}, the event of the run its artifact came from"
    if prov.run_attempt is not None and rec.attempt > prov.run_attempt:
        return (f"field run.attempt is {rec.attempt}; expected at most {prov.run_attempt}, "
                "the attempts the run its artifact came from has had")
    return _artifact_names_it(rec, gate, path, prov)


def _artifact_names_it(rec: RunRecord, gate: Gate, path: Path, prov: Provenance) -> str | None:
    """A record from a provenance file's folder must lie in the artifact its
    own job uploaded: `<prefix>-<run id>-<attempt>-<device>-<backend>`."""
    if not gate.folders or gate.every is not None:
        return None
    name = gate.artifact(path)
    tail = f"{prov.run_id}-{rec.attempt}-{rec.device}-{rec.backend}"
    if name is None:
        return (f"lies in no artifact folder; expected it below a folder named "
                f"'record-{tail}' (the artifact of the job that made it)")
    if not re.fullmatch(r"[a-z]+(?:-[a-z]+)*-" + re.escape(tail), name):
        return (f"its artifact is {shown(name, as_text=ascii)}, not the job of its run.attempt {rec.attempt}, "
                f"target.device {shown(rec.device, as_text=ascii)} and target.backend "
                f"{shown(rec.backend, as_text=ascii)}; expected an artifact named 'record-{tail}'")
    return None


def admit_all(paths, gate: Gate = Gate()) -> tuple[list[RunRecord], list[Refusal]]:
    """Each file through `admit`, then the caps of one artifact and one run
    (Limits.artifact_*, run_*): when a group of admitted records is over a
    cap, every record of it is refused (which ones of a flood are genuine
    cannot be told). Never raises."""
    admitted, refused = [], []
    for p in paths:
        got = admit(p, gate)
        (refused if isinstance(got, Refusal) else admitted).append(got)
    lim = gate.limits
    for what, key, caps in (
            ("artifact", lambda r: gate.artifact(Path(r.source)) or str(Path(r.source).parent),
             (lim.artifact_files, lim.artifact_bytes, lim.artifact_series)),
            ("run", lambda r: _run_of(r, gate), (lim.run_files, lim.run_bytes, lim.run_series))):
        groups: dict[str, list[RunRecord]] = {}
        for r in admitted:
            groups.setdefault(key(r), []).append(r)
        over = {k: _over(rs, caps, what, k) for k, rs in groups.items()}
        refused += [Refusal(r.source, over[key(r)]) for r in admitted if over[key(r)]]
        admitted = [r for r in admitted if not over[key(r)]]
    return admitted, refused


def _run_of(rec: RunRecord, gate: Gate) -> str:
    prov, _ = gate.provenance(Path(rec.source))
    side = ab_side(rec.data)
    return prov.run_id if prov is not None else side[0] if side else rec.run_id


def _over(records: list[RunRecord], caps: tuple[int, int, int], what: str, name: str) -> str | None:
    files, size, series = caps
    n_bytes = sum(len(r.to_json().encode('utf-8')) for r in records)  # what the branch would gain
    keys = {(r.backend, r.device, x["model"], x["mode"]) for r in records for x in r.data["results"]}
    for count, cap, unit in ((len(records), files, "record files"), (n_bytes, size, "bytes of records"),
                             (len(keys), series, "series")):
        if count > cap:
            return (f"its {what} {shown(name, as_text=ascii)} holds {count} {unit}; the cap is {cap} per {what}, "
                    "so none of them is published")
    return None


def _side_of(rec: RunRecord, run_id: str) -> bool:
    """Is this record one side of a paired run (`bench run --reference`, a
    nightly beside its reference build) of the run `run_id`: run.id
    '<run_id>-a' or '-b' and run.ab.id that run?"""
    side = ab_side(rec.data)
    return side is not None and side[0] == run_id and rec.run_id == f"{run_id}-{side[1]}"


def _fmt(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hours(d: timedelta) -> str:
    return f"{d.total_seconds() / 3600:g} h"


__all__ = ["Gate", "Limits", "Provenance", "Refusal", "admit", "admit_all", "load_provenance", "one_line"]
