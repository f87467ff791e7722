"""studies/status_eval.py --kinds: a chosen kind runs alone with the same
draws as in the full run (a group's seed is its place among all groups), and
an unknown kind is one line."""

import pytest

from tests.helpers import load_study

ARGS = ["--streams", "1", "--years", "1", "--methods", "project rule", "--jobs", "1"]


def study(monkeypatch):
    return load_study("status_eval", monkeypatch)  # in sys.modules: the process pool pickles by name


def test_one_kind_runs_alone_with_its_own_draws(capsys, monkeypatch):
    module = study(monkeypatch)
    drawn = []
    real_group = module._group
    monkeypatch.setattr(module, "_group", lambda job: drawn.append(job[:3]) or real_group(job))

    class Inline:  # the groups in this process, so the draws can be watched
        def __init__(self, jobs): pass
        def __enter__(self): return self
        def __exit__(self, *exc): return False
        def map(self, f, jobs): return map(f, jobs)
    monkeypatch.setattr(module, "ProcessPoolExecutor", Inline)
    assert module.main(ARGS + ["--kinds", "ref,harness"]) == 0
    groups = [(k, lv) for k in module.KINDS for lv in module.LEVELS[k]]
    assert drawn == [(groups.index(("harness", None)), "harness", None), (groups.index(("ref", None)), "ref", None)]
    out = capsys.readouterr().out
    assert "| ref | 3% |" in out and "| harness | 3% |" in out and "| precise" not in out
    assert "- project rule: precise n/a; dips n/a; replayed false alarms " in out  # not drawn, said so


@pytest.mark.parametrize("kinds, line", [("gpu", "--kinds gpu: unknown; expected some of precise,vm,dips,real,harness,ref"),
                                         (",", "--kinds ',': none given; expected some of")])
def test_a_kind_it_does_not_know_or_none_is_one_line(capsys, monkeypatch, kinds, line):
    with pytest.raises(SystemExit):
        study(monkeypatch).main(ARGS + ["--kinds", kinds])
    assert line in capsys.readouterr().err
