"""Run records: build, validate (run.schema.json), read, write.

One file per (run, attempt, device, backend); written once, never edited.

Format history (``schema_version``):
  1 (2026-12): run, target, environment, results (bench/records/schema/run.schema.json; docs/DESIGN.md).
     Readers accept extra fields everywhere.

Any change to the contract bumps SCHEMA_VERSION and keeps reading version 1.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timezone
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Mapping

from bench.errors import BenchError, read_text
from bench.records import atomic, extensions
from bench.records.extensions import LARGEST, SMALLEST

SCHEMA_VERSION = 1
READABLE_VERSIONS = frozenset({1})
SCHEMA_PATH = Path(__file__).with_name("schema") / "run.schema.json"

STATUSES = ("ok", "failed", "skipped")
ERROR_KINDS = ("oom", "timeout", "unsupported", "crash", "quality", "install")
NIGHTLY = "nightly"  # environment.keras_source of runs that make points

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class RecordError(BenchError, ValueError):
    """A run record is invalid; the message names the source and the field."""


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@lru_cache(maxsize=1)
def _fast_check():
    """The schema compiled to Python (bench.records.fastschema): accepts exactly what
    jsonschema accepts; None when the schema is beyond it. Kept instead of
    fastjsonschema by measurement (studies/bench_schema_check.py): 7.6 us a
    record against 48 us, which put the 5-year report 0.6 s (16 %) slower."""
    from bench.records.fastschema import compile_schema

    v = _validator()
    return compile_schema(v.schema, v.format_checker)


# RFC 3339's date-time (section 5.6), the schema's "format": "date-time":
# datetime.fromisoformat alone also takes week dates, basic forms, a space,
# minutes without seconds and offsets without a colon, which other readers
# (the dashboard's Date.parse) read otherwise or not at all.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII)


def parse_time(text: str, where: str = "time") -> datetime:
    """RFC 3339 to an aware UTC datetime ('Z' accepted); nothing else."""
    if not isinstance(text, str) or not _RFC3339.fullmatch(text):
        raise RecordError(f"{where} is {text!r}; expected an RFC 3339 date-time such as 2026-12-01T02:00:00Z")
    try:
        t = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        raise RecordError(f"{where} is {text!r}; expected a real calendar date and time, RFC 3339") from None
    try:
        return t.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before the first representable UTC time
        raise RecordError(f"{where} is {text!r}; expected a date-time between years 1 and 9999 in UTC") from None


def parse_night(text: Any, where: str = "night") -> date:
    """A night as written in run.night: 'YYYY-MM-DD' (UTC) to a date."""
    if not isinstance(text, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text, re.ASCII):
        raise RecordError(f"{where} is {text!r}; expected a UTC night as YYYY-MM-DD such as 2026-12-01")
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise RecordError(f"{where} is {text!r}; expected a real calendar date as YYYY-MM-DD") from None


def format_time(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> str:
    return format_time(datetime.now(timezone.utc))


def validate(data: Any, source: str = "record") -> None:
    """Raise RecordError naming `source` and the first bad field.

    Beyond the schema: the version must be one we read, and every value and
    sample must be finite (JSON from Python can carry NaN/Infinity).
    """
    if not isinstance(data, dict):
        raise RecordError(f"{source}: expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if isinstance(version, int) and version not in READABLE_VERSIONS and version > SCHEMA_VERSION:
        raise RecordError(
            f"{source}: schema_version {version} is newer than this bench reads "
            f"({', '.join(map(str, sorted(READABLE_VERSIONS)))}); update bench to read it"
        )
    fast = _fast_check()
    # Full jsonschema runs only when the compiled check refuses (or is
    # unavailable): it words the error, and it stays the final judge.
    errors = [] if fast is not None and fast(data) else sorted(
        _validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        field = _field_path(e.absolute_path) or "(top level)"
        raise RecordError(f"{source}: field {field}: {e.message}")
    for i, r in enumerate(data["results"]):
        for name in ("value",):
            if name in r and not SMALLEST <= r[name] <= LARGEST:  # NaN and inf fail it too
                raise RecordError(f"{source}: field results[{i}].{name} is {r[name]!r}; expected {_POSITIVE}")
        for j, s in enumerate(r.get("samples", [])):
            if not SMALLEST <= s <= LARGEST:
                raise RecordError(f"{source}: field results[{i}].samples[{j}] is {s!r}; expected {_POSITIVE}")
    parse_time(data["run"]["started_at"], f"{source}: field run.started_at")
    if "night" in data["run"]:
        parse_night(data["run"]["night"], f"{source}: field run.night")
    wrong = extensions.problem(data)  # optional contract fields of the wrong type
    if wrong:
        raise RecordError(f"{source}: {wrong}")


_POSITIVE = f"a finite number in [{extensions.SMALLEST:g}, {extensions.LARGEST:g}]"


def _field_path(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@dataclass(frozen=True)
class ErrorInfo:
    kind: str
    message: str


@dataclass(frozen=True)
class Result:
    """One (model, mode) outcome. `value` is bigger-is-better unless better == 'smaller'."""

    model: str
    mode: str
    status: str
    value: float | None = None
    unit: str = "samples/s"
    better: str = "bigger"
    samples: tuple[float, ...] = ()
    batch_size: int | None = None
    error: ErrorInfo | None = None
    se: float | None = None  # the value's own standard error in logs, where a record gives one

    def __post_init__(self):
        if self.status not in STATUSES:
            raise RecordError(f"result {self.model}/{self.mode}: status {self.status!r}; expected one of {STATUSES}")
        if self.status == "ok" and (self.value is None or not math.isfinite(self.value) or self.value <= 0):
            raise RecordError(f"result {self.model}/{self.mode}: value {self.value!r}; expected a finite number > 0")
        if self.status == "failed" and self.error is None:
            raise RecordError(f"result {self.model}/{self.mode}: a failed result needs an error (kind, message)")
        if self.better not in ("bigger", "smaller"):
            raise RecordError(f"result {self.model}/{self.mode}: better {self.better!r}; expected 'bigger' or 'smaller'")

    @classmethod
    def from_dict(cls, r: Mapping[str, Any]) -> "Result":
        err = r.get("error")
        return cls(
            model=r["model"], mode=r["mode"], status=r["status"], value=r.get("value"),
            unit=r.get("unit", "samples/s"), better=r.get("better", "bigger"),
            samples=tuple(r.get("samples", ())), batch_size=r.get("batch_size"),
            error=ErrorInfo(err["kind"], err["message"]) if err else None,
        )


@dataclass(frozen=True)
class RunRecord:
    """A validated run record. `data` is the file's content, kept whole
    (extra fields included) so that re-writing it never loses anything."""

    data: Mapping[str, Any]
    source: str

    @classmethod
    def from_dict(cls, data: Any, source: str = "record") -> "RunRecord":
        validate(data, source)
        return cls(data=data, source=source)

    # -- views ---------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self.data["run"]["id"]

    @property
    def attempt(self) -> int:
        return self.data["run"]["attempt"]

    @property
    def event(self) -> str:
        return self.data["run"]["event"]

    @cached_property  # parsed once: sorting and grouping ask for it often
    def started_at(self) -> datetime:
        return parse_time(self.data["run"]["started_at"])

    @property
    def night(self) -> date:
        """The UTC night this run is for (docs/DESIGN.md 'Points'): run.night when the
        record has it (a rerun after midnight still belongs to last night), else
        the UTC date of started_at (records made before run.night existed)."""
        if "night" in self.data["run"]:
            return parse_night(self.data["run"]["night"])
        return self.started_at.date()

    @property
    def url(self) -> str | None:
        return self.data["run"].get("url")

    @property
    def backend(self) -> str:
        return self.data["target"]["backend"]

    @property
    def keras_backend(self) -> str:
        return self.data["target"]["keras_backend"]

    @property
    def device(self) -> str:
        return self.data["target"]["device"]

    @property
    def environment(self) -> Mapping[str, Any]:
        return self.data["environment"]

    @property
    def keras_version(self) -> str | None:
        v = self.environment.get("keras_version")
        return v if isinstance(v, str) else None

    @property
    def is_nightly(self) -> bool:
        """Only nightly-Keras runs make points (docs/DESIGN.md 'Points')."""
        return self.environment.get("keras_source", NIGHTLY) == NIGHTLY

    @cached_property
    def results(self) -> tuple[Result, ...]:
        return tuple(Result.from_dict(r) for r in self.data["results"])

    # -- storage -------------------------------------------------------
    def relpath(self) -> str:
        """runs/YYYY/MM/DD/<backend>--<device>--<run id>-<attempt>.json (docs/DESIGN.md)."""
        return relpath_of(self.backend, self.device, self.run_id, self.attempt, self.started_at)

    def to_json(self) -> str:
        return dumps(self.data)


def relpath_of(backend: str, device: str, run_id: str, attempt: int, started_at: datetime) -> str:
    """Where a record lies under the data folder (RunRecord.relpath; a point's record from its fields)."""
    name = f"{safe(backend)}--{safe(device)}--{safe(run_id)}-{attempt}.json"
    return f"runs/{started_at:%Y/%m/%d}/{name}"


def safe(label: str) -> str:
    """A label as a file-name part: anything but [A-Za-z0-9._-] becomes '_'."""
    return _UNSAFE.sub("_", label) or "_"


def dumps(data: Any) -> str:
    """Records are written with sorted keys so data-branch diffs stay readable."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def load(path: str | Path) -> RunRecord:
    """Read one record file; RecordError names the file and the reason."""
    text = read_text(path, RecordError)
    return RunRecord.from_dict(parse_json(text, str(path)), str(path))


def parse_json(text: str, source: str = "record", object_pairs_hook=None) -> Any:
    """json.loads, refusing what JSON itself does not allow and Python would
    take: NaN/Infinity (also 1e999, which overflows to inf), an integer too
    long to convert, nesting deeper than the parser's recursion limit. Each
    is a RecordError naming `source` (and the field), never a traceback."""
    try:
        if object_pairs_hook is None:
            data = _STRICT.decode(text)
        else:
            data = json.JSONDecoder(object_pairs_hook=object_pairs_hook, parse_constant=_non_finite,
                                    parse_float=_finite_float).decode(text)
    except _NonFinite:
        # Parse again taking NaN/Infinity, only to name the field.
        where = _first(json.loads(text), "", lambda v: isinstance(v, float) and not math.isfinite(v))
        field = where[0] or "(top level)" if where else "(unknown)"
        value = where[1] if where else "NaN or Infinity"
        raise RecordError(f"{source}: field {field} is {value!r}; expected a finite number "
                          "(JSON has no NaN or Infinity)") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{source}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); truncated?") from None
    except RecursionError:
        raise RecordError(f"{source}: JSON nested too deeply to read; expected a run record (a few levels)") from None
    except ValueError as e:  # int() past sys.get_int_max_str_digits()
        raise RecordError(f"{source}: not valid JSON ({' '.join(str(e).split())[:160]})") from None
    if _SURROGATE_ESCAPE.search(text):  # the walk only when the text can hold one  # a lone "\ud800" decodes, then no output can encode it
        where = _first(data, "", lambda v: isinstance(v, str) and _LONE_SURROGATE.search(v) is not None)
        if where is not None:
            raise RecordError(f"{source}: field {where[0] or '(a key)'} holds a lone UTF-16 surrogate "
                              f"({ascii(_LONE_SURROGATE.search(where[1]).group())}); expected valid Unicode text")
    return data


class _NonFinite(ValueError):
    """NaN, Infinity, or a number that overflows to infinity (1e999, or 400 digits)."""


def _non_finite(token: str):
    raise _NonFinite(token)


def _finite_float(token: str) -> float:
    v = float(token)
    if not math.isfinite(v):
        raise _NonFinite(token)
    return v


# One decoder for every read (json.loads with hooks would build one per call).
_STRICT = json.JSONDecoder(parse_constant=_non_finite, parse_float=_finite_float)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _first(value: Any, where: str, bad) -> tuple[str, Any] | None:
    """(field path, value) of the first scalar or key in `value` that is `bad`."""
    if bad(value):
        return where, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        if isinstance(k, str) and bad(k):
            return where, k
        found = _first(v, f"{where}[{k}]" if isinstance(k, int) else (f"{where}.{k}" if where else k), bad)
        if found:
            return found
    return None


def write(record: RunRecord, out_dir: str | Path, relpath: str | None = None) -> Path:
    """Write atomically (temp file + rename) so a crash never leaves half a record.

    Refuses to replace an existing file with other content: records are never edited.
    """
    target = Path(out_dir) / (relpath or Path(record.relpath()).name)
    text = record.to_json()
    if already_there(target, text):
        return target
    return atomic.write_text(target, text)


# The one refuse-if-different rule, for files (write, import-gab) and for the
# data branch's blobs (bench/records/store.py): records are never edited.

def same_record_text(old: str, new: str) -> bool:
    """The same data, whatever the layout (an older writer's indentation)."""
    if old == new:
        return True
    try:
        return json.loads(old) == json.loads(new)
    except ValueError:
        return False


def already_there(target: Path, text: str, source: str | None = None) -> bool:
    """True when `target` holds this record already (writing is a no-op),
    False when it is free; RecordError when it holds something else."""
    if not target.exists():
        return False
    if same_record_text(target.read_text(encoding="utf-8"), text):
        return True
    than = f" than {source}" if source else ""
    raise RecordError(f"{target}: already exists with other content{than}; records are never edited")
