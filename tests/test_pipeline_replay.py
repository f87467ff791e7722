"""studies/pipeline_replay.py takes kept invocations night by night through
bench publish, report and alert (issue 53 item 6): a step made by how the
nights were built is called Regressed, its alert issue opens and confirm.yml
is dispatched, and the flat nights before it raise nothing."""

import importlib.util
import json
import sys
from pathlib import Path

from bench.records.record import write
from tests.helpers import make_record, ok

ROOT = Path(__file__).resolve().parent.parent
CLEAN = [1000, 1004, 997, 1002, 999, 1001, 998, 1003, 1000, 996, 1002, 999]
SLOWER = [920, 923, 918, 921]  # 8 % slower: the label is how these nights are built


def study():
    spec = importlib.util.spec_from_file_location("pipeline_replay", ROOT / "studies" / "pipeline_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kept(folder: Path) -> Path:
    """A studies/bench_native.py --keep folder: run-NN/ clean, inject-F-NN/ slower, one record each."""
    for name, values in (("run-{:02d}", CLEAN), ("inject-0.08-{:02d}", SLOWER)):
        for i, v in enumerate(values):
            rec = make_record([ok("mlp", "train", float(v))], run_id=f"local-{name.format(i)}")
            write(rec, folder / name.format(i), Path(rec.relpath()).name)
    return folder


def test_a_built_step_goes_through_publish_report_alert_and_confirm(tmp_path, capsys, monkeypatch):
    source = kept(tmp_path / "native")
    before = {p: p.read_bytes() for p in source.rglob("*.json")}
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(source), "--out", str(tmp_path / "out")])
    assert study().main() == 0
    out = capsys.readouterr().out
    assert "jax/mlp/train                Regressed on injected night" in out
    assert "calls on clean nights: none" in out
    [result] = json.loads((tmp_path / "out" / "results.json").read_text())
    statuses = result["statuses"]["jax/mlp/train"]
    assert len(statuses) == len(CLEAN) + len(SLOWER)
    assert not {"Regressed", "Faster"} & set(statuses[:len(CLEAN)])
    first = statuses.index("Regressed")
    assert len(CLEAN) <= first < len(CLEAN) + 3  # within three injected nights
    assert f"jax/mlp/train                called in 1 of 1 (on injected night [{first - len(CLEAN) + 1}]); " \
        "calls on clean nights: 0" in out
    assert [(i, line.split(":")[0]) for i, line in result["alerts"]] == [(first, "open"), (first, "confirm #1")]
    [dispatch] = result["dispatches"]
    assert dispatch["workflow"] == "confirm.yml"
    # the change window's two sides: the last clean night's build and the first slower one's
    assert (dispatch["inputs"]["good"], dispatch["inputs"]["bad"]) == \
        (f"3.16.0.dev2026110102+replay{len(CLEAN) - 1:02d}", f"3.16.0.dev2026110102+replay{len(CLEAN):02d}")
    assert {p: p.read_bytes() for p in source.rglob("*.json")} == before  # the kept records untouched


def test_a_folder_without_injected_nights_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "run-00").mkdir()
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(tmp_path)])
    try:
        study().main()
    except SystemExit as e:
        message = str(e.code)
    assert message.startswith(f"pipeline_replay: {tmp_path} holds 0 clean")
