"""studies/site_hooks.AFTER_IMPORT, the import hook of every sitecustomize the
studies write: `after` runs once per name, on that name's module alone, even
where one loader serves several modules, probes wrapped it first, or two hooks
wait for one name; a loader it cannot wait on is said, not passed over."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
from site_hooks import AFTER_IMPORT  # noqa: E402


class Shared(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """One finder and one loader object for the made-up modules hook_aa and hook_bb."""
    NAMES = ("hook_aa", "hook_bb")

    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name in self.NAMES else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.ran = module.__name__


@pytest.fixture
def site(monkeypatch):
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path) + [Shared()])
    for name in Shared.NAMES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    namespace = {}
    exec(AFTER_IMPORT, namespace)
    return namespace


def test_a_shared_loader_probed_first_runs_after_once_on_each_name_s_own_module(site):
    seen = []
    site["after_import"](list(Shared.NAMES), lambda name, module: seen.append((name, module.ran)))
    for name in Shared.NAMES:
        assert importlib.util.find_spec(name) is not None  # probes: each wraps the one loader
    importlib.import_module("hook_bb")
    assert seen == [("hook_bb", "hook_bb")]
    assert any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)  # hook_aa still to come
    importlib.import_module("hook_aa")
    assert seen == [("hook_bb", "hook_bb"), ("hook_aa", "hook_aa")]
    assert not any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)


def test_two_hooks_waiting_for_one_name_both_run(site):
    seen = []
    site["after_import"](["hook_aa"], lambda name, module: seen.append("first"))
    site["after_import"](["hook_aa"], lambda name, module: seen.append("second"))
    importlib.import_module("hook_aa")  # each hook asks the other: no endless recursion
    assert sorted(seen) == ["first", "second"]


def test_a_name_already_imported_is_patched_at_once(site):
    module = importlib.import_module("hook_aa")
    seen = []
    site["after_import"](["hook_aa"], lambda name, m: seen.append(m))
    assert seen == [module] and not any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)


def test_a_loader_it_cannot_wait_on_is_one_line(site, capsys):
    class Legacy(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            return importlib.machinery.ModuleSpec(name, None) if name == "hook_aa" else None
    sys.meta_path.insert(0, Legacy())
    site["after_import"](["hook_aa"], lambda name, module: None)
    assert importlib.util.find_spec("hook_aa") is not None
    assert capsys.readouterr().err == "sitecustomize: hook_aa has no loader to wait for; left as it is\n"
