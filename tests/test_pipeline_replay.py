"""studies/pipeline_replay.py takes kept invocations night by night through
bench publish, report and alert (issue 53 item 6): a step made by how the
nights were built is called Regressed, its alert issue opens and confirm.yml
is dispatched, and the flat nights before it raise nothing."""

import json
import sys
from pathlib import Path

import pytest

from bench.records.record import write
from tests.helpers import load_study, make_record, ok

CLEAN = [1000, 1004, 997, 1002, 999, 1001, 998, 1003, 1000, 996, 1002, 999]
SLOWER = [920, 923, 918, 921]  # 8 % slower: the label is how these nights are built


def study():
    return load_study("pipeline_replay")


def kept(folder: Path, reference: bool = False) -> Path:
    """A studies/bench_native.py --keep folder: run-NN/ clean, inject-F-NN/ slower, one record
    each, or with `reference` a pair each: the nightly's (side b) and a frozen build's (side a)."""
    for name, values in (("run-{:02d}", CLEAN), ("inject-0.08-{:02d}", SLOWER)):
        for i, v in enumerate(values):
            run_id = f"local-{name.format(i)}"
            sides = {"": ("3.16.0.dev2026110102", "nightly")}
            if reference:
                sides = {"b": ("3.16.0.dev2026110102", "nightly"), "a": ("3.16.0.dev2026090102", "pinned")}
            for side, (version, source) in sides.items():
                rec = make_record([ok("mlp", "train", float(v))], keras_version=version,
                                  run_id=f"{run_id}-{side}" if side else run_id,
                                  environment={"keras_source": source},
                                  run={"ab": {"id": run_id, "side": side, "reference": True}} if side else None)
                write(rec, folder / name.format(i), Path(rec.relpath()).name)
    return folder


def test_a_built_step_goes_through_publish_report_alert_and_confirm(tmp_path, capsys, monkeypatch):
    source = kept(tmp_path / "native")
    before = {p: p.read_bytes() for p in source.rglob("*.json")}
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(source), "--out", str(tmp_path / "out")])
    assert study().main() == 0
    out = capsys.readouterr().out
    assert "jax/local-cpu/mlp/train                Regressed on injected night" in out
    assert "clean nights called Regressed or Faster: none" in out
    [result] = json.loads((tmp_path / "out" / "results.json").read_text())
    statuses = result["statuses"]["jax/local-cpu/mlp/train"]
    assert len(statuses) == len(CLEAN) + len(SLOWER)
    assert not {"Regressed", "Faster"} & set(statuses[:len(CLEAN)])
    first = statuses.index("Regressed")
    assert len(CLEAN) <= first < len(CLEAN) + 3  # within three injected nights
    assert f"jax/local-cpu/mlp/train                called in 1 of 1 (on injected night " \
        f"[{first - len(CLEAN) + 1}]); clean nights called: 0" in out
    assert [(i, line.split(":")[0]) for i, line in result["alerts"]] == [(first, "open"), (first, "confirm #1")]
    [dispatch] = result["dispatches"]
    assert dispatch["workflow"] == "confirm.yml"
    # the change window's two sides: the last clean night's build and the first slower one's
    assert (dispatch["inputs"]["good"], dispatch["inputs"]["bad"]) == \
        (f"3.16.0.dev2026110102+replay{len(CLEAN) - 1:02d}", f"3.16.0.dev2026110102+replay{len(CLEAN):02d}")
    assert {p: p.read_bytes() for p in source.rglob("*.json")} == before  # the kept records untouched


def test_a_reference_pair_publishes_both_sides_and_relabels_only_the_nightly(tmp_path, capsys, monkeypatch):
    """A set run with --reference: each night two records of one run, which must not collide."""
    source = kept(tmp_path / "native", reference=True)
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(source), "--out", str(tmp_path / "out")])
    assert study().main() == 0
    [result] = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "Regressed" in result["statuses"]["jax/local-cpu/mlp/train"]
    [dispatch] = result["dispatches"]
    assert dispatch["inputs"]["bad"] == f"3.16.0.dev2026110102+replay{len(CLEAN):02d}"


def test_a_folder_without_injected_nights_is_one_line(tmp_path, monkeypatch):
    run = make_record([ok("mlp", "train", 1000.0)])
    write(run, tmp_path / "run-00", "r.json")
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(tmp_path)])
    with pytest.raises(SystemExit) as e:
        study().main()
    assert str(e.value.code).startswith(f"pipeline_replay: {tmp_path} holds 1 clean (run-NN/) and 0 injected")


def test_a_folder_with_two_fractions_replays_the_one_chosen(tmp_path, capsys, monkeypatch):
    """bench_native.py --keep extends a folder; a second --inject adds a second step, and one
    history holds one step: the study asks which, and replays only that fraction's nights."""
    source = kept(tmp_path / "native")
    for i, v in enumerate([1001, 999, 1002]):  # a second fraction's nights, flat: they must stay out
        rec = make_record([ok("mlp", "train", float(v))], run_id=f"local-inject-0.02-{i:02d}")
        write(rec, source / f"inject-0.02-{i:02d}", Path(rec.relpath()).name)
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(source)])
    with pytest.raises(SystemExit) as e:
        study().main()
    assert str(e.value.code) == (f"pipeline_replay: {source} holds invocations injected at 0.02, 0.08; "
                                 f"choose one with --inject F")
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(source), "--inject", "0.05"])
    with pytest.raises(SystemExit) as e:
        study().main()
    assert "0 injected (inject-F-NN/, F = 0.05; it holds F = 0.02, 0.08)" in str(e.value.code)
    monkeypatch.setattr(sys, "argv", ["pipeline_replay.py", "--from", str(source), "--inject", "0.08",
                                      "--out", str(tmp_path / "out")])
    assert study().main() == 0
    [result] = json.loads((tmp_path / "out" / "results.json").read_text())
    assert result["nights"][len(CLEAN):] == [f"inject-0.08-{i:02d}" for i in range(len(SLOWER))]
    assert "Regressed" in result["statuses"]["jax/local-cpu/mlp/train"][len(CLEAN):]


def test_a_fraction_is_read_as_bench_native_names_it():
    module = study()
    assert [module.fraction_of(Path(n)) for n in ("inject-0.03-00", "inject-1e-05-12", "inject-0.1-03")] == \
        [0.03, 1e-05, 0.1]
    with pytest.raises(SystemExit) as e:
        module.fraction_of(Path("kept/inject-late-00"))
    assert str(e.value.code) == "kept/inject-late-00: expected a folder named inject-F-NN, F a fraction such as 0.03"
