"""Which ops moved: a Regressed series' window names them in the README note (bench report),
`bench show` and the alert issue, from the two nights' profiles; the record contract takes a
profile of each form and refuses a malformed one in one line."""

import json
from datetime import timedelta

import pytest

from bench import cli
from bench.records.record import RecordError, RunRecord
from tests.helpers import T0, make_record, ok, write_data

FLAT = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4
STEP = FLAT + [850.0, 855.0, 848.0, 852.0, 849.0]


def profile(conv_ms: float, extra: dict | None = None) -> dict:
    ops = {"aten::convolution_backward": conv_ms, "aten::mm": 5.0, "aten::add": 1.0, **(extra or {})}
    return {"profiler": "torch.profiler", "steps": 8, "wall_ms": sum(ops.values()) + 2.0,
            "device_ms": sum(ops.values()), "host_ms": 2.0, "compiles": 0, "retraces": 0,
            "ops": {"name": list(ops), "ms": list(ops.values()), "calls": [1.0] * len(ops)},
            "other_ms": 0.1, "other_ops": ["aten::relu"], "seconds": 1.2}


GOOD, BAD = profile(10.0), profile(13.8, {"aten::transpose": 2.0})
MOVED = "aten::convolution_backward +38 %, new aten::transpose"


def history(tmp_path, profiles=True):
    recs = [make_record([ok("cnn", "train", v, **({"profile": GOOD if i < len(FLAT) else BAD} if profiles else {}))],
                        backend="torch", started_at=T0 + timedelta(days=i), run_id=f"r{i}",
                        keras_version=f"3.14.0.dev{(T0 + timedelta(days=i)):%Y%m%d}01")
            for i, v in enumerate(STEP)]
    return write_data(recs, tmp_path / "data")


def test_the_readme_note_and_bench_show_name_the_ops_that_moved(tmp_path, capsys):
    data = history(tmp_path)
    assert cli.main(["report", "--data", str(data)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "| cnn | train |" in line)
    assert "Regressed" in row and f"ops: {MOVED}" in row.replace("\\", "")
    assert cli.main(["show", "torch/local-cpu/cnn/train", "--data", str(data)]) == 0
    assert f"which ops moved (last night before the change → first after, per step): {MOVED}\n" \
        in capsys.readouterr().out


def test_the_summary_store_reads_the_profiles_from_the_two_records(tmp_path, capsys):
    data = history(tmp_path)
    assert cli.main(["summary", "--data", str(data)]) == 0
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    [row] = [r for r in rows if r["model"] == "cnn"]
    assert row["ops"]["text"] == MOVED and row["ops"]["host_ms"] == [2.0, 2.0]


def test_without_profiles_nothing_is_named_and_nothing_breaks(tmp_path, capsys):
    data = history(tmp_path, profiles=False)
    assert cli.main(["report", "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "Regressed" in out and "ops:" not in out
    assert cli.main(["show", "torch/local-cpu/cnn/train", "--data", str(data)]) == 0
    assert "which ops moved" not in capsys.readouterr().out


def test_the_alert_issue_names_the_ops_that_moved(tmp_path, gh_here, capsys):
    data = history(tmp_path)
    assert cli.main(["alert", "--data", str(data), "--repo", "o/r"]) == 0
    [issue] = [json.loads(f.read_text()) for f in (gh_here / "issues").glob("*.json")]
    line = next(x for x in issue["body"].splitlines() if x.startswith("- which ops moved"))
    assert line.replace("\\", "") == f"- which ops moved (last nightly before → first after, per step): {MOVED}"


def _record(prof) -> dict:
    return make_record([ok("cnn", "train", 1.0, profile=prof)]).data


@pytest.mark.parametrize("prof", [GOOD, {"unavailable": "MLX has no op-level profiler", "seconds": 0.0},
                                  {"error": {"kind": "timeout", "message": "ran past 120 s"}, "seconds": 120.0}])
def test_every_form_of_profile_is_a_valid_record(prof):
    RunRecord.from_dict(_record(prof), source="made-up")


@pytest.mark.parametrize("prof, field", [
    ({**GOOD, "ops": {"name": ["a"], "ms": [1.0, 2.0], "calls": [1.0]}}, "results[0].profile.ops"),
    ({**GOOD, "steps": 0}, "results[0].profile.steps"),
    ({**GOOD, "host_ms": -1.0}, "results[0].profile.host_ms"),
    ({"unavailable": 3}, "results[0].profile.unavailable"),
    ("fast", "results[0].profile"),
])
def test_a_malformed_profile_is_refused_in_one_line_naming_the_field(prof, field):
    with pytest.raises(RecordError) as e:
        RunRecord.from_dict(_record(prof), source="made-up")
    assert f"field {field} is" in str(e.value) and "\n" not in str(e.value)
