"""run.night: the night a run is for (docs/DESIGN.md 'Points'), from the workflow
input through the record to the points. Fake clocks throughout."""

import json
import os
import subprocess
import sys
from datetime import date, datetime, timezone

import pytest

from bench import config
from bench.analyse.series import build_series
from bench.ci.night import choose_night, latest_night
from bench.measure.environment import run_info
from bench.records.record import RecordError, RunRecord
from tests.helpers import make_record, ok

ROOT = config.REPO_ROOT


def utc(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize("now, night", [
    ("2026-12-03T02:16:59Z", "2026-12-02"),  # a rerun before the next schedule: still last night
    ("2026-12-03T00:30:00Z", "2026-12-02"),  # after midnight UTC
    ("2026-12-03T02:17:00Z", "2026-12-03"),  # the schedule fires: a new night
    ("2026-12-03T05:40:00Z", "2026-12-03"),  # a scheduled run that GitHub started late
    ("2026-12-02T21:30:00-05:00", "2026-12-03"),  # any zone: 02:30 UTC
])
def test_the_latest_night_that_has_not_passed(now, night):
    assert latest_night(utc(now)).isoformat() == night


def test_a_requested_night_is_taken_when_it_has_started():
    now = utc("2026-12-03T01:00:00Z")
    assert choose_night("", now) == date(2026, 12, 2)
    assert choose_night(" 2026-11-30 ", now) == date(2026, 11, 30)
    with pytest.raises(RecordError, match=r"night is '2026-12-03', which has not started yet; expected 2026-12-02"):
        choose_night("2026-12-03", now)
    with pytest.raises(RecordError, match=r"night is '12/01/2026'; expected a UTC night as YYYY-MM-DD"):
        choose_night("12/01/2026", now)
    with pytest.raises(RecordError, match=r"night is '2026-02-30'; expected a real calendar date"):
        choose_night("2026-02-30", now)


def _night(*args, env=None):
    cmd = [sys.executable, "-m", "bench", "night", *args]
    return subprocess.run(cmd, env={**os.environ, **(env or {})}, capture_output=True, text=True, cwd=ROOT)


def test_night_verb_prints_the_step_output_line(tmp_path):
    out = _night("--created-at", "2026-12-03T01:00:00Z", "--github-output", str(tmp_path / "out"))
    assert (out.returncode, out.stdout) == (0, "night=2026-12-02\n")
    assert (tmp_path / "out").read_text() == "night=2026-12-02\n"
    bad = _night("--created-at", "2026-12-03T01:00:00Z", "--night", "tomorrow")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == ("bench night: error: night is 'tomorrow'; expected a UTC night as YYYY-MM-DD "
                          "such as 2026-12-01\n")


def test_a_rerun_the_next_morning_keeps_its_runs_night(gh):
    # Run 41 was created by last night's schedule; "Re-run all jobs" runs the
    # setup job again days later (this machine's clock): the night is still
    # the run's own, from GitHub's created_at, never the clock's.
    root, env = gh
    (root / "runs" / "41").mkdir(parents=True)
    (root / "runs" / "41.json").write_text(json.dumps({"created_at": "2026-11-02T02:20:00Z", "run_attempt": 2}))
    out = _night("--run", "41", env=env)
    assert (out.returncode, out.stdout) == (0, "night=2026-11-02\n"), out.stderr
    assert _night("--run", "41", "--night", "2026-11-01", env=env).stdout == "night=2026-11-01\n"
    late = _night("--run", "41", "--night", "2026-11-03", env=env)  # after the run's own night
    assert late.returncode == 2 and "which has not started yet; expected 2026-11-02" in late.stderr
    gone = _night("--run", "42", env=env)
    assert gone.returncode == 1 and gone.stderr.startswith("bench night: error: gh api repos/")
    assert "HTTP 404" in gone.stderr and "Traceback" not in gone.stderr
    assert _night("--run", "4;2", env=env).returncode == 2


def test_nightly_takes_the_night_from_its_runs_creation():
    import yaml

    setup = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())["jobs"]["setup"]
    (step,) = [s for s in setup["steps"] if s.get("id") == "night"]
    assert '--run "$GITHUB_RUN_ID"' in step["run"] and step["env"]["GH_TOKEN"] == "${{ github.token }}"
    assert setup["permissions"]["actions"] == "read"


def test_run_info_carries_bench_night():
    now = utc("2026-12-03T01:05:00Z")
    env = {"GITHUB_RUN_ID": "9", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "workflow_dispatch",
           "BENCH_NIGHT": "2026-12-02"}
    assert run_info(env, now)["night"] == "2026-12-02"
    assert "night" not in run_info({**env, "BENCH_NIGHT": ""}, now)
    with pytest.raises(RecordError, match="BENCH_NIGHT is '2026-13-01'; expected a real calendar date"):
        run_info({**env, "BENCH_NIGHT": "2026-13-01"}, now)


def _rec(value, started, night=None, **kw):
    rec = make_record([ok("mlp", "predict", value)], started_at=utc(started), **kw)
    if night is None:
        return rec
    data = json.loads(rec.to_json())
    data["run"]["night"] = night
    return RunRecord.from_dict(data, "made-up")


def test_a_rerun_after_midnight_replaces_last_nights_point_not_todays():
    records = [
        _rec(100.0, "2026-12-01T02:20:00Z", night="2026-12-01", run_id="1"),
        _rec(50.0, "2026-12-02T02:20:00Z", night="2026-12-02", run_id="2"),   # a bad night ...
        _rec(101.0, "2026-12-03T00:40:00Z", night="2026-12-02", run_id="3"),  # ... rerun after midnight
    ]
    (series,) = build_series(records).values()
    assert [(p.day.isoformat(), p.value, p.run_id) for p in series.points] == [
        ("2026-12-01", 100.0, "1"), ("2026-12-02", 101.0, "3")]


def test_records_without_night_keep_the_started_at_rule():
    records = [_rec(100.0, "2026-12-01T02:20:00Z", run_id="1"), _rec(102.0, "2026-12-02T00:40:00Z", run_id="2")]
    (series,) = build_series(records).values()
    assert [p.day.isoformat() for p in series.points] == ["2026-12-01", "2026-12-02"]


def test_a_malformed_night_is_refused_naming_the_field():
    with pytest.raises(RecordError, match=r"made-up: field run.night is 'yesterday'; expected a UTC night"):
        _rec(1.0, "2026-12-01T02:20:00Z", night="yesterday")
    with pytest.raises(RecordError, match=r"field run.night is 20261201; expected a UTC night"):
        _rec(1.0, "2026-12-01T02:20:00Z", night=20261201)


@pytest.mark.parametrize("source", ["pinned", "git"])
def test_only_the_nightly_makes_points(source):
    nightly = _rec(100.0, "2026-12-01T02:20:00Z", run_id="1")
    other = make_record([ok("mlp", "predict", 50.0)], started_at=utc("2026-12-01T05:00:00Z"), run_id="2",
                        environment={"keras_source": source})
    (series,) = build_series([nightly, other]).values()
    assert [(p.value, p.run_id) for p in series.points] == [(100.0, "1")]
