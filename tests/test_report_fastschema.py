"""The schema fast path (fastjsonschema, bench.records.record._fast_check) on
many mutated run records: it never accepts a record jsonschema refuses, and
jsonschema still words every refusal."""

import copy
import json
import re

import jsonschema
import pytest

from bench.records import record
from tests.helpers import failed, make_record, ok, skipped

ODD = [None, True, False, 0, 1, -1, 1.0, 1.5, 0.0, -0.5, float("nan"), "", "x", "ok", "failed",
       [], [1], [1.0, "a"], {}, {"kind": "oom"}, {"kind": "oom", "message": "m"}]


def leaves(d, path=()):
    """Every (path) in a nested record, containers included."""
    yield path
    if isinstance(d, dict):
        for k, v in d.items():
            yield from leaves(v, path + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from leaves(v, path + (i,))


def mutations(doc):
    for path in leaves(doc):
        if not path:
            continue
        for value in ODD:
            d = copy.deepcopy(doc)
            target = d
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
            yield d
        if isinstance(path[-1], str):
            d = copy.deepcopy(doc)
            target = d
            for k in path[:-1]:
                target = target[k]
            del target[path[-1]]
            yield d


_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def base_record() -> dict:
    base = json.loads(json.dumps(make_record(
        [ok("cnn", "train", 100.0, batch_size=32, better="smaller", unit="ms"), failed("mlp", "train", "oom"),
         skipped("mlp", "predict")], url="https://example.org/run").data))
    base["run"]["finished_at"] = "2026-11-01T03:00:00Z"
    return base


def test_the_fast_check_never_accepts_what_jsonschema_refuses():
    """fastjsonschema may refuse more (then jsonschema judges); never less."""
    full = record._validator()
    fast = record._fast_check()
    n = 0
    for doc in mutations(base_record()):
        f, j = fast(doc), full.is_valid(doc)
        assert not (f and not j), json.dumps(doc, allow_nan=True)
        if j and not f:  # only `format: date-time`, which fastjsonschema checks and jsonschema
            # (without rfc3339-validator) does not: such a record goes to jsonschema, then parse_time
            assert any(not _RFC3339.match(str(doc["run"].get(k, "2026-01-01T00:00:00Z")))
                       for k in ("started_at", "finished_at")), json.dumps(doc, allow_nan=True)
        n += 1
    assert n > 900
    for doc in ([], "x", None, 1, {"schema_version": 1.0, **{k: v for k, v in base_record().items()
                                                               if k != "schema_version"}}):
        assert fast(doc) == full.is_valid(doc)


def test_the_fast_check_leaves_the_record_alone():
    doc = base_record()
    before = copy.deepcopy(doc)
    assert record._fast_check()(doc)
    assert doc == before  # no defaults filled in: a record is never edited


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["results"][0].update(value=-1), "results[0].value"),
    (lambda d: d["target"].update(device=""), "target.device"),
])
def test_messages_still_come_from_jsonschema(mutate, field):
    d = json.loads(json.dumps(make_record([ok("cnn", "train", 100.0)]).data))
    mutate(d)
    with pytest.raises(record.RecordError) as e:
        record.validate(d, "x.json")
    assert str(e.value).startswith(f"x.json: field {field}: ")
    assert jsonschema.validators.validator_for(record._validator().schema)  # the judge is unchanged
