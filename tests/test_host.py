"""The host's own speed from the reference workload (bench/analyse/host.py), and
what the status table's note says of it, on made-up nights."""

import json
from datetime import timedelta

import pytest

from bench.analyse import host
from bench.analyse.series import all_series, build_series
from bench.config import Trends
from bench.present.markdown import note
from bench.present.table import build_rows, rows_to_json
from tests.helpers import T0, make_record, ok


def worker(ref, **extra):
    return {"value": 1000.0, "samples": [1000.0], "status": "ok", "disturbed": False,
            "reference_seconds": ref, **extra}


def test_a_nights_reading_is_the_median_over_the_workers_that_count():
    data = {"results": [
        {"workers": [worker(0.002), worker(0.004), worker(0.003)]},
        {"workers": [worker(0.001, calibration=True), worker(0.009, alone=True),  # ran outside the duets
                     {"status": "failed", "reference_seconds": 0.009},
                     worker("2ms"), worker(True), worker(-1.0), worker(float("inf")), "junk",
                     worker(1e308), worker(1e-300), worker(0.0)]},  # valid numbers, yet no reading
        {"model": "mlp"},  # protocol 1: no workers
    ]}
    assert host.seconds(data) == 0.003
    assert host.seconds({"results": [{"model": "mlp", "value": 1.0}]}) is None


def test_a_night_is_read_by_its_workers_median_canary_where_they_record_one():
    both = {"results": [{"workers": [worker(0.002, reference_median_seconds=0.0031),
                                     worker(0.003, reference_median_seconds=0.0035),
                                     worker(0.004, reference_median_seconds="junk")]}]}
    assert host.reading(both) == (host.TYPICAL, 0.0033)
    assert host.basis(both) == host.TYPICAL and host.seconds(both) == 0.0033
    assert host.seconds(both, host.FASTEST) == 0.003
    fastest_only = {"results": [{"workers": [worker(0.002), worker(0.004)]}]}
    assert (host.basis(fastest_only), host.seconds(fastest_only)) == (host.FASTEST, 0.003)
    assert host.seconds(fastest_only, host.TYPICAL) is None
    assert host.basis({"results": [{"model": "mlp"}]}) is None
    assert host.reading({"results": [{"model": "mlp"}]}) is None


def test_a_shift_is_the_nights_against_the_usual_ones_slower_positive():
    readings = [0.0020, 0.0021, None, 0.0019, 0.0020, 0.0023, 0.0023]
    assert host.shift(readings, 5, before=36) == pytest.approx(0.15)  # 2.3 ms against a median 2.0
    assert host.shift(readings, 5, 6, before=36) == pytest.approx(0.15)
    assert host.shift(readings, 4, 5, before=3) == pytest.approx(0.0)  # 2.1, none, 1.9: a median 2.0
    assert host.shift(readings, 4, 5, before=2) == pytest.approx(0.0020 / 0.0019 - 1)
    assert host.shift(readings, 6, before=1) == pytest.approx(0.0)  # only the night before: 2.3
    assert host.shift(readings, 2, 3, before=36) is None  # no reading that night
    assert host.shift(readings, 0, before=36) is None  # nothing before
    assert host.shift(readings, 7, before=36) is None


def test_readings_under_another_protocol_or_numpy_are_not_compared():
    def points(*protocols_and_numpys):
        recs = [make_record([ok("mlp", "train", 1000.0, workers=[worker(0.002 + i / 1000)])],
                            started_at=T0 + timedelta(days=i), environment={"backend_versions": {"numpy": numpy}},
                            run={"protocol": {"name": "workers", "version": v}})
                for i, (v, numpy) in enumerate(protocols_and_numpys)]
        return build_series(recs, speed=True)[("jax", "local-cpu", "mlp", "train")].points

    got = host.readings(points((10, "2.3.1"), (11, "2.3.1"), (11, "2.4.0"), (11, "2.3.1")), 3)
    assert got == [None, 0.003, None, 0.005]


def test_a_night_read_by_the_median_canary_is_not_compared_with_nights_read_by_the_fastest():
    recs = [make_record([ok("mlp", "train", 1000.0, workers=[
        worker(0.002, **({"reference_median_seconds": 0.0024} if i >= 2 else {}))])],
        started_at=T0 + timedelta(days=i)) for i in range(4)]
    points = build_series(recs, speed=True)[("jax", "local-cpu", "mlp", "train")].points
    assert [p.host_basis for p in points] == [host.FASTEST, host.FASTEST, host.TYPICAL, host.TYPICAL]
    assert host.readings(points, 3) == [None, None, 0.0024, 0.0024]
    assert host.night_shifts(points, before=36) == [None, 0.0, None, 0.0]


def test_the_note_words():
    assert host.describe(None) == ""
    assert host.describe(0.012) == "the host as before (reference workload +1.2 %)"
    assert host.describe(-0.049) == "the host as before (reference workload -4.9 %)"
    assert host.describe(0.14) == "the host 14.0 % slower (reference workload)"
    assert host.describe(-0.08) == "the host 8.0 % faster (reference workload)"


def rows(values, refs, mode="train"):
    recs = [make_record([ok("mlp", mode, v, workers=[worker(r)] if r else [])], started_at=T0 + timedelta(days=i))
            for i, (v, r) in enumerate(zip(values, refs))]
    return build_rows(build_series(recs, speed=True), Trends())


FLAT = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4


def test_a_regression_while_the_host_held_says_so():
    [row] = rows(FLAT + [900.0, 902.0, 899.0], [0.0020] * 20 + [0.00202] * 3)
    assert row.status == "Regressed"
    assert note(row).startswith("-10.0%: 1.0k → 900 samples/s; Keras ")
    assert note(row).endswith("; the host as before (reference workload +1.0 %)")


def test_a_regression_on_a_slower_host_says_how_much_slower_since_the_change():
    [row] = rows(FLAT + [900.0, 902.0, 899.0], [0.0020] * 20 + [0.0023, 0.0022, 0.0024])
    assert row.status == "Regressed" and row.host == pytest.approx(0.15)
    assert note(row).endswith("; the host 15.0 % slower (reference workload)")
    assert rows_to_json([row])[0]["host"] == pytest.approx(0.15)  # report --format json


def test_one_off_night_names_the_hosts_speed_that_night():
    [row] = rows(FLAT + [800.0], [0.0020] * 20 + [0.0026])
    assert note(row) == "one night off 1.0k samples/s: not a change; the host 30.0 % slower (reference workload)"
    # back at the level the next night: the note speaks of the off night, and so does the host
    [row] = rows(FLAT + [800.0, 1000.0], [0.0020] * 20 + [0.0026, 0.0020])
    assert note(row) == ("back at 1.0k samples/s after an off night; "
                         "the host 30.0 % slower (reference workload)")


def test_a_watch_row_reads_the_newest_two_nights():
    [row] = rows(FLAT + [900.0, 905.0], [0.0020] * 20 + [0.0022, 0.0022])
    assert row.status == "Watch"
    assert note(row).endswith(": a change if the next night agrees; the host 10.0 % slower (reference workload)")


def test_no_host_words_without_readings_or_without_a_note():
    [row] = rows(FLAT + [900.0, 902.0, 899.0], [None] * 23)
    assert row.status == "Regressed" and row.host is None and "host" not in note(row)
    [row] = rows(FLAT, [0.0020] * 19 + [0.0030])  # Steady, nothing off: no note at all
    assert row.status == "Steady" and row.host is None and note(row) == ""


def test_memory_and_reference_ratio_rows_do_not_speak_of_the_host():
    # a memory peak is not a speed, and a ratio to a reference build shares the host on both sides
    recs = [make_record([ok("mlp", "train", 1000.0, workers=[worker(0.0030 if i == 20 else 0.0020)],
                            memory={"host_peak_bytes": 800 if i == 20 else 500 + i % 3},
                            reference={"value": 1000.0, "ratio": 0.8 if i == 20 else 1.0 + i % 3 / 100,
                                       "pairs": 8})],
                        started_at=T0 + timedelta(days=i),
                        run={"ab": {"id": "r", "side": "b", "python": "py", "reference": True, "mode": "duet"}})
            for i in range(21)]
    got = {r.mode: r for r in build_rows(all_series(recs), Trends())}
    assert set(got) == {"train", "train.host-memory", "train.vs-ref"}
    assert got["train.host-memory"].delta_off == "worse" and got["train.host-memory"].host is None
    assert got["train.vs-ref"].delta_off == "worse" and got["train.vs-ref"].host is None


def test_show_lists_each_nights_host_against_the_nights_before(tmp_path, capsys):
    from bench import cli
    from tests.helpers import write_data

    refs = [0.0020] * 5 + [None, 0.0023]
    recs = [make_record([ok("mlp", "train", 1000.0, workers=[worker(r)] if r else [])],
                        started_at=T0 + timedelta(days=i)) for i, r in enumerate(refs)]
    data = write_data(recs, tmp_path / "data")
    assert cli.main(["show", "jax/local-cpu/mlp/train", "--data", str(data)]) == 0
    hosts = [line.split()[-1] for line in capsys.readouterr().out.splitlines()[2:]]
    assert hosts == ["—", "+0.0%", "+0.0%", "+0.0%", "+0.0%", "—", "+15.0%"]


def nights_and_head(tmp_path, refs, head_ref, *, head_numpy="2.3.1", head_median=None):
    """A data folder of one record a night (host readings `refs`) and a pull-request head record."""
    from bench.records.record import write
    from tests.helpers import write_data

    recs = [make_record([ok("mlp", "train", 1000.0 + i % 3, samples=[1000.0 + i % 3] * 3, workers=[worker(r)])],
                        started_at=T0 + timedelta(days=i), environment={"backend_versions": {"numpy": "2.3.1"}})
            for i, r in enumerate(refs)]
    data = write_data(recs, tmp_path / "data")
    median = {} if head_median is None else {"reference_median_seconds": head_median}
    head = make_record([ok("mlp", "train", 1001.0, samples=[1001.0] * 7, workers=[worker(head_ref, **median)])],
                       started_at=T0 + timedelta(days=len(refs)), event="pull_request",
                       environment={"backend_versions": {"numpy": head_numpy}})
    return data, write(head, tmp_path / "head")


def compare_text(data, head, *extra):
    import contextlib
    import io

    from bench import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["compare", "--base", str(data), "--head", str(head), *extra]) == 0
    return out.getvalue()


def test_compare_against_past_nights_says_how_fast_the_host_ran_for_the_head(tmp_path):
    # the last 7 nights read 2.0 ms (older nights, 3.0 ms, are not the baseline); the head 2.3 ms
    data, head = nights_and_head(tmp_path, [0.0030] * 8 + [0.0020] * 7, 0.0023)
    text = compare_text(data, head, "--nights", "7")
    assert ("The host against the baseline (its reference workload runs no Keras code; a slower host slows every "
            "row):\n\n- jax on local-cpu: the host 15.0 % slower (reference workload)\n") in text
    got = json.loads(compare_text(data, head, "--nights", "7", "--format", "json"))["hosts"]
    assert got == [{"backend": "jax", "device": "local-cpu", "shift": pytest.approx(0.15)}]


def test_compare_says_the_host_held_and_says_nothing_across_numpy_versions(tmp_path):
    data, head = nights_and_head(tmp_path, [0.0020] * 7, 0.00202)
    assert "- jax on local-cpu: the host as before (reference workload +1.0 %)\n" in compare_text(data, head)
    data, head = nights_and_head(tmp_path / "other", [0.0020] * 7, 0.0030, head_numpy="2.4.0")
    text = compare_text(data, head)
    assert "The host against" not in text
    assert json.loads(compare_text(data, head, "--format", "json"))["hosts"] == []
    # a head read by its median canary, past nights by their fastest: two readings, not compared
    data, head = nights_and_head(tmp_path / "median", [0.0020] * 7, 0.0030, head_median=0.0031)
    assert "The host against" not in compare_text(data, head)


def test_a_hostile_reading_in_a_head_or_a_night_is_no_record(tmp_path):
    # 1e308 s or 1e-300 s would make an infinite shift that no JSON writer takes:
    # the contract bounds every number of a result (bench.records.extensions.LARGEST,
    # SMALLEST), so such a record is refused (the gate) or skipped (readers)
    from bench.records.record import RecordError
    with pytest.raises(RecordError, match=r"reference_seconds is 1e\+308; expected 0 or a number in \[1e-12, 1e\+15\]"):
        nights_and_head(tmp_path, [0.0020] * 7, 1e308)
    with pytest.raises(RecordError, match=r"reference_seconds is 1e-300"):
        nights_and_head(tmp_path / "tiny", [1e-300] * 7, 0.0020)


def test_shifts_by_night_are_night_shifts_of_the_points_columns():
    recs = [make_record([ok("mlp", "train", 1000.0, workers=[worker(0.002 * (1.2 if i == 5 else 1))])],
                        started_at=T0 + timedelta(days=i), environment={"backend_versions": {"numpy": "2.3.1"}},
                        run={"protocol": {"name": "workers", "version": 11 if i < 3 else 12}}) for i in range(8)]
    points = build_series(recs, speed=True)[("jax", "local-cpu", "mlp", "train")].points
    columns = ([p.protocol for p in points], [p.env for p in points], [p.host_basis for p in points],
               [p.host for p in points])
    got = host.shifts_by_night(*columns, before=36)
    assert got == host.night_shifts(points, before=36)
    assert got[5] == pytest.approx(0.2)  # the slow night, against the nights of its protocol before it
    assert got[3] is None  # the first night of protocol 12 has none before it to compare with


def test_a_series_without_host_readings_has_no_shift_on_any_night():
    assert host.shifts_by_night(["workers v12"] * 3, [()] * 3, [None] * 3, [None] * 3, before=36) == [None] * 3
