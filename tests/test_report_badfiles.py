"""Bad record files never stop the report, are each named on stderr, and
nothing in the data folder changes (content, mtime, or new files)."""

import hashlib
import json
from datetime import timedelta
from pathlib import Path

from bench import cli
from tests.helpers import T0, make_record, nightly_series, ok, write_data


def snapshot(root: Path) -> dict:
    """Every path with its content hash (files) and mtime (files and folders)."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                       p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


def bad_files(day_dir: Path) -> dict[str, str]:
    """name -> what stderr must say about it."""
    good = make_record([ok("cnn", "train", 100.0)], started_at=T0 + timedelta(days=2), run_id="x").data
    text = json.dumps(good)

    def variant(**change):
        d = json.loads(text)
        for dotted, value in change.items():
            *path, last = dotted.split("__")
            target = d
            for k in path:
                target = target[int(k)] if k.isdigit() else target[k]
            if value is KeyError:
                del target[last]
            else:
                target[last] = value
        return json.dumps(d, allow_nan=True)

    files = {
        "not-json.json": ("hello, not a record", "not valid JSON"),
        "truncated.json": (text[: len(text) // 2], "not valid JSON"),
        "no-run.json": (variant(run=KeyError), "'run' is a required property"),
        "future.json": (variant(schema_version=7), "schema_version 7 is newer than this bench reads"),
        "nan.json": (variant(results__0__value=float("nan")), "results[0].value is nan"),
        "inf-sample.json": (variant(results__0__samples=[1.0, float("inf")]), "results[0].samples[1]"),
        "zero.json": (variant(results__0__value=0), "results[0].value"),
        "negative.json": (variant(results__0__value=-5.0), "results[0].value"),
        "binary.json": (b"\xff\xfe\x00garbage", "not UTF-8"),
    }
    out = {}
    for name, (content, reason) in files.items():
        path = day_dir / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        out[name] = reason
    return out


def test_bad_files_are_skipped_named_and_left_alone(tmp_path, capsys):
    data = write_data(nightly_series([100.0, 101.0, 99.0, 100.0, 102.0, 100.0]), tmp_path / "data")
    reasons = bad_files(data / "runs" / "2026" / "11" / "03")
    before = snapshot(data)

    assert cli.main(["report", "--data", str(data)]) == 0
    out, err = capsys.readouterr()

    assert out.splitlines()[4].startswith("| jax | local-cpu | cnn | train | 100 | -2.0% |")
    assert out.splitlines()[4].endswith("| 6 | Steady |  |")
    lines = err.splitlines()
    for name, reason in reasons.items():
        mine = [line for line in lines if name in line]
        assert len(mine) == 1, (name, lines)
        assert reason in mine[0], (name, mine[0])
    assert lines[-1] == f"bench report: 6 run records read from {data}; {len(reasons)} skipped (named above)"
    assert snapshot(data) == before  # no file changed, none added (no cache, no temp file)
