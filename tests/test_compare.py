"""bench compare: verdicts on made-up histories, and the command itself."""

import json
import random
from datetime import timedelta
from statistics import median

import pytest

from bench import cli

from bench.records import synthetic
from bench.compare.baseline import baseline_from_history, baseline_from_records, load_baseline
from bench.compare.head import head_from_records
from bench.compare.outcome import build_outcome
from bench.compare.verdicts import compare
from bench.config import Compare
from tests.helpers import T0, failed, make_record, ok, skipped, write_data

SETTINGS = Compare(nights=7, min_change=0.03, alpha=0.01)
JAX, TORCH = ("jax", "rtx-5070-ti"), ("torch", "rtx-5070-ti")
LEVELS = {(model, mode): level for model, mode, level in synthetic.SERIES}


@pytest.fixture(scope="module")
def history():
    """30 made-up nights of two GPU targets: 2 % noise, the odd deep dip, the odd failure."""
    return list(synthetic.history(30, targets=(JAX, TORCH), seed=7))


def head_run(seed, factors=None, *, target=JAX, repeats=7, noise=0.02, dipped=None, drop=(), extra=()):
    """One pull-request run of `target`: every series at its made-up level times
    factors[(model, mode)], `repeats` repeats at `noise`; `dipped` gets one
    repeat at half speed."""
    rng = random.Random(seed)
    results = []
    for (model, mode), level in LEVELS.items():
        if (model, mode) in drop:
            continue
        samples = [level * (factors or {}).get((model, mode), 1.0) * (1 + rng.gauss(0, noise))
                   for _ in range(repeats)]
        if (model, mode) == dipped:
            samples[3] *= 0.5
        results.append(ok(model, mode, median(samples), samples))
    return make_record(list(results) + list(extra), backend=target[0], device=target[1],
                       started_at=T0 + timedelta(days=60), run_id=f"pr-{seed}", event="pull_request",
                       environment={"keras_source": "git"})


def verdicts(history, *heads):
    rows = compare(baseline_from_history(history, 7, "made-up"), head_from_records(heads), SETTINGS)
    return {r.key: r for r in rows}


def test_heads_from_the_baselines_distribution_are_all_unchanged(history):
    for seed in range(30):
        rows = verdicts(history, head_run(seed), head_run(100 + seed, target=TORCH))
        assert len(rows) == 8
        assert {r.verdict for r in rows.values()} == {"unchanged"}, seed


def test_twenty_percent_slower_and_twenty_five_faster_are_called(history):
    head = head_run(1, {("cnn", "train"): 0.80, ("mlp", "predict"): 1.25})
    rows = verdicts(history, head)
    called = {key: r for key, r in rows.items() if r.verdict != "unchanged"}
    assert set(called) == {("jax", "rtx-5070-ti", "cnn", "train"), ("jax", "rtx-5070-ti", "mlp", "predict")}
    slower, faster = called[("jax", "rtx-5070-ti", "cnn", "train")], called[("jax", "rtx-5070-ti", "mlp", "predict")]
    assert slower.verdict == "slower" and slower.delta == pytest.approx(-0.20, abs=0.02)
    assert faster.verdict == "faster" and faster.delta == pytest.approx(0.25, abs=0.02)
    assert slower.interval[1] < 0 < faster.interval[0]
    assert list(rows.values())[0] is slower  # display order: slower first


def test_a_one_percent_shift_is_unchanged(history):
    for seed in range(10):
        shifted = {key: 1.01 for key in LEVELS}
        assert {r.verdict for r in verdicts(history, head_run(seed, shifted)).values()} == {"unchanged"}
        shrunk = {key: 0.99 for key in LEVELS}
        assert {r.verdict for r in verdicts(history, head_run(seed, shrunk)).values()} == {"unchanged"}


def test_one_dipped_repeat_out_of_seven_is_unchanged(history):
    for seed in range(10):
        rows = verdicts(history, head_run(seed, dipped=("cnn", "train")))
        row = rows[("jax", "rtx-5070-ti", "cnn", "train")]
        assert row.verdict == "unchanged" and row.head_dips == 1, seed
        assert abs(row.delta) < 0.03


def nights(levels, *, seed=0, repeats=7, noise=0.02, better="bigger", unit="samples/s"):
    """One record per night of jax/rtx cnn/train at the given levels."""
    rng = random.Random(seed)
    out = []
    for i, level in enumerate(levels):
        samples = [level * (1 + rng.gauss(0, noise)) for _ in range(repeats)]
        out.append(make_record([ok("cnn", "train", median(samples), samples, better=better, unit=unit)],
                               backend="jax", device="rtx-5070-ti", started_at=T0 + timedelta(days=i)))
    return out


def one_head(level, *, seed=9, better="bigger", unit="samples/s", repeats=7):
    rng = random.Random(seed)
    samples = [level * (1 + rng.gauss(0, 0.02)) for _ in range(repeats)]
    return make_record([ok("cnn", "train", median(samples), samples, better=better, unit=unit)],
                       backend="jax", device="rtx-5070-ti", started_at=T0 + timedelta(days=40),
                       event="pull_request", environment={"keras_source": "git"})


def test_deep_dip_nights_in_the_baseline_neither_flatter_nor_hide():
    # Two of seven nights on a busy shared GPU: 35 % and 60 % of the level.
    base = nights([9000, 9000, 3150, 9000, 9000, 5400, 9000])
    (same,) = compare(baseline_from_history(base, 7, "x"), head_from_records([one_head(9000)]), SETTINGS)
    assert same.verdict == "unchanged" and same.base_dips == 2 and abs(same.delta) < 0.03
    (worse,) = compare(baseline_from_history(base, 7, "x"), head_from_records([one_head(7200)]), SETTINGS)
    assert worse.verdict == "slower" and worse.delta == pytest.approx(-0.20, abs=0.02)
    assert worse.interval[1] < 0  # the dips do not stretch the interval past zero


def test_smaller_is_better_reverses_the_direction():
    base = nights([20.0] * 7, better="smaller", unit="ms")
    for level, expected in ((24.0, "slower"), (16.0, "faster"), (20.0, "unchanged")):
        (row,) = compare(baseline_from_history(base, 7, "x"),
                         head_from_records([one_head(level, better="smaller", unit="ms")]), SETTINGS)
        assert (row.verdict, row.unit) == (expected, "ms")


def test_an_ordinary_night_is_no_change_even_when_its_repeats_are_tight():
    # Nights scatter by ~4 % (a shared card), each run's repeats by 0.5 %: a head
    # 4 % off is an ordinary night, though its repeats all sit above the base's.
    rng = random.Random(3)
    base = nights([9000 * (1 + rng.gauss(0, 0.04)) for _ in range(7)], noise=0.005)
    values = sorted(r.results[0].value for r in base)
    head = values[-1] * 1.01
    rec = make_record([ok("cnn", "train", head, [head * (1 + 0.005 * k) for k in (-1, 0, 1, 0, 1, -1, 0)])],
                      started_at=T0 + timedelta(days=40), backend="jax", device="rtx-5070-ti")
    (row,) = compare(baseline_from_history(base, 7, "x"), head_from_records([rec]), SETTINGS)
    assert row.p_value < 0.01 and row.p_prediction > 0.01 and row.verdict == "unchanged"


def test_too_few_nights_fall_back_to_their_repeats():
    base = nights([9000, 9000, 9000])
    (row,) = compare(baseline_from_history(base, 7, "x"), head_from_records([one_head(7200)]), SETTINGS)
    assert (row.basis, row.base_n, row.verdict) == ("samples", 21, "slower")


def test_only_the_last_n_nights_count():
    base = nights([7200] * 10 + [9000] * 7)  # an old level, then 7 nights at 9000
    (row,) = compare(baseline_from_history(base, 7, "x"), head_from_records([one_head(9000)]), SETTINGS)
    assert (row.verdict, row.base_runs) == ("unchanged", 7)
    (row,) = compare(baseline_from_history(base, 17, "x"), head_from_records([one_head(9000)]), SETTINGS)
    assert row.base_runs == 17


def test_runs_of_another_keras_in_the_history_are_not_baseline():
    base = nights([9000] * 7) + [one_head(4000)]  # a git-ref run stored among the nights
    (row,) = compare(baseline_from_history(base, 7, "x"), head_from_records([one_head(9000)]), SETTINGS)
    assert (row.verdict, row.base_runs) == ("unchanged", 7)


def test_failed_missing_new_and_skipped(history):
    head = head_run(2, drop=[("cnn", "predict"), ("mlp", "train"), ("mlp", "predict")],
                    extra=[failed("mlp", "train", "oom", "CUDA out of memory | tried 2 GiB"),
                           ok("resnet", "train", 500.0, [500.0, 505, 495, 501, 499, 502, 498]),
                           skipped("mlp", "predict", "no mlp on this backend"),
                           skipped("vit", "train")])
    rows = verdicts(history, head)
    by_model = {(k[2], k[3]): r for k, r in rows.items()}
    assert by_model[("mlp", "train")].verdict == "failed"
    assert by_model[("mlp", "train")].error.kind == "oom"
    assert by_model[("mlp", "train")].error.message == "CUDA out of memory | tried 2 GiB"
    assert by_model[("mlp", "train")].base == pytest.approx(60000, rel=0.03)
    assert by_model[("mlp", "predict")].verdict == "failed"  # skipped now, measured before
    assert by_model[("mlp", "predict")].error.kind == "unsupported"
    assert by_model[("cnn", "predict")].verdict == "missing"
    assert by_model[("resnet", "train")].verdict == "new"
    assert by_model[("resnet", "train")].head == 500.0
    assert ("vit", "train") not in by_model  # never measured, skipped now: nothing to say
    assert by_model[("cnn", "train")].verdict == "unchanged"
    # the torch target has no head run: its series are not "missing"
    assert {k[:2] for k in rows} == {JAX}
    assert [r.verdict for r in rows.values()] == ["failed", "failed", "missing", "new", "unchanged"]


def test_base_records_pool_their_samples_and_the_newest_head_wins():
    base = [make_record([ok("cnn", "train", 9000.0, [9000.0 + d for d in (-90, -40, 0, 30, 80, -20, 50)])],
                        event="pull_request", environment={"keras_source": "git"})]
    baseline = baseline_from_records(base, "1 base record")
    entry = baseline.entries[("jax", "local-cpu", "cnn", "train")]
    assert (entry.kind, len(entry.samples), entry.run_values) == ("records", 7, (9000.0,))
    old = make_record([ok("cnn", "train", 7000.0, [7000.0 + d for d in (-50, 0, 50, 10, -10, 20, -20)])],
                      run_id="7", attempt=1)
    rerun = make_record([ok("cnn", "train", 9000.0, [9000.0 + d for d in (-60, 0, 60, 10, -10, 25, -25)])],
                        run_id="7", attempt=2)
    (row,) = compare(baseline, head_from_records([rerun, old]), SETTINGS)
    assert (row.verdict, row.basis, row.p_prediction) == ("unchanged", "samples", None)
    (row,) = compare(baseline, head_from_records([old]), SETTINGS)
    assert row.verdict == "slower"


def test_environment_differences_between_base_and_head():
    base = [make_record([ok("cnn", "train", 9000.0)], keras_version="3.16.0.dev2026110102",
                        environment={"backend_versions": {"jax": "0.7.0", "jaxlib": "0.7.0"},
                                     "runner": "gpu-1", "python": "3.11.7"})]
    head = [make_record([ok("cnn", "train", 9000.0)], keras_version="3.16.0.dev2026110102+pr123",
                        environment={"keras_source": "git",
                                     "backend_versions": {"jax": "0.7.1", "jaxlib": "0.7.0"},
                                     "runner": "gpu-2", "python": "3.11.7"})]
    outcome = build_outcome(baseline_from_records(base, "b"), head_from_records(head), SETTINGS)
    assert [(d.field, d.base, d.head) for d in outcome.differences] == [
        ("keras_version", "3.16.0.dev2026110102", "3.16.0.dev2026110102+pr123"),
        ("keras_source", "nightly", "git"),
        ("backend_versions.jax", "0.7.0", "0.7.1"),
        ("runner", "gpu-1", "gpu-2"),
    ]


def test_load_baseline_tells_a_data_folder_from_records(tmp_path, history):
    data = write_data(history, tmp_path / "data")
    assert load_baseline([data], 7, warn=None).description == f"last 7 nights of {data}"
    some = sorted((data / "runs").rglob("jax--*.json"))[:2]
    assert load_baseline(some, 7, warn=None).description == "2 base records"
    with pytest.raises(ValueError, match="is a data folder"):
        load_baseline([data, some[0]], 7, warn=None)
    with pytest.raises(FileNotFoundError, match="--base .*nope: no such file or folder"):
        load_baseline([tmp_path / "nope"], 7, warn=None)


# -- the command -------------------------------------------------------------

@pytest.fixture()
def folders(tmp_path, history):
    data = write_data(history, tmp_path / "data")
    heads = tmp_path / "head"
    head = head_run(1, {("cnn", "train"): 0.80, ("mlp", "predict"): 1.25})
    path = heads / "jax.json"
    heads.mkdir()
    path.write_text(head.to_json())
    return data, path


def test_cli_markdown_and_exit_status(folders, capsys):
    data, head = folders
    assert cli.main(["compare", "--base", str(data), "--head", str(head)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "<!-- keras-nightly-bench:compare -->"
    assert out.splitlines()[1] == "### Benchmark comparison: 1 slower, 1 faster, 2 unchanged"
    assert "bench compare: 1 slower, 1 faster, 2 unchanged" in err
    assert cli.main(["compare", "--base", str(data), "--head", str(head), "--fail-on", "slower"]) == 1
    same = head.with_name("same.json")
    same.write_text(head_run(5).to_json())
    assert cli.main(["compare", "--base", str(data), "--head", str(same), "--fail-on", "slower"]) == 0


def test_cli_json_to_a_file(folders, tmp_path):
    data, head = folders
    out = tmp_path / "out" / "compare.json"
    assert cli.main(["compare", "--base", str(data), "--head", str(head), "--format", "json",
                     "--nights", "5", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    first = doc["benchmarks"][0]
    assert {"backend", "device", "model", "mode", "base", "head", "delta", "verdict",
            "interval", "p_value"} <= set(first)
    assert (first["model"], first["mode"], first["verdict"]) == ("cnn", "train", "slower")
    assert first["base_runs"] == 5 and len(first["interval"]) == 2
    assert doc["counts"] == {"slower": 1, "faster": 1, "unchanged": 2}
    assert out.read_text() == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_cli_bad_input_is_named(folders, tmp_path, capsys):
    data, head = folders
    assert cli.main(["compare", "--base", str(data), "--head", str(tmp_path / "missing.json")]) == 2
    assert "--head" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1}')
    assert cli.main(["compare", "--base", str(data), "--head", str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err
    assert cli.main(["compare", "--base", str(data), str(head), "--head", str(head)]) == 2
    assert "is a data folder" in capsys.readouterr().err
    assert cli.main(["compare", "--base", str(data), "--head", str(head), "--nights", "0"]) == 2
    assert "argument --nights: '0'; expected a whole number >= 1" in capsys.readouterr().err
