"""bench.records.fastschema agrees with jsonschema on many mutated run records, so
the fast path never accepts a record the schema refuses."""

import copy
import json

import jsonschema
import pytest

from bench.records import record
from bench.records.fastschema import compile_schema, equal
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


def base_record() -> dict:
    base = json.loads(json.dumps(make_record(
        [ok("cnn", "train", 100.0, batch_size=32, better="smaller", unit="ms"), failed("mlp", "train", "oom"),
         skipped("mlp", "predict")], url="https://example.org/run").data))
    base["run"]["finished_at"] = "2026-11-01T03:00:00Z"
    return base


def test_compiled_check_equals_jsonschema():
    base = base_record()
    full = record._validator()
    fast = compile_schema(full.schema, full.format_checker)
    assert fast is not None
    n = 0
    for doc in mutations(base):
        assert fast(doc) == full.is_valid(doc), json.dumps(doc, allow_nan=True)
        n += 1
    assert n > 900
    for doc in ([], "x", None, 1, {"schema_version": 1.0, **{k: v for k, v in base.items() if k != "schema_version"}}):
        assert fast(doc) == full.is_valid(doc)


def test_unsupported_keywords_fall_back():
    assert compile_schema({"type": "object", "$ref": "#/x"}) is None
    assert compile_schema({"items": {"pattern": "^a"}}) is None
    assert compile_schema({"prefixItems": [{"type": "string"}]}) is None
    check = compile_schema({"type": ["integer", "null"], "minimum": 2})
    assert [check(v) for v in (2, 2.0, None, 1, True, "3")] == [True, True, True, False, False, False]


def test_equal_keeps_booleans_apart():
    assert equal(1, 1.0) and not equal(True, 1) and not equal([0], [False]) and equal({"a": [1]}, {"a": [1.0]})


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
