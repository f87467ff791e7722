"""A device change names an OS update the environment diff shows (issue 56, item 1): the OS is
in the environment summary (envsummary's "os") and so in the summary store's states (format 2),
and the triangulation's evidence names it, read from the records or from the summary."""

import copy
from datetime import timedelta

import pytest

from bench import cli
from bench.analyse.envsummary import summary as env_summary
from bench.analyse.trends import assess
from bench.analyse.triangulate import triangulate
from bench.commands.source import load_series
from bench.config import load
from bench.records import summary
from bench.records.record import RunRecord, write
from bench.records.synthetic import Step, history

TRENDS = load().trends
TARGETS = (("jax", "gpu-a"), ("torch", "gpu-a"), ("jax", "gpu-b"), ("torch", "gpu-b"), ("jax", "cpu"), ("torch", "cpu"))
SLICES = (("cnn", "train"), ("cnn", "predict"), ("mlp", "train"), ("mlp", "predict"))
DAYS, STEP_DAY = 40, 34
OLD, NEW = "Linux-6.1.0-x86_64-with-glibc2.36", "Linux-6.8.0-x86_64-with-glibc2.39"


@pytest.fixture
def os_update(tmp_path):
    """gpu-a gets 15 % slower on every backend from night STEP_DAY, the night its OS was updated."""
    steps = {(b, "gpu-a", m, mode): [Step(STEP_DAY, 0.85)] for b in ("jax", "torch") for m, mode in SLICES}
    first = None
    for rec in history(DAYS, targets=TARGETS, seed=5, noise=0.01, dip_rate=0.0, fail_rate=0.0, steps=steps):
        first = first or rec.started_at
        data = copy.deepcopy(rec.data)
        late = rec.started_at >= first.replace(hour=0, minute=0) + timedelta(days=STEP_DAY)
        data["environment"]["os"] = NEW if rec.device == "gpu-a" and late else OLD
        rec = RunRecord.from_dict(data, source="made-up")
        write(rec, tmp_path, rec.relpath())
    return tmp_path


def evidence(data, via):
    loaded = load_series(data, ("headline", "reference"), verb="test", warn=None)
    assert loaded.via == via
    series = loaded.series
    newest = max(s.last_seen for s in series.values())
    origins = triangulate(series, {k: assess(s, newest, TRENDS) for k, s in series.items()})
    return {k: o for k, o in origins.items() if k[1] == "gpu-a"}


@pytest.mark.parametrize("via", ["records", "summary"])
def test_a_device_change_names_the_os_update(os_update, via):
    if via == "summary":
        assert cli.main(["summary", "--data", str(os_update)]) == 0
    got = evidence(os_update, via)
    assert len(got) == 8  # every series on gpu-a
    for o in got.values():
        assert o.kind == "device" and f"os {OLD} → {NEW}" in o.machine and not o.bisect_keras()
        assert f"os {OLD} → {NEW}" in o.text()


def test_the_os_is_an_environment_field_and_a_summary_of_format_1_is_stale(os_update, tmp_path):
    assert ("os", OLD) in env_summary({"os": OLD})
    assert cli.main(["summary", "--data", str(os_update)]) == 0
    cov = (os_update / summary.FOLDER / summary.COVERAGE)
    assert summary.read(os_update)[0] is not None
    cov.write_text(cov.read_text().replace('"format": 2', '"format": 1'))  # a summary written before the OS
    found, why = summary.read(os_update)
    assert found is None and "format 1; expected 2" in why
    assert cli.main(["summary", "--data", str(os_update)]) == 0  # rebuilt: every month
    assert summary.read(os_update)[0] is not None
