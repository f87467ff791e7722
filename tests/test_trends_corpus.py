"""The labelled corpus (tests/corpus/series.json): accuracy and false alarms.

Each made-up series carries the status it must get (by construction, see
tests/corpus/generate.py). A false alarm is a series labelled Steady or
Watch that reads Regressed or Faster: the thing the status must never do.
studies/corpus_accuracy.py prints the same numbers with the misses.
"""

import json
import math
import random
from collections import Counter
from functools import lru_cache

from bench.config import Trends
from bench.analyse.trends import assess
from tests.corpus import kind as kind_of, load_cases, make_series

ALARMS = {"Regressed", "Faster"}


@lru_cache(maxsize=1)  # ~1000 series: assessed once for the module's tests
def _results():
    t = Trends()
    out = []
    for case in load_cases():
        s = make_series(case.values, case.better)
        out.append((case, assess(s, s.points[-1].started_at, t).status))
    return tuple(out)


def test_corpus_covers_every_kind_of_series():
    kinds = Counter(c.name.rsplit("-", 1)[0].split("-")[0] for c in load_cases())
    for kind in ("flat", "step", "old", "young", "small", "slow", "very", "smaller",
                 "dip", "two", "three"):
        assert kinds[kind] >= 3, kind
    labels = Counter(c.label for c in load_cases())
    assert labels["Steady"] > 200 and labels["Regressed"] > 100 and labels["Faster"] > 100
    assert labels["Watch"] >= 10


def test_no_false_alarm_and_99_percent_right():
    results = _results()
    false_alarms = [(c.name, got) for c, got in results if c.label not in ALARMS and got in ALARMS]
    wrong = [(c.name, c.label, got) for c, got in results if got != c.label]
    assert false_alarms == []
    assert len(wrong) <= 0.01 * len(results), wrong
    # the direction of a caught change is never backwards
    assert [(c.name, got) for c, got in results if c.label in ALARMS and got in ALARMS - {c.label}] == []


def test_the_real_noise_kinds_are_each_99_percent_right():
    """Issue 14's kinds, in noise taken from real histories: a 30-40 % step to
    a noisier level (once read Watch), a 10-15 night series with an early
    deep dip (once read Faster), and real noise with no change at all."""
    results = _results()
    for kind in ("real-flat-", "noisier-step-Regressed-", "noisier-step-Faster-", "short-early-dip-"):
        mine = [(c, got) for c, got in results if c.name.startswith(kind)]
        right = sum(got == c.label for c, got in mine)
        assert len(mine) >= 40 and right >= 0.99 * len(mine), (kind, right, len(mine))


def test_every_kind_is_99_percent_right():
    """Issue 14: at least 99 % per kind, not only overall (a kind is the name
    without its numbers, as studies/corpus_accuracy.py prints it)."""
    kinds: dict[str, list[int]] = {}
    for c, got in _results():
        k = kinds.setdefault(kind_of(c.name), [0, 0])
        k[0] += got == c.label
        k[1] += 1
    assert len(kinds) >= 25
    assert {k: f"{r}/{n}" for k, (r, n) in kinds.items() if r < 0.99 * n} == {}


def test_the_generator_draws_again_a_step_its_noise_hid():
    """A label must be true of the values: an 8 % step whose nights measure
    +4 % (dips left out) is no 8 % step, a 3 % one measuring +6 % no small one."""
    from tests.corpus.generate import _shows

    flat = [100.0, 101.0, 99.0, 100.0, 30.0] * 6  # night 4 of each five is a dip
    dipped = set(range(4, 30, 5))
    assert _shows(flat + [108.0, 109.0, 107.0], dipped, 30, 1.08)
    assert not _shows(flat + [104.0, 104.0, 103.0], dipped, 30, 1.08)
    assert not _shows(flat + [92.0, 91.0, 92.0], dipped, 30, 1.08)  # the wrong way
    assert _shows(flat + [97.0, 97.5, 96.5], dipped, 30, 0.97)
    assert not _shows(flat + [106.0, 106.0, 106.0], dipped, 30, 0.97)


def test_the_generator_draws_again_a_flat_series_whose_noise_made_a_step():
    """A series built without a step must not show one: its last nights
    (dips left out) 3.5 standard errors below the 30 before, at the noise it
    was drawn with, are a change whatever they were built as."""
    from tests.corpus.generate import _drifted

    flat = [100.0, 108.0, 92.0, 104.0, 96.0, 30.0] * 6  # ±8 %-ish, night 5 of each six a dip
    dipped = set(range(5, 36, 6))
    assert not _drifted(flat + [95.0, 104.0, 93.0, 101.0], dipped, 0.08)
    assert _drifted(flat + [87.0, 83.0, 79.0, 94.0], dipped, 0.08)
    # within a noisier series' noise (nights as wide as the noise they were drawn with)
    wide = [100.0, 125.0, 80.0, 115.0, 88.0, 30.0] * 6
    assert not _drifted(wide + [87.0, 83.0, 79.0, 94.0], dipped, 0.20)
    # a dip among the last nights is left out, not read as the step
    assert not _drifted(flat + [95.0, 104.0, 25.0, 101.0], dipped | {38}, 0.08)


def test_the_generator_draws_again_a_flat_series_its_own_nights_show_a_step_in():
    """Drawn at 8 % noise, 36 nights that came out tight (2 %) and four
    nights 10 % up: under 2 standard errors at the noise drawn with, 7 at the
    noise the nights show. A reader who knows the dips but not the noise sees
    a step (held-out seeds 883 and 1166 drew such series), so the draw goes;
    the same end after nights 6 % wide stays."""
    from tests.corpus.generate import _drifted

    tight = [100.0, 103.0, 97.0, 101.0, 99.0, 30.0] * 6
    wide = [100.0, 108.0, 92.0, 104.0, 96.0, 30.0] * 6
    dipped = set(range(5, 36, 6))
    end = [110.0, 111.0, 109.0, 110.0]
    assert _drifted(tight + end, dipped, 0.08)
    assert not _drifted(wide + end, dipped, 0.08)
    assert not _drifted(tight + [101.0, 98.0, 102.0, 100.0], dipped, 0.08)


def test_a_real_noise_block_whose_history_changed_level_is_drawn_again(tmp_path, monkeypatch):
    """Real residuals are noise around one level only where the real series
    kept one: a block ending in mountpoint-s3's bimodal onset (-10.4, +3.3,
    -7.9, -9.8 % after a ±2 % stretch; no three nights past 3 sigmas, so
    _has_step misses it) would make a "Steady" series that truly moved."""
    from tests.corpus import generate

    calm = [0.01, -0.012, 0.004, -0.003, 0.015, -0.008, 0.0, 0.006, -0.015, 0.009] * 3
    onset = [-0.104, 0.033, -0.079, -0.098]
    pool = tmp_path / "real_noise.json"
    pool.write_text(json.dumps({"series": [{"residuals": calm + onset, "sigma": 0.034, "source": "t"}]}))
    monkeypatch.setattr(generate, "REAL_NOISE", pool)
    for seed in range(40):
        block = generate._real(random.Random(seed), 13)
        assert block[-4:] != onset, seed  # drawn again, never kept
    assert generate._drifted([math.exp(v) for v in calm[-9:] + onset], set(), 0.034)


def test_the_generator_draws_again_a_noisier_step_its_nights_do_not_show():
    """A noisier step's real block carries real spikes; the nights make a new
    level only as DESIGN.md defines one: CONFIRM nights at it and at most one
    off (a quarter from eight), at a level the old nights did not already
    visit on more than a tenth of them."""
    from tests.corpus.generate import _new_level

    step = math.log(1.3)
    before = [0.01, -0.01, 0.0, 0.005, -0.005] * 6
    assert _new_level(before, [0.02, -0.03, 0.01, 0.04], 0.02, step)
    assert not _new_level(before, [-1.31, -1.31, 0.0, 0.01], 0.02, step)  # two spikes in four
    assert _new_level(before, [-1.31, 0.0, 0.01, 0.02], 0.02, step)  # one is an off night
    visited = before[:25] + [step + 0.01, step - 0.02, step, step + 0.02, step - 0.01]
    assert not _new_level(visited, [0.02, -0.03, 0.01, 0.04], 0.02, step)  # a second mode
