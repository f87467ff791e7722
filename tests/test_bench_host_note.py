"""studies/bench_host_note.py on made-up kept sets: which off rows the night's host
reading calls slower, and how rows moved on nights it read slower."""

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_host_note.py"
spec = importlib.util.spec_from_file_location("bench_host_note", SCRIPT)
note = importlib.util.module_from_spec(spec)
spec.loader.exec_module(note)


def write_set(folder: Path, hosts_ms, train, latency):
    """One jax record per invocation: its workers' reference workload and two results."""
    folder.mkdir(parents=True)
    for i, (ms, t, lat) in enumerate(zip(hosts_ms, train, latency)):
        workers = [{"status": "ok", "value": 1.0, "disturbed": False, "reference_seconds": ms / 1000}] * 3
        results = [{"model": "mlp", "mode": "train", "status": "ok", "value": t, "better": "bigger",
                    "workers": workers},
                   {"model": "mlp", "mode": "latency", "status": "ok", "value": lat, "better": "smaller",
                    "workers": workers}]
        record = {"target": {"backend": "jax"}, "run": {"started_at": f"2026-12-06T01:0{i}:00Z"}, "results": results}
        (folder / f"jax--local-cpu--run{i}-1.json").write_text(json.dumps(record))


def test_off_rows_against_the_hosts_reading(tmp_path):
    # invocation 1 ran on a host 20 % slower: both rows 10-11 % worse; invocation 4's train
    # row is 6.4 % worse on a host as before (what a Keras change would look like)
    write_set(tmp_path / "set", [2.4, 2.0, 2.0, 2.0, 2.0], [900.0, 1000.0, 1000.0, 940.0, 1000.0],
              [1.1, 1.0, 1.0, 1.0, 1.0])
    lines = note.report([tmp_path / "set"], 0.05)
    assert lines[0] == ("5 invocations, 10 rows; an off night is a row 5 % or more worse than the set's "
                        "other invocations")
    assert lines[1] == "host shift against the row's move, per row: Spearman 0.73 (p=0.017)"
    # 20 % slower clears every threshold; the other nights' moves: -3, -3, -3, 0, 0, 0, 0, +6.4 %
    assert lines[3:] == [f"{t:>5} %    2 / 1 / 0 of 3{' ' * 29}2 of 2, +10.6 %{' ' * 30}1 of 8, +0.0 %"
                         for t in (3, 5, 8, 10)]


def test_a_missing_folder_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["bench_host_note.py", str(tmp_path / "nope")])
    assert note.main() == 2
    assert capsys.readouterr().err == f"bench_host_note: not a folder: {tmp_path / 'nope'}\n"


def test_rescaled_by_the_host_reading(tmp_path):
    # invocation 0 on a host 20 % slower: train slowed by half of that (in logs), latency
    # by all of it, so train holds still at power 0.5 and latency at power 1
    write_set(tmp_path / "set", [2.4, 2.0, 2.0, 2.0, 2.0], [1000 / 1.2 ** 0.5, 1000.0, 1000.0, 1000.0, 1000.0],
              [1.2, 1.0, 1.0, 1.0, 1.0])
    assert note.scaled_table([tmp_path / "set"]) == [
        "2 rows, each headline times (night's host reading / the set's usual) ** power",
        "power   within ±5 %    within ±3 %",
        "0.00    0              0",  # as recorded: train -8.7 %, latency +20 %
        "0.25    1              0",  # train -4.5 %
        "0.50    1              1",  # train exact, latency +9.5 %
        "0.75    2              0",  # both 4.7 % off, either way
        "1.00    1              1",  # latency exact, train +9.5 %
    ]


def test_rescaling_needs_a_reading_in_every_invocation(tmp_path):
    write_set(tmp_path / "set", [0.0, 2.0, 2.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert note.scaled_table([tmp_path / "set"]) == [
        f"no set with a host reading in every invocation in {tmp_path / 'set'}"]
