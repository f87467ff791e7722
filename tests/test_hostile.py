"""The hostile-record corpus (tests/hostile/): every case through the publish
gate, `bench publish`, and the readers (report in every format with the README
and plots, site, compare). Each case is handled as tests/hostile/expected.json
says: refused or skipped with one line naming the file and the reason, or
admitted and escaped in every output; never a traceback.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bench import cli, config
from bench.present.readme import END, START
from bench.records.guard import Gate, Provenance, Refusal, admit, load_provenance
from bench.records.record import RunRecord

HOSTILE = Path(__file__).resolve().parent / "hostile"
CASES = HOSTILE / "cases"
EXPECTED = json.loads((HOSTILE / "expected.json").read_text(encoding="utf-8"))
REPO = "keras-team/keras-nightly-bench"
CREATED = datetime(2026, 11, 30, 2, 17, tzinfo=timezone.utc)
RUN = Provenance("4242", REPO, "schedule", CREATED, 1)
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
GATE = Gate.named_by(config.load(), now=NOW, every=RUN)  # one run, no artifact folders
REFUSED = sorted(n for n, e in EXPECTED.items() if e["publish"] == "refused")
ADDED = sorted(n for n, e in EXPECTED.items() if e["publish"] == "added")
SKIPPED = sorted(n for n, e in EXPECTED.items() if e["read"] == "skipped")
# Cases whose point is text every output must escape (the gate refuses some of
# them now, for their model name, but a reader must still cope).
TEXT = ("message_injection", "message_math_and_references", "model_with_dollars", "model_unbalanced_mathtext", "model_html",
        "unit_with_pipe_and_backtick", "url_javascript", "url_other_repository", "url_other_host",
        "keras_version_escape_sequence")
GPU_JOB = "record-4242-1-rtx-5070-ti-jax"  # BASE's job


def artifact_of(name: str) -> str:
    """The artifact a case sits in (tests/hostile/make_cases.py): an admitted
    case its own job's, a refused one BASE's job's."""
    return f"record-4242-1-dev-{name.replace('_', '-')}-jax" if EXPECTED[name]["publish"] == "added" else GPU_JOB


def download(folder: Path) -> Path:
    """Every case laid out as collect-artifacts.sh downloads run 4242, with
    its provenance.json; returns the provenance file."""
    for name in EXPECTED:
        (folder / "4242" / artifact_of(name)).mkdir(parents=True, exist_ok=True)
        shutil.copy(CASES / f"{name}.json", folder / "4242" / artifact_of(name))
    provenance = folder / "provenance.json"
    provenance.write_text(json.dumps({"format": 1, "artifacts": {"4242": {
        "run_id": "4242", "repository": REPO, "event": "schedule", "created_at": "2026-11-30T02:17:00Z",
        "run_attempt": 2}}}))  # attempt 2 ran too: its records must sit in its own jobs' artifacts
    return provenance


@pytest.fixture(scope="module")
def downloaded(tmp_path_factory) -> tuple[Path, Gate]:
    folder = tmp_path_factory.mktemp("dl")
    provenance = download(folder)
    return folder, Gate.named_by(config.load(), now=NOW, folders=load_provenance(provenance))


def test_the_corpus_has_a_file_and_an_outcome_for_at_least_30_cases():
    assert len(EXPECTED) >= 30 and len(ADDED) >= 5 and len(REFUSED) >= 25
    assert sorted(p.stem for p in CASES.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_gate_admits_or_refuses_each_case_as_expected(name, downloaded):
    folder, gate = downloaded
    path = folder / "4242" / artifact_of(name) / f"{name}.json"
    got = admit(path, gate)
    want = EXPECTED[name]
    if want["publish"] == "added":
        assert isinstance(got, RunRecord), got
    else:
        assert isinstance(got, Refusal), f"{name} was admitted"
        assert got.source == str(path)
        assert want["reason"] in got.reason
        assert "\n" not in got.line() and "Traceback" not in got.line()


def test_without_artifact_folders_a_record_of_another_job_is_not_told_apart():
    # Why the publish workflow passes --provenance (folders): --expect-run-id cannot see the job.
    assert isinstance(admit(CASES / "device_of_another_job.json", GATE), RunRecord)


def big_cases(folder: Path) -> dict[str, str]:
    """The cases too large to commit: {file name: reason}."""
    base = (CASES / "message_injection.json").read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    padded = json.loads(base)
    padded["environment"]["pad"] = ["x" * 1000] * 3000
    (folder / "file_3mb.json").write_text(json.dumps(padded))
    (folder / "nested_100000.json").write_text(base[:-2] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return {"file_3mb.json": "bytes; the cap is 2097152 bytes",
            "nested_100000.json": "JSON nested too deeply to read"}


def test_the_gate_refuses_oversized_and_bottomless_files(tmp_path):
    for name, reason in big_cases(tmp_path).items():
        got = admit(tmp_path / name, GATE)
        assert isinstance(got, Refusal) and reason in got.reason, got


def test_the_gate_refuses_links_and_special_files_without_reading_them(tmp_path):
    import os
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "good-link.json").symlink_to(CASES / "message_injection.json")
    os.mkfifo(tmp_path / "fifo.json")
    for name, reason in (("zero.json", "is a symbolic link"), ("good-link.json", "is a symbolic link"),
                         ("fifo.json", "is not a regular file")):
        got = admit(tmp_path / name, GATE)
        assert isinstance(got, Refusal) and got.reason.startswith(reason), got


def test_a_file_name_with_a_newline_cannot_start_a_workflow_command(tmp_path, capsys):
    folder = tmp_path / "dl"
    folder.mkdir()
    shutil.copy(CASES / "message_injection.json", folder / "ok\n::warning::pwned.json")
    shutil.copy(CASES / "truncated.json", folder / "bad\n::error::pwned.json")
    bare = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert cli.main(["publish", "--repo", str(bare), str(folder)]) == 3
    out, err = capsys.readouterr()
    assert not any(line.startswith("::") for line in (out + err).splitlines())
    assert "ok ::warning::pwned.json)" in out and "bad ::error::pwned.json: not valid JSON" in err
    runs = tmp_path / "data" / "runs"
    shutil.copytree(folder, runs)
    assert cli.main(["report", "--data", str(tmp_path / "data")]) == 0
    out, err = capsys.readouterr()
    assert not any(line.startswith("::") for line in (out + err).splitlines())


def test_readers_skip_a_record_dated_more_than_a_day_ahead_of_their_clock(tmp_path, capsys):
    from bench.records.history import load_history
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(CASES / "message_injection.json", runs)  # started 2026-11-30T02:20:00Z
    now = datetime(2026, 11, 29, 0, 19, 59, tzinfo=timezone.utc)
    history = load_history(tmp_path, warn=None, now=now)
    assert history.records == () and history.problems == (
        f"skipped {runs / 'message_injection.json'}: dated 2026-11-30T02:20:00Z, after 2026-11-30T02:19:59Z "
        "(26 h from now); expected a record of a past run",)
    assert len(load_history(tmp_path, warn=None, now=now + timedelta(seconds=1)).records) == 1


def test_without_provenance_a_record_from_the_future_is_still_refused():
    got = admit(CASES / "dated_9999.json", Gate(now=datetime(2026, 12, 1, tzinfo=timezone.utc)))
    assert isinstance(got, Refusal) and "it is now 2026-12-01T00:00:00Z" in got.reason
    assert isinstance(admit(CASES / "other_run_id.json", Gate(now=GATE.now)), RunRecord)  # nothing to compare with


def floods(run: Path) -> list[Path]:
    """The issue's flood: 50 files of 200 models each in one job's artifact,
    and 17 copies of a good record in another (the cap is 16 per artifact)."""
    base = json.loads((CASES / "message_injection.json").read_text(encoding="utf-8"))
    out = []
    models = run / "record-4242-1-dev-models-jax"
    models.mkdir()
    for i in range(50):
        rec = json.loads(json.dumps(base))
        rec["target"]["device"] = "dev-models"
        rec["results"] = [dict(base["results"][0], model=f"m{i}-{j}") for j in range(200)]
        out.append(models / f"models-{i:02d}.json")
        out[-1].write_text(json.dumps(rec))
    copies = run / "record-4242-1-dev-copies-jax"
    copies.mkdir()
    for i in range(17):
        rec = json.loads(json.dumps(base))
        rec["target"]["device"] = "dev-copies"
        rec["results"][0]["value"] = 1000.0 + i
        out.append(copies / f"copy-{i:02d}.json")
        out[-1].write_text(json.dumps(rec))
    return out


def test_publish_takes_the_good_refuses_the_rest_one_line_each(tmp_path, capsys, monkeypatch):
    provenance = download(tmp_path / "artifacts")
    artifact = tmp_path / "artifacts" / "4242" / GPU_JOB
    big = big_cases(artifact)
    flood = floods(tmp_path / "artifacts" / "4242")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    bare = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    code = cli.main(["publish", "--repo", str(bare), "--provenance", str(provenance), str(tmp_path / "artifacts")])
    out, err = capsys.readouterr()
    assert code == 3
    lines = [ln for ln in err.splitlines() if ln.startswith("bench publish: refused ")]
    # Dates in the gate are checked against the run's creation, so the clock does not matter here.
    refused = {re.match(r"bench publish: refused (\S+): ", ln).group(1) for ln in lines}
    assert refused == ({str(artifact / f"{n}.json") for n in REFUSED} | {str(artifact / n) for n in big}
                       | {str(p) for p in flood})
    assert len(lines) == len(refused) and "Traceback" not in err
    assert sum("expected one that benchmarks.yaml names: cnn, mlp" in ln for ln in lines) >= 50
    assert sum("its artifact 'record-4242-1-dev-copies-jax' holds 17 record files; the cap is 16 per artifact"
               in ln for ln in lines) == 17
    assert f"{len(refused)} of {len(refused) + len(ADDED)} record file(s) refused" in err
    on_branch = subprocess.run(["git", "--git-dir", str(bare), "ls-tree", "-r", "--name-only", "gh-pages"],
                               capture_output=True, text=True, check=True).stdout.split()
    run_ids = {"reference_side_of_its_run": "4242-b"}  # a side of run 4242 (bench run --reference)
    assert sorted(on_branch) == sorted(f"runs/2026/11/30/jax--dev-{n.replace('_', '-')}--{run_ids.get(n, '4242')}-1.json"
                                       for n in ADDED)
    assert len(ADDED) >= 5  # the good records of the same batch were published
    assert out.count("added ") == len(ADDED)
    table = summary.read_text(encoding="utf-8")
    assert table.count("\n| ") == len(refused) + 1  # header + one row per refusal
    assert "device\\_path\\_traversal.json | field target.device is '../../../etc/passwd'" in table


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Every case (and the big ones) laid out as a data branch checkout."""
    root = tmp_path_factory.mktemp("hostile") / "data"
    runs = root / "runs" / "2026" / "11" / "30"
    shutil.copytree(CASES, runs)
    big_cases(runs)
    return root


def skipped_names(err: str) -> set[str]:
    return {Path(m).stem for m in re.findall(r"^bench: skipped (\S+?): ", err, re.M)}


def test_report_skips_the_unreadable_names_each_and_escapes_the_rest(data, tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# t\n\n{START}\nold\n{END}\n\nsee `{START}` in prose\n")
    args = ["report", "--data", str(data), "--readme", str(readme)]
    assert cli.main(args) == 0
    out, err = capsys.readouterr()
    assert skipped_names(err) == set(SKIPPED) | {"nested_100000"}  # readers have no size cap; depth they must
    assert "Traceback" not in err
    for text in (out, readme.read_text(encoding="utf-8")):
        assert "<script" not in text and "<img" not in text and "](http" not in text and "![" not in text
        assert "@keras-team" not in text and "\u202e" not in text  # no mention, no bidi override
        assert "x &lt;\\!-- bench:table:end --&gt; \\[click\\]\\(http\u200b://evil.example\\)" in text
        assert "http://" not in text  # no bare autolink either
        assert "\\$\\\\color{red}{\\\\huge x}\\$" in text  # no GitHub math
        assert "see \\#\u200b1, evil/fork\\#\u200b2 and GH\u200b-3" in text  # no issue references
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert lines.count(START) == 1 and lines.count(END) == 1  # the injected marker stayed text
    once = readme.read_bytes()
    assert cli.main(args) == 0 and readme.read_bytes() == once  # twice: the same file


def test_plots_draw_dollars_and_huge_values_as_they_are(tmp_path, capsys):
    data = tmp_path / "data" / "runs"
    data.mkdir(parents=True)
    plotted = ("model_with_dollars", "model_unbalanced_mathtext", "url_javascript")
    for n in plotted:
        shutil.copy(CASES / f"{n}.json", data)
    assert cli.main(["report", "--data", str(tmp_path / "data"), "--plots", str(tmp_path / "plots")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    plots = {p.name for p in (tmp_path / "plots").glob("*.png")}
    # cnn per case, mlp per device (two cases share rtx-5070-ti), and the overview
    assert len(plots) == 2 * len(plotted) - 1 + 1
    assert any(name.startswith("jax--rtx-5070-ti--cnn_x_2_-") for name in plots)
    assert any(name.startswith("jax--rtx-5070-ti--a_b_frac_-") for name in plots)
    from bench.present.plots import plot_name
    long_key, other = ("a" * 64, "b" * 64, "c" * 128, "d" * 128), ("a" * 64, "b" * 64, "c" * 128, "e" * 128)
    assert len(plot_name(long_key)) <= 204 and plot_name(long_key) != plot_name(other)  # under 255 bytes


def test_report_html_and_json_escape_and_parse(data, tmp_path, capsys):
    assert cli.main(["report", "--data", str(data), "--format", "html", "--out", str(tmp_path / "t.html")]) == 0
    html = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert "<script>" not in html and "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert any(r["model"] == "a$b\\frac{" for r in rows)


def test_site_links_only_this_repositorys_runs(data, tmp_path, capsys):
    out = tmp_path / "site"
    assert cli.main(["site", "--data", str(data), "--out", str(out), "--repository", REPO, "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    index = json.loads((out / "data" / "index.json").read_text(encoding="utf-8"))
    urls = {run[3] for run in index["runs"]}
    assert urls == {None, f"https://github.com/{REPO}/actions/runs/4242"}
    assert "\u202e" not in (out / "data" / "table.md").read_text(encoding="utf-8")


def test_show_prints_record_text_as_plain_lines(data, capsys):
    series = "jax/dev-keras-version-escape-sequence/cnn/train"
    assert cli.main(["show", series, "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and not any(line.startswith("::") for line in out.splitlines())
    assert "3.16U+001B[2J ::error::pwned" in out


def test_compare_escapes_every_admitted_head(data, tmp_path, capsys):
    heads = [str(CASES / f"{n}.json") for n in TEXT]
    code = cli.main(["compare", "--base", str(data), "--head", *heads])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err
    assert "<script" not in out and "<img" not in out and "](http://evil" not in out and "@keras-team" not in out
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in out


def mutations(seed: int, n: int):
    """n deterministic random edits of a good record: a field deleted, or set
    to a value of another type, a huge, negative or odd number, odd text."""
    import copy
    import random
    rng = random.Random(seed)
    base = json.loads((CASES / "message_injection.json").read_text(encoding="utf-8"))
    values = [None, True, 0, -1, 1e308, -1e308, 2 ** 63, "", "x" * 300, "../..", "\u202e", "9999-12-31",
              "9999-12-31T23:59:59Z", [], {}, [1, "a", None], {"kind": 5}, {"name": 1, "version": "2"}]

    def paths(v, where=()):
        yield where
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            yield from paths(x, (*where, k))

    every = [p for p in paths(base) if p]
    for _ in range(n):
        rec = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(every)
            parent = rec
            try:
                for k in path[:-1]:
                    parent = parent[k]
                if rng.random() < 0.2 and isinstance(parent, dict):
                    parent.pop(path[-1], None)
                else:
                    parent[path[-1]] = copy.deepcopy(rng.choice(values))
            except (KeyError, IndexError, TypeError):
                pass  # an earlier edit removed or replaced the way there
        yield rec


def test_random_edits_of_a_record_never_raise_anywhere(tmp_path, capsys):
    runs = tmp_path / "data" / "runs"
    runs.mkdir(parents=True)
    admitted = 0
    for i, rec in enumerate(mutations(seed=11, n=120)):
        path = runs / f"m{i:03d}.json"
        path.write_text(json.dumps(rec, ensure_ascii=False))
        got = admit(path, GATE)  # must return, whatever the record
        admitted += isinstance(got, RunRecord)
    assert 0 < admitted < 120  # the edits hit both sides
    assert cli.main(["report", "--data", str(tmp_path / "data"), "--format", "html"]) == 0
    assert cli.main(["site", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "site"), "--no-plots"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_huge_values_already_on_the_branch_are_skipped_by_every_reader_never_a_traceback(tmp_path, capsys):
    # Admitted by an older gate: a series whose newest nights are 1e308. The
    # statistics (quantiles, sums, ratios) would overflow to inf, and the site's
    # index cannot hold inf; readers skip each such file with one line instead.
    from tests.helpers import T0, make_record, ok, write_data
    good = [make_record([ok("cnn", "train", 1000.0 + i)], started_at=T0 + timedelta(days=i), run_id=f"g{i}")
            for i in range(6)]
    data = write_data(good, tmp_path / "data")
    for i in range(6, 12):
        rec = json.loads(good[0].to_json())
        rec["run"]["id"], rec["run"]["started_at"] = f"h{i}", (T0 + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        rec["results"][0].update(value=1e308, samples=[1e308, 1e308, 1.7e308])
        (data / "runs" / f"huge-{i}.json").write_text(json.dumps(rec))
    head = tmp_path / "head.json"
    head.write_text((data / "runs" / "huge-6.json").read_text())
    capsys.readouterr()
    for args in (["site", "--data", str(data), "--out", str(tmp_path / "site"), "--no-plots"],
                 ["report", "--data", str(data), "--format", "json"],
                 ["report", "--data", str(data), "--format", "html", "--out", str(tmp_path / "t.html")]):
        assert cli.main(args) == 0, args
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert err.count("results[0].value is 1e+308; expected a finite number in [1e-12, 1e+15]") == 6
    json.loads((tmp_path / "site" / "data" / "index.json").read_text())  # strict JSON, no Infinity
    assert cli.main(["compare", "--base", str(data), "--head", str(head)]) == 2  # the head is named, not charted
    err = capsys.readouterr().err
    assert "Traceback" not in err and "head.json: field results[0].value is 1e+308" in err


def test_the_sites_spread_stays_finite_next_to_the_float_maximum():
    # statistics.quantiles interpolates (a * 3 + b) / 4: with samples near 1.8e308 that
    # is inf, and the site's index (strict JSON) cannot hold it
    import math

    from bench.analyse.summarised import quartiles
    from bench.present.site import _spread
    samples = [1.0, 1.5, 1.7, 1.6]
    small = _spread(quartiles(samples))  # where nothing overflows: the reference
    got = _spread(quartiles([x * 1e308 for x in samples]))
    assert math.isfinite(got["spread"]) and all(math.isfinite(q) for q in got["iqr"])
    assert got["spread"] == small["spread"]  # a ratio: the same at any scale
    assert got["iqr"] == pytest.approx([q * 1e308 for q in small["iqr"]], rel=1e-6)
