import json

import pytest

from bench.records import record
from tests.helpers import failed, make_record, ok


def test_roundtrip_and_path(tmp_path):
    rec = make_record([ok("cnn", "train", 100.0), failed("mlp", "train", "oom")], run_id="42", attempt=2)
    assert rec.relpath() == "runs/2026/11/01/jax--local-cpu--42-2.json"
    path = record.write(rec, tmp_path, rec.relpath())
    text = path.read_text()
    assert json.loads(text) == rec.data
    assert text.index('"environment"') < text.index('"results"') < text.index('"run"')  # sorted keys
    assert record.load(path).results[1].error.kind == "oom"


def test_write_refuses_to_edit(tmp_path):
    rec = make_record([ok("cnn", "train", 100.0)], run_id="1")
    record.write(rec, tmp_path, rec.relpath())
    record.write(rec, tmp_path, rec.relpath())  # identical: a no-op
    other = make_record([ok("cnn", "train", 200.0)], run_id="1")
    with pytest.raises(record.RecordError, match="never edited"):
        record.write(other, tmp_path, other.relpath())


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["results"][0].update(value=-1), "results[0].value"),
    (lambda d: d["results"][0].update(value=float("nan")), "results[0].value"),
    (lambda d: d["results"][0].update(samples=[1.0, float("inf")]), "results[0].samples[1]"),
    (lambda d: d["run"].pop("attempt"), "run"),
    (lambda d: d["results"][0].update(status="weird"), "results[0].status"),
    (lambda d: d["results"][0].pop("value"), "results[0]"),
])
def test_invalid_records_name_the_field(mutate, field):
    d = json.loads(json.dumps(make_record([ok("cnn", "train", 100.0)]).data))
    mutate(d)
    with pytest.raises(record.RecordError) as e:
        record.validate(d, "x.json")
    assert str(e.value).startswith(f"x.json: field {field}")


def test_unknown_version_says_what_to_do():
    d = json.loads(json.dumps(make_record([ok("cnn", "train", 1.0)]).data))
    d["schema_version"] = 2
    with pytest.raises(record.RecordError, match="newer than this bench reads.*update bench"):
        record.validate(d, "x.json")


def test_load_names_truncated_file(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"schema_version": 1, "run": {')
    with pytest.raises(record.RecordError, match=r"t\.json: not valid JSON.*truncated"):
        record.load(p)


def test_series_keeps_only_the_newest_units_points():
    from datetime import timedelta

    from bench.analyse.series import build_series
    from tests.helpers import T0
    recs = [make_record([ok("fs", "bench", v, unit=u)], started_at=T0 + timedelta(days=i))
            for i, (v, u) in enumerate([(900.0, "MiB/s"), (910.0, "MiB/s"), (0.9, "GiB/s"), (0.89, "GiB/s")])]
    s = build_series(recs)[("jax", "local-cpu", "fs", "bench")]
    assert s.unit == "GiB/s" and s.values() == [0.9, 0.89]


def test_one_refuse_if_different_rule_for_files(tmp_path):
    from bench.records.record import RecordError, already_there, same_record_text
    target = tmp_path / "r.json"
    assert already_there(target, '{"a": 1}') is False
    target.write_text('{\n  "a": 1\n}\n')
    assert already_there(target, '{"a": 1}') is True  # the same data in another layout
    assert same_record_text('{"a": 1}', '{"a": 1}') and not same_record_text('{"a": 1}', "not json")
    with pytest.raises(RecordError, match=r"r.json: already exists with other content than new.json; "
                                          r"records are never edited"):
        already_there(target, '{"a": 2}', "new.json")
    assert target.read_text() == '{\n  "a": 1\n}\n'


def test_one_record_folder_walker_skips_temp_files(tmp_path):
    from bench.records.history import json_files
    for rel in ("runs/b/2.json", "runs/a/1.json", "runs/a/.tmp-x.json", "runs/a/notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    assert json_files(tmp_path) == [str(tmp_path / "runs/a/1.json"), str(tmp_path / "runs/b/2.json")]
