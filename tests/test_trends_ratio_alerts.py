"""Where a device runs a reference build, its '<mode>.vs-ref' series alerts:
its status drives `bench alert`, the summary line, `report --status` and
`--fail-on`, and the samples/s row beside it is context."""

import json
import math
from datetime import timedelta
from types import SimpleNamespace

import pytest

from bench.ci import alert
from bench.commands import report
from bench.config import Trends
from bench.present.markdown import note
from bench.present.table import alerting, build_rows, summary
from tests.corpus import make_series

FLAT = [1000.0 + 10 * math.sin(2.4 * i) for i in range(36)]
RATIO = [1.0 + 0.004 * math.sin(2.4 * i) for i in range(36)]
KEY = ("jax", "cpu", "cnn", "train")
REF_KEY = ("jax", "cpu", "cnn", "train.vs-ref")


def rows(speed_tail, ratio_tail, with_ratio=True):
    series = {KEY: make_series(FLAT + speed_tail, key=KEY)}
    if with_ratio:
        series[REF_KEY] = make_series(RATIO + ratio_tail, key=REF_KEY)
    return build_rows(series, Trends())


def test_a_slow_host_moves_samples_per_second_but_the_ratio_decides(capsys):
    # samples/s -10 % for three nights (the host), the ratio to the reference holds
    r = rows([900.0, 901.0, 899.0], [1.0, 1.001, 0.999])
    by_key = {x.key: x for x in r}
    assert by_key[KEY].status == "Regressed" and by_key[KEY].ratio_status == "Steady"
    assert [x.key for x in alerting(r)] == [REF_KEY]
    assert summary(r) == "1 Steady (samples/s beside a reference build: 1 Regressed)"
    assert "train.vs-ref (the ratio to the reference build) alerts, Steady" in note(by_key[KEY])
    assert report._fail_on("regressed", r) == 0
    assert _written(r, "Regressed", capsys) == []
    assert alert.plan(alerting(r), [], 0.015, {}) == []


def test_a_keras_slowdown_shows_in_the_ratio_and_alerts_once(capsys):
    r = rows([970.0, 969.0, 971.0], [0.97, 0.971, 0.969])  # -3 % in both
    assert summary(r) == "1 Regressed (samples/s beside a reference build: 1 Regressed)"
    assert report._fail_on("regressed", r) == 1
    assert "1 Regressed: jax/cpu/cnn/train.vs-ref" in capsys.readouterr().err
    assert sorted(x.key for x in _written(r, "Regressed", capsys)) == [KEY, REF_KEY]
    actions = alert.plan(alerting(r), [], 0.015, {})
    assert [(a.kind, a.series) for a in actions] == [("open", "jax/cpu/cnn/train.vs-ref")]


def test_without_a_reference_build_samples_per_second_alerts():
    r = rows([900.0, 901.0, 899.0], [], with_ratio=False)
    assert r[0].ratio_status is None and alerting(r) == r
    assert summary(r) == "1 Regressed"
    assert [a.series for a in alert.plan(alerting(r), [], 0.015, {})] == ["jax/cpu/cnn/train"]


def _written(r, status, capsys):
    """The rows `report --status STATUS --format json` prints."""
    capsys.readouterr()
    args = SimpleNamespace(status=[status], format="json", out=None, readme=None, plots=None, sort="name")
    report.write(args, {}, r)
    keys = {tuple(d[k] for k in ("backend", "device", "model", "mode")) for d in json.loads(capsys.readouterr().out)}
    return [x for x in r if x.key in keys]


def test_the_ratios_pairs_give_each_night_its_own_standard_error():
    from bench.analyse.series import reference_series
    from bench.measure.reference import log_se
    from tests.helpers import T0, make_record, ok

    logs = [0.01, -0.02, 0.03, 0.0]
    assert log_se(logs) == pytest.approx(1.2533 * 0.020817 / 2, rel=1e-4)  # 1.2533 * SD / sqrt(n)
    assert log_se(logs[:2]) is None  # too few pairs to tell
    recs = [make_record([ok("cnn", "train", 90.0, reference={"value": 100.0, "ratio": 0.9, "pairs": 8,
                                                              **({"log_se": 0.004} if se else {})})],
                        started_at=T0 + timedelta(days=i),
                        run={"ab": {"id": "r", "side": "b", "python": "py", "reference": True, "mode": "duet"}})
            for i, se in enumerate((True, False))]
    (s,) = reference_series(recs).values()
    assert [p.se for p in s.points] == [0.004, None]
