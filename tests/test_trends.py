"""bench.analyse.trends on made-up series: formatting, sparklines and each status rule."""

import math
import statistics
from dataclasses import replace
from datetime import timedelta

import pytest

from bench.config import Trends
from bench.analyse.series import Failure
from bench.analyse import trends
from bench.analyse.noise import level_noise, qn_sigma
from bench.analyse.trends import Assessment, Change, assess, delta_prev
from bench.present.format import format_delta, format_value, sparkline
from tests.corpus import make_series

T = Trends()  # stale_days 3, min_points 5, window 10, confirm 3, min_change 1.5 %, noise_factor 3.5
FLAT = [1000.0, 1010.0, 995.0, 1005.0, 990.0, 1002.0, 1008.0, 997.0, 1003.0, 999.0] * 3


def status(values, better="bigger", t=T):
    s = make_series(values, better)
    return assess(s, s.points[-1].started_at, t)


@pytest.mark.parametrize("v, text", [
    (288700.0, "288.7k"), (1_234_567.0, "1.2M"), (950.0, "950"), (950.4, "950"), (999_960.0, "1.0M"),
    (1000.0, "1.0k"), (12.34, "12.3"), (1.234, "1.23"), (0.01234, "0.0123"), (3.4e9, "3.4G"),
])
def test_format_value(v, text):
    assert format_value(v) == text


def test_format_value_refuses_nan():
    with pytest.raises(ValueError, match="nan"):
        format_value(math.nan)


@pytest.mark.parametrize("d, text", [(-0.094, "-9.4%"), (1.791, "+179.1%"), (None, "—"), (0.0, "+0.0%"),
                                     (-0.0004, "+0.0%")])
def test_format_delta(d, text):
    assert format_delta(d) == text


def test_delta_prev_is_latest_against_previous():
    assert delta_prev([100.0]) is None
    assert delta_prev([100.0, 200.0, 150.0]) == pytest.approx(-0.25)


def test_sparkline_scales_between_min_and_max_of_the_last_n():
    assert sparkline([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]) == "▁▂▃▄▅▆▇█"
    assert sparkline([100.0] + [1.0, 8.0], n=2) == "▁█"  # the 100 is outside the last two
    assert sparkline([268200.0]) == "█"
    assert sparkline([5.0, 5.0, 5.0]) == "███"
    assert sparkline([]) == ""
    assert len(sparkline(list(range(1, 40)), n=15)) == 15


def test_value_objects_reject_bad_values():
    with pytest.raises(ValueError, match="Change.before is -1"):
        Change(index=3, before=-1.0, after=2.0, relative=-3.0)
    with pytest.raises(ValueError, match="'Broken'"):
        Assessment("Broken")


def test_level_noise_ignores_dips():
    xs = [math.log(v) for v in [100, 101, 99, 30, 100, 102, 98, 50, 100, 20, 101, 99]]
    level, sigma, kept = level_noise(xs)
    assert math.exp(level) == pytest.approx(100, rel=0.01)
    assert sigma < 0.03 and kept == 9


def test_qn_sigma_is_statsmodels_qn_with_the_finite_sample_factor():
    # expected: statsmodels.robust.scale.qn_scale(xs) (0.15.0), times Croux and
    # Rousseeuw's factor: n/(n+1.4) for odd n >= 10, n/(n+3.8) even, a table below
    xs = [0.3, -1.2, 0.8, 2.1, -0.4, 0.0, 1.5, -2.2, 0.9, -0.7, 0.2]
    assert qn_sigma(xs) == pytest.approx(1.3780171280713778)
    assert qn_sigma(xs[:10]) == pytest.approx(1.447268129990267)
    assert qn_sigma(xs[:8]) == pytest.approx(2.6629733591820908 * 0.669)
    assert qn_sigma([1.0]) == 0.0


# ±0.5 % and ±3 % around 1.0, 36 nights: a ratio series and a noisy host.
PRECISE = [1.0 + 0.005 * math.sin(2.4 * i) for i in range(36)]
LOUD = [1.0 + 0.03 * math.sin(2.4 * i) for i in range(36)]


def test_the_bar_is_the_series_own_noise_above_a_floor():
    # -3 % for three nights: beyond 3.5 standard errors at 0.5 % noise, not at 3 %
    assert status(PRECISE + [0.97, 0.971, 0.969]).status == "Regressed"
    assert status(LOUD + [0.97, 0.971, 0.969]).status == "Steady"
    # -1 % is clear of 0.5 % noise's bar but under the 1.5 % floor, until the floor is lower
    assert status(PRECISE + [0.99, 0.991, 0.989]).status == "Steady"
    assert status(PRECISE + [0.99, 0.991, 0.989], t=replace(T, min_change=0.005, noise_factor=2.0)).status == "Regressed"


def test_a_nights_own_standard_error_is_a_floor_under_the_noise():
    s = make_series(PRECISE + [0.97, 0.971, 0.969])
    assert assess(s, s.points[-1].started_at, T).status == "Regressed"
    # the same values, each night's own ratio known to ±3 %: three nights prove nothing
    unsure = replace(s, points=tuple(replace(p, se=0.03) for p in s.points))
    a = assess(unsure, unsure.points[-1].started_at, T)
    assert a.status == "Steady" and a.noise == pytest.approx(0.03)


def test_a_level_the_old_nights_kept_visiting_is_a_second_mode_not_a_step(monkeypatch):
    # 36 nights at 100 (+-1 %), 6 of them at a second mode +25 %, then 4 nights there:
    # 6 visits, over VISITS (3.6 of 36).
    base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2] * 6
    for i in (3, 9, 15, 21, 27, 32):
        base[i] = 125.0 + i / 10
    values = base + [125.0, 124.0, 126.0, 125.5]
    assert status(values).status == "Watch"  # the newest two high, no new level
    monkeypatch.setattr(trends, "VISITS", 1.0)  # the check off: the mode reads as a step
    assert status(values).status == "Faster"


def test_a_change_that_started_before_a_dip_is_not_dated_after_it():
    # -8 % from night 30 on, a dip on night 33: the change is night 30's, not 34's
    a = status(FLAT + [920.0, 921.0, 919.0, 400.0, 920.0, 922.0, 918.0])
    assert (a.status, a.change.index) == ("Regressed", len(FLAT))


def test_steady_flat_series():
    a = status(FLAT)
    assert a.status == "Steady" and a.change is None
    assert a.level == pytest.approx(1000, rel=0.01)
    assert a.noise < 0.02


@pytest.mark.parametrize("tail", [
    [300.0],                          # a single deep dip, last night
    [300.0, 1000.0],                  # a dip then a recovery
    [300.0, 1000.0, 450.0],           # two dips with a normal night between
    [450.0, 1000.0, 300.0, 1000.0],
    [300.0, 250.0, 1000.0],           # two dips in a row, then recovery
    [906.0],                          # -9.4 % one night: informs, does not decide
])
def test_dips_never_alarm(tail):
    assert status(FLAT + tail).status == "Steady"


@pytest.mark.parametrize("factor, expected", [(0.9, "Regressed"), (1.1, "Faster"), (0.92, "Regressed")])
def test_a_change_holding_three_nights_is_caught(factor, expected):
    a = status(FLAT + [1000 * factor, 1001 * factor, 999 * factor])
    assert a.status == expected
    assert a.change.index == len(FLAT)
    assert a.change.relative == pytest.approx(factor - 1, abs=0.01)
    assert a.level == pytest.approx(1000 * factor, rel=0.01)


def test_change_with_a_dip_right_before_it():
    a = status(FLAT + [400.0, 900.0, 905.0, 898.0, 902.0])
    assert a.status == "Regressed"
    assert a.change.index == len(FLAT) + 1  # where the new level starts, not the dip


def test_change_with_one_off_night_after_it():
    assert status(FLAT + [900.0, 930.0, 902.0, 898.0]).status == "Regressed"   # slightly off
    assert status(FLAT + [1100.0, 1103.0, 500.0, 1098.0]).status == "Faster"   # a dip after


def test_change_older_than_the_window_is_steady():
    assert status(FLAT + [880.0, 885.0, 878.0] * 4).status == "Steady"


def test_change_smaller_than_min_change_is_steady():
    assert status(FLAT + [990.0, 992.0, 989.0, 991.0]).status == "Steady"  # -1 %, the floor 1.5 %


def test_smaller_is_better_turns_the_direction():
    times = [10.0, 10.1, 9.9, 10.05, 9.95] * 6
    slower = status(times + [11.0, 11.1, 10.9], better="smaller")
    assert slower.status == "Regressed"
    assert slower.change.relative == pytest.approx(0.1, abs=0.01)  # in ms: +10 % is slower
    assert status(times + [9.0, 9.05, 8.95], better="smaller").status == "Faster"
    assert status(times + [30.0], better="smaller").status == "Steady"  # a spike is a dip


def test_watch_when_the_newest_two_are_off_together():
    assert status(FLAT + [800.0, 805.0]).status == "Watch"
    assert status(FLAT + [800.0]).status == "Steady"
    assert status(FLAT + [800.0, 1200.0]).status == "Steady"


def test_first_rule_that_applies():
    s = make_series(FLAT + [900.0, 901.0, 899.0])
    newest = s.points[-1].started_at
    assert assess(s, newest, T).status == "Regressed"
    later = newest + timedelta(days=4)  # the rest of the data ran 4 days later
    assert assess(s, later, T).status == "Stale"
    assert assess(s, newest + timedelta(days=3), T).status == "Regressed"  # 3 days is not stale
    failed = Failure(newest + timedelta(days=5), 1, "r", "oom", "out of memory", None, None)
    s_failed = replace(s, failures=(failed,))
    assert assess(s_failed, later + timedelta(days=1), T).status == "Failed"  # before Stale
    assert status([1000.0] * 4).status == "New"
    assert status([1000.0] * 4, t=Trends(min_points=4)).status == "Steady"


def test_thresholds_come_from_trends():
    values = FLAT + [960.0, 961.0, 959.0]  # -4 %
    assert status(values).status == "Regressed"
    assert status(values, t=Trends(min_change=0.05)).status == "Steady"
    assert status(FLAT + [900.0, 901.0, 899.0], t=Trends(confirm=4)).status == "Watch"


def _status(values, better="bigger"):
    from tests.corpus import make_series
    s = make_series(values, better)
    return assess(s, s.points[-1].started_at, Trends())


def test_a_large_step_to_a_noisier_level_is_regressed_not_watch():
    # 1 % jitter, then -35 % with 2 % jitter: two of the eight new nights are
    # off the new level by more than the old noise band, not by the new one's.
    before = [1000.0, 1010.0, 992.0, 1004.0, 997.0, 1012.0, 989.0, 1003.0] * 4
    after = [650.0, 630.0, 655.0, 672.0, 648.0, 661.0, 628.0, 652.0]
    a = _status(before + after)
    assert a.status == "Regressed" and a.change.index == len(before)
    assert a.change.relative == pytest.approx(650.0 / 1000.5 - 1, abs=0.01)


def test_three_dips_of_different_depths_are_no_new_level():
    # 3 % jitter, then nights at 61, 72 and 45 %: dips, not a level 39 % down
    loud = [1000.0 + 30 * math.sin(2.4 * i) for i in range(36)]
    assert _status(loud + [610.0, 720.0, 450.0]).status != "Regressed"


def test_a_short_series_with_an_early_deep_dip_is_steady():
    # 3 % jitter; the dip leaves four nights before the newer ones, whose
    # median happens to sit 5 % higher: too few nights to know the noise.
    assert _status([988.0, 165.0, 981.0, 535.0, 1007.0, 983.0, 1035.0, 1038.0, 1018.0]).status == "Steady"
    assert _status([961.0, 981.0, 980.0, 248.0, 971.0, 1030.0, 1052.0, 1005.0]).status == "Steady"


def test_an_old_level_needs_min_points_nights():
    # A clean 20 % step after only 4 nights (one a dip): not yet a change.
    assert _status([1000.0, 300.0, 1001.0, 999.0, 1002.0, 800.0, 801.0, 799.0, 800.0]).status != "Regressed"
    # ... and after 6 good nights it is.
    assert _status([1000.0, 1001.0, 999.0, 1002.0, 1000.0, 998.0, 800.0, 801.0, 799.0]).status == "Regressed"


def test_a_protocol_change_is_never_read_as_a_keras_change():
    # 20 nights at 1000 under protocol 1, then protocol 2 measures 30 % higher and holds.
    s = make_series([1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4 + [1300.0, 1305.0, 1298.0, 1302.0, 1299.0, 1301.0])
    assert assess(s, s.points[-1].started_at, T).status == "Faster"  # without the protocol: a change
    p2 = (("protocol", "workers v2"),)
    points = s.points[:20] + tuple(replace(p, state=p2) for p in s.points[20:])
    s2 = replace(s, points=points)
    a = assess(s2, s2.points[-1].started_at, T)
    assert (a.status, a.change) == ("Steady", None)  # 6 nights of protocol 2, compared among themselves
    short = replace(s, points=points[:24])
    assert assess(short, short.points[-1].started_at, T).status == "New"  # 4 nights: too few yet


NOISY = [1000.0, 1020.0, 985.0, 1015.0, 980.0, 1005.0, 1025.0, 990.0, 1010.0, 995.0] * 3  # ±2 %


def test_a_latest_night_inside_both_bands_does_not_undo_a_step():
    """An 8 % step on ±2 % noise: a latest night 3.5 % up sits in the old
    level's band and the new one's, so it is no recovery; one at 980, off
    the new level's band, is."""
    assert status(NOISY + [1085.0, 1070.0, 1090.0, 1035.0]).status == "Faster"
    assert status(NOISY + [1085.0, 1070.0, 1090.0, 980.0]).status == "Steady"
    assert status(NOISY + [915.0, 930.0, 910.0, 965.0]).status == "Regressed"


def test_a_night_past_the_new_level_still_counts_as_at_it():
    """A +3 % step whose third night reads +5 %: more than half the step from
    the new level, but past it, on the far side from the old, within the
    noise band, so it is at it. The same night on the old level's side of
    the new one is off."""
    assert status(FLAT + [1030.0, 1031.0, 1050.0]).status == "Faster"
    assert status(FLAT + [970.0, 969.0, 950.0]).status == "Regressed"
    assert status(FLAT + [1030.0, 1031.0, 1010.0]).status != "Faster"


MID = [1000.0, 1010.0, 990.0, 1008.0, 992.0, 1004.0, 1012.0, 995.0, 1006.0, 997.0] * 3  # ±1 %


def test_dips_before_a_young_step_are_not_its_level():
    """Two dips (to 72 and 62 %), one good night, then two nights at -50 %:
    a young step (Watch), not a confirmed one. The dips once counted as "at"
    the new level: the five nights' own spread, 28 % (held-out corpus
    young-step-Regressed-0.5-1), made a band that held them all. Now the new
    level's sigma is at most NOISIER times the old, and the level is the
    median of the nights at it (with four nights, the median of all sat
    between the dip and the level, "at" both)."""
    for tail in ([724.0, 620.0, 1004.0, 506.0, 510.0], [620.0, 1004.0, 506.0, 510.0]):
        assert status(MID + tail).status == "Watch", tail
    # the same step confirmed by a third night is Regressed, dips or not
    assert status(MID + [724.0, 620.0, 1004.0, 506.0, 510.0, 503.0]).status == "Regressed"
    assert status(MID + [506.0, 510.0, 503.0]).status == "Regressed"


@pytest.mark.parametrize("tail, expected", [
    # a night since a slowdown back up at the old level: dips are only ever
    # slower, so the "new level" is a dip and a return, not a level yet
    ([920.0, 925.0, 995.0, 918.0, 921.0], "Watch"),
    # an off night part-way back (+4.6 % after -8 %) is still just off
    ([920.0, 925.0, 962.0, 918.0, 921.0], "Regressed"),
    # under a speed-up a night at the old level may be a dip: still Faster
    ([1085.0, 1090.0, 1000.0, 1082.0, 1088.0], "Faster"),
])
def test_a_night_back_up_at_the_old_level_unmakes_a_slowdown(tail, expected):
    assert status(MID + tail).status == expected
