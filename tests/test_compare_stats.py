"""bench.compare.stats: the U test, the interval, dips and the prediction test."""

import math
import random

import pytest

from bench.compare import stats


def test_u_exact_complete_separation_is_the_smallest_p():
    low, high = [1.0, 2, 3, 4, 5, 6, 7], [11.0, 12, 13, 14, 15, 16, 17]
    assert stats.u_statistic(high, low) == 49
    # 2 of C(14, 7) = 3432 orderings are this extreme (either way round).
    assert stats.mann_whitney_p(high, low) == pytest.approx(2 / 3432)
    assert stats.mann_whitney_p(low, high) == pytest.approx(2 / 3432)
    assert stats.min_p_value(7, 7) == pytest.approx(2 / 3432)


def test_u_exact_small_case_by_hand():
    # x = [1, 4], y = [2, 3]: U = 2 (4 beats both); of the C(4,2) = 6 orderings
    # U takes 0,1,2,2,3,4, so P(U <= 2) = 4/6 and the two-sided p is 1.
    assert stats.u_statistic([1.0, 4.0], [2.0, 3.0]) == 2
    assert stats.mann_whitney_p([1.0, 4.0], [2.0, 3.0]) == 1.0
    # x = [5, 6], y = [1, 2]: U = 4, P(U >= 4) = 1/6, two-sided 2/6.
    assert stats.mann_whitney_p([5.0, 6.0], [1.0, 2.0]) == pytest.approx(1 / 3)


def test_u_with_ties_uses_the_corrected_normal_approximation():
    assert stats.mann_whitney_p([5.0] * 7, [5.0] * 7) == 1.0  # all equal: no evidence
    p = stats.mann_whitney_p([2.0] * 7, [1.0] * 7)
    assert 0 < p < 0.001


def test_u_matches_scipy():
    sp = pytest.importorskip("scipy.stats")
    rng = random.Random(4)
    for n, m in [(7, 7), (7, 4), (3, 35), (7, 49), (20, 200)]:
        x = [rng.gauss(1.0, 0.1) for _ in range(n)]
        y = [rng.gauss(1.05, 0.1) for _ in range(m)]
        method = "exact" if n * m <= stats.EXACT_MAX_PAIRS else "asymptotic"
        ref = sp.mannwhitneyu(x, y, alternative="two-sided", method=method).pvalue
        assert stats.mann_whitney_p(x, y) == pytest.approx(ref, rel=1e-9)
    tied = [1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 4.0]
    ref = sp.mannwhitneyu(tied, [2.0, 2.0, 3.0, 5.0], alternative="two-sided", method="asymptotic").pvalue
    assert stats.mann_whitney_p(tied, [2.0, 2.0, 3.0, 5.0]) == pytest.approx(ref, rel=1e-9)


def test_min_p_value_says_when_no_test_can_succeed():
    assert stats.min_p_value(7, 3) > 0.01   # 2 / C(10, 3) = 0.0167
    assert stats.min_p_value(7, 4) < 0.01   # 2 / C(11, 4) = 0.0061


def test_prediction_p_value_is_a_t_test_of_one_more_run():
    runs = [100.0, 102.0, 98.0, 101.0, 99.0]
    logs = [math.log(v) for v in runs]
    mean = sum(logs) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 4)
    t = (math.log(110.0) - mean) / (sd * math.sqrt(1 + 1 / 5))
    sp = pytest.importorskip("scipy.stats")
    assert stats.prediction_p_value(110.0, runs) == pytest.approx(2 * sp.t.sf(t, 4), rel=1e-9)
    assert stats.prediction_p_value(100.0, runs) > 0.9
    assert stats.prediction_p_value(100.0, [100.0]) == 1.0       # one run: no spread known
    assert stats.prediction_p_value(120.0, [100.0, 100.0]) == 0.0  # no spread at all


def test_drop_dips_takes_out_deep_dips_on_the_bad_side_only():
    assert stats.drop_dips([100.0, 101, 99, 100, 40], "bigger") == ((100.0, 101, 99, 100), 1)
    # for a time (smaller is better) a dip is a value far too high
    assert stats.drop_dips([100.0, 101, 99, 100, 250], "smaller") == ((100.0, 101, 99, 100), 1)
    # a fast outlier is no dip; a 5 % low value is ordinary noise
    assert stats.drop_dips([100.0, 101, 99, 100, 250], "bigger")[1] == 0
    assert stats.drop_dips([100.0, 101, 99, 100, 95], "bigger")[1] == 0
    # noisy values: the limit widens to 5 robust sigmas
    noisy = [100.0, 108, 92, 104, 96, 85]
    assert stats.drop_dips(noisy, "bigger")[1] == 0


def test_compare_samples_medians_delta_and_interval():
    base = [100.0, 101, 99, 100.5, 99.5, 100.2, 99.8]
    head = [80.0, 81, 79, 80.5, 79.5, 80.2, 79.8]
    c = stats.compare_samples(head, base, 0.01)
    assert (c.base, c.head) == (100.0, 80.0)
    assert c.delta == pytest.approx(-0.20)
    lo, hi = c.interval
    assert lo < -0.20 < hi < 0
    assert c.p_value == pytest.approx(2 / 3432)
    assert stats.compare_samples(head, base, 0.01) == c  # seeded: always the same interval


def test_interval_is_robust_to_one_dip_once_dips_are_dropped():
    base = [100.0, 101, 99, 100.5, 99.5, 100.2, 30.0]
    kept, dips = stats.drop_dips(base, "bigger")
    lo, hi = stats.ratio_interval([80.0, 81, 79, 80.5, 79.5, 80.2, 79.8], kept, 0.01)
    assert dips == 1 and -0.25 < lo < hi < -0.15


def test_bad_input_is_refused_with_the_value():
    with pytest.raises(ValueError, match="head value -1.0"):
        stats.compare_samples([-1.0], [1.0], 0.01)
    with pytest.raises(ValueError, match="base values are empty"):
        stats.compare_samples([1.0], [], 0.01)
    with pytest.raises(ValueError, match="alpha is 2"):
        stats.compare_samples([1.0], [1.0], 2)
    with pytest.raises(ValueError, match="better is 'up'"):
        stats.drop_dips([1.0], "up")


def test_interval_is_the_same_in_batches_small_enough_for_any_memory(monkeypatch):
    # 20,000 values took 1.2 GB when all 4000 resamples were drawn at once;
    # batches bound it. Up to BOOTSTRAP_BATCH_VALUES / 4000 values the single
    # batch gives exactly the old draws; smaller batches draw in another
    # order, so only the figure, not each digit, stays the same.
    rng = random.Random(5)
    x = [rng.gauss(0.9, 0.03) for _ in range(40)]
    y = [rng.gauss(1.0, 0.03) for _ in range(40)]
    whole = stats.ratio_interval(x, y, 0.01)
    monkeypatch.setattr(stats, "BOOTSTRAP_BATCH_VALUES", 40 * 100)  # 40 batches of 100 resamples
    batched = stats.ratio_interval(x, y, 0.01)
    assert batched != whole and batched == pytest.approx(whole, abs=0.01)
    assert stats.ratio_interval(x, y, 0.01) == batched  # still seeded


def test_interval_with_one_value_on_a_side_resamples_the_other():
    lo, hi = stats.ratio_interval([90.0], [100.0, 101, 99, 100.5, 99.5], 0.01)
    assert -0.11 < lo < -0.10 < hi < -0.09
    assert stats.ratio_interval([90.0], [100.0], 0.01) == pytest.approx((-0.1, -0.1))


def test_paired_comparison_is_a_sign_flip_test_of_the_log_ratios():
    base = [100.0, 90.0, 110.0, 95.0, 105.0, 98.0, 102.0, 97.0, 101.0]
    ratios = (0.95, 0.96, 0.94, 0.95, 0.955, 0.97, 1.01, 0.945, 0.96)
    head = [b * r for b, r in zip(base, ratios)]
    c = stats.compare_pairs(head, base, 0.01)
    logs = [math.log(r) for r in ratios]
    sp = pytest.importorskip("scipy.stats")
    np = pytest.importorskip("numpy")
    ref = sp.permutation_test((np.array(logs),), lambda x, axis=-1: np.mean(x, axis=axis),
                              permutation_type="samples", n_resamples=2 ** 9, vectorized=True)
    # 1 pair of 9 on the other side: 2 of 512 patterns are that far (all slow, and this one)... by hand:
    assert c.p_value == pytest.approx(ref.pvalue) and c.p_value == pytest.approx(4 / 512)
    assert c.delta == pytest.approx(math.exp(sum(logs) / 9) - 1)
    assert c.interval[0] < c.delta < c.interval[1] < 0
    assert (c.base_n, c.head_n) == (9, 9)
    same = stats.compare_pairs(base, base, 0.01)  # every pair even
    assert (same.p_value, same.delta, same.interval) == (1.0, 0.0, (0.0, 0.0))
    with pytest.raises(ValueError, match="3 head and 2 base; expected the same number"):
        stats.compare_pairs([1.0, 1, 1], [1.0, 1], 0.01)


def test_the_interval_is_the_shifts_the_test_does_not_reject():
    rng = random.Random(7)
    logs = [rng.gauss(-0.03, 0.02) for _ in range(10)]
    lo, hi = stats.sign_flip_interval(logs, 0.01)
    inside = [x - (lo + 1e-4) for x in logs], [x - (hi - 1e-4) for x in logs]
    outside = [x - (lo - 1e-4) for x in logs], [x - (hi + 1e-4) for x in logs]
    assert all(stats.sign_flip_p(v) >= 0.01 for v in inside)
    assert all(stats.sign_flip_p(v) < 0.01 for v in outside)
    # Too few pairs to reach the level at all: the interval is unbounded, not made up.
    assert stats.sign_flip_interval(logs[:6], 0.01) == (-math.inf, math.inf)


def test_sign_flip_is_exact_to_16_pairs_and_drawn_beyond():
    assert stats.sign_flip_min_p(8) == 2 / 256 and stats.sign_flip_min_p(7) == 2 / 128
    assert stats.sign_flip_p([0.01] * 16) == 2 / 2 ** 16
    drawn = stats.sign_flip_p([0.01] * 20)  # Monte Carlo: (hits + 1) / (draws + 1), never 0
    assert 0 < drawn <= 3 / (stats.SIGN_FLIP_DRAWS + 1)
    assert stats.sign_flip_p([0.01] * 20) == drawn  # seeded


def test_sign_flip_false_calls_stay_at_alpha_on_made_up_pairs():
    # Labels from how the pairs are built: no change, heavy-tailed noise (a t with 2
    # degrees of freedom, where a t test's level is off), 8 pairs, 400 comparisons.
    rng = random.Random(11)
    calls = 0
    for _ in range(400):
        logs = [0.02 * rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.0, 1.0)) for _ in range(8)]
        calls += stats.sign_flip_p(logs) < 0.01
    assert calls <= 8  # alpha 1 % of 400 is 4; exact, so only chance lifts it


def test_bh_levels_by_hand():
    # p = 0.001, 0.008, 0.039, 0.041, 0.042, 0.06 at alpha 0.05, m = 6: BH calls the first
    # two (0.008 <= 0.05 * 2 / 6), not the third (0.039 > 0.025)...
    ps = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06]
    levels = stats.bh_levels(ps, 0.05)
    assert [p <= lv for p, lv in zip(ps, levels)] == [True, True, False, False, False, False]
    assert levels[0] == pytest.approx(0.05 * 2 / 6) and levels[2] == pytest.approx(0.05 * 3 / 6)
    sp = pytest.importorskip("scipy.stats")
    called = sp.false_discovery_control(ps, method="bh") <= 0.05
    assert [p <= lv for p, lv in zip(ps, levels)] == list(called)
    assert stats.bh_levels([0.3], 0.01) == (0.01,)  # one row: its own alpha
    with pytest.raises(ValueError, match="p-value 1.5"):
        stats.bh_levels([1.5], 0.01)


def test_u_critical_scale_is_where_the_u_test_first_reaches_alpha():
    base = [100.0, 101, 99, 100.5, 99.5, 100.2, 99.8]
    head = list(base)
    k = stats.u_critical_scale(head, base, 0.01, down=True)
    assert k < 1.0
    assert stats.mann_whitney_p([v * k for v in head], base) < 0.01
    assert stats.mann_whitney_p([v * k * 1.001 for v in head], base) >= 0.01
    up = stats.u_critical_scale(head, base, 0.01, down=False)
    assert up > 1.0 and stats.mann_whitney_p([v * up for v in head], base) < 0.01
    assert stats.u_critical_scale([1.0, 2, 3], [1.5, 2.5, 3.5], 0.01, down=True) is None  # 3 vs 3: never


def test_prediction_critical_matches_the_prediction_test():
    runs = [100.0, 102.0, 98.0, 101.0, 99.0]
    crit = stats.prediction_critical(runs, 0.01)
    centre = sum(math.log(v) for v in runs) / 5
    assert stats.prediction_p_value(math.exp(centre + crit), runs) == pytest.approx(0.01)
    assert stats.prediction_critical([100.0], 0.01) == math.inf


def test_u_critical_scale_beyond_the_candidates_bisects_the_factor(monkeypatch):
    rng = random.Random(9)
    head = [rng.gauss(1.0, 0.02) for _ in range(30)]
    base = [rng.gauss(1.0, 0.02) for _ in range(40)]
    exact = stats.u_critical_scale(head, base, 0.01, down=True)  # from the critical U
    assert stats.mann_whitney_p([v * exact for v in head], base) < 0.01
    assert stats.mann_whitney_p([v * exact * 1.0005 for v in head], base) >= 0.01
    monkeypatch.setattr(stats, "EXACT_MAX_PAIRS", 100)  # the normal approximation: bisect the ratios
    among_ratios = stats.u_critical_scale(head, base, 0.01, down=True)
    monkeypatch.setattr(stats, "CANDIDATES_MAX", 100)  # too many pairs: bisect the factor itself
    assert stats.u_critical_scale(head, base, 0.01, down=True) == pytest.approx(among_ratios, rel=2e-6)
    assert among_ratios == pytest.approx(exact, rel=0.01)
