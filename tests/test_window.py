"""The change window: which nightlies bracket a Regressed/Faster change, the
Keras commits between them and anything else that changed there."""

from datetime import date, timedelta

import pytest

from bench import cli
from bench.analyse.series import build_series
from bench.analyse.window import Nightly, Window, build_time, commits_link
from bench.config import Trends
from bench.present.markdown import render_markdown
from bench.present.table import build_rows
from tests.helpers import T0, make_record, ok, write_data

# Flat with 1 % jitter, then -15 % from night 20 (5 nights at the new level).
VALUES = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4 + [850.0, 855.0, 848.0, 852.0, 849.0]
STEP = 20


def version(i: int) -> str:
    """A distinct nightly version per night, built at 01:00 UTC that day."""
    return f"3.14.0.dev{(T0 + timedelta(days=i)):%Y%m%d}01"


def records(values=VALUES, commits=False, env_at=None):
    out = []
    for i, v in enumerate(values):
        env = {"backend_versions": {"jax": "0.4.31" if env_at is not None and i >= env_at else "0.4.30",
                                    "keras-nightly": version(i)},
               "driver": "570.1", "runner": "gpu-1"}
        if commits:
            env["keras_commit"] = f"{i:07x}abcdef"
        out.append(make_record([ok("cnn", "train", v)], started_at=T0 + timedelta(days=i),
                               run_id=str(100 + i), keras_version=version(i), environment=env))
    return out


def row_of(recs):
    [row] = build_rows(build_series(recs), Trends())
    return row


def test_step_names_the_two_nightlies_around_it():
    row = row_of(records())
    assert row.status == "Regressed" and row.change.index == STEP
    w = row.window
    assert w.before == Nightly(date(2026, 11, 20), version(STEP - 1), None)
    assert w.after == Nightly(date(2026, 11, 21), version(STEP), None)
    assert w.by == "date" and w.env_changes == ()
    assert w.commits_url == ("https://github.com/keras-team/keras/commits/master"
                             "?since=2026-11-20T01:00:00Z&until=2026-11-21T01:00:00Z")


def test_known_commits_link_the_compare_view():
    w = row_of(records(commits=True)).window
    assert w.by == "commit"
    assert w.commits_url == "https://github.com/keras-team/keras/compare/0000013abcdef...0000014abcdef"


def test_a_backend_release_at_the_same_night_is_named():
    row = row_of(records(env_at=STEP))
    [change] = row.window.env_changes
    assert (change.name, change.before, change.after) == ("jax", "0.4.30", "0.4.31")
    text = render_markdown([row])
    assert "also jax 0.4.30 → 0.4.31" in text
    assert f"Keras {version(STEP - 1)} \\(2026-11-20\\) → {version(STEP)} \\(2026-11-21\\)" in text


def test_a_faster_row_gets_a_window_too():
    faster = VALUES[:STEP] + [v * 1.4 for v in VALUES[STEP:]]
    row = row_of(records(faster))
    assert row.status == "Faster" and row.window.after.keras_version == version(STEP)


def test_steady_rows_have_no_window():
    assert row_of(records(VALUES[:STEP])).window is None


def test_json_report_carries_the_window(tmp_path, capsys):
    data = write_data(records(commits=True, env_at=STEP), tmp_path / "data")
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    import json
    [row] = json.loads(capsys.readouterr().out)
    assert row["window"] == {
        "before": {"day": "2026-11-20", "keras_version": version(STEP - 1), "keras_commit": "0000013abcdef"},
        "after": {"day": "2026-11-21", "keras_version": version(STEP), "keras_commit": "0000014abcdef"},
        "by": "commit",
        "commits_url": "https://github.com/keras-team/keras/compare/0000013abcdef...0000014abcdef",
        "env_changes": [{"name": "jax", "before": "0.4.30", "after": "0.4.31"}],
    }


def test_version_without_a_build_stamp_falls_back_to_the_night():
    n = Nightly(date(2026, 11, 5), "3.14.0", None)
    assert build_time(n).isoformat() == "2026-11-05T00:00:00"
    url, by = commits_link(n, Nightly(date(2026, 11, 6), None, "not-a-sha"))
    assert by == "date" and url.endswith("since=2026-11-05T00:00:00Z&until=2026-11-06T00:00:00Z")


def test_window_rejects_a_backwards_pair():
    a = Nightly(date(2026, 11, 5), None, None)
    with pytest.raises(ValueError, match="not later"):
        Window(a, a, "u", "date")
    with pytest.raises(ValueError, match="'sha'"):
        Window(a, Nightly(date(2026, 11, 6), None, None), "u", "sha")


def test_html_links_the_commits_of_the_window():
    from bench.present.html import render_html

    page = render_html([row_of(records(commits=True))])
    assert ('<a href="https://github.com/keras-team/keras/compare/0000013abcdef...0000014abcdef">'
            "Keras commits</a>") in page
    assert f"Keras {version(STEP - 1)} (2026-11-20) → {version(STEP)} (2026-11-21)" in page
