"""bench.records.newest: the one rule for which run supersedes another."""

from datetime import timedelta

from bench.records.newest import is_newer, newness
from tests.helpers import T0, make_record, ok


def test_later_start_wins_then_higher_attempt():
    first = make_record([ok("cnn", "train", 1.0)], started_at=T0, run_id="7", attempt=1)
    rerun = make_record([ok("cnn", "train", 2.0)], started_at=T0, run_id="7", attempt=2)
    later = make_record([ok("cnn", "train", 3.0)], started_at=T0 + timedelta(hours=1), run_id="8")
    assert is_newer(rerun, first) and not is_newer(first, rerun)
    assert is_newer(later, rerun)
    assert max([rerun, later, first], key=newness) is later
    assert sorted([later, rerun, first], key=newness) == [first, rerun, later]
