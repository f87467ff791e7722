"""Text for the sitecustomize.py files that the studies write (a build made
slower or wider by a known amount): one import hook for all of them.

AFTER_IMPORT defines after_import(names, after): after(name, module) runs
once for each module of `names` when its code has run, at once for one
already imported. A sitecustomize runs at the start of every process on its
PYTHONPATH, before a worker pins its CPU and sizes numpy's thread pools
(bench/measure/worker.py); importing Keras or numpy there would make the
process unlike the clean one in more than what is injected, so the hook waits
for the process to import the module itself. The spec comes from the finders
after the hook (an editable install has its own, not only PathFinder), and
the hook stays until every name has run, so a probe (importlib.util.find_spec)
does not use it up. `after` runs once per name and on that name's module
alone, also where one loader serves several modules or probes wrapped it
twice; two hooks waiting for one name both run. A loader the hook cannot
wait on is said on stderr, not passed over in silence (the build would be
the clean one).
"""

AFTER_IMPORT = '''
import importlib.abc as _abc
import sys as _sys


class _AfterImport(_abc.MetaPathFinder):
    def __init__(self, names, after):
        self.left, self.after, self.asking = set(names), after, set()

    def find_spec(self, name, path, target=None):
        if name not in self.left or name in _sys.modules or name in self.asking:
            return None  # asking: another hook of this kind is asking the finders on this one's behalf
        self.asking.add(name)
        try:
            spec = next((found for finder in _sys.meta_path if finder is not self and hasattr(finder, "find_spec")
                         for found in [finder.find_spec(name, path, target)] if found is not None), None)
        finally:
            self.asking.discard(name)
        if spec is None:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            print(f"sitecustomize: {name} has no loader to wait for; left as it is", file=_sys.stderr)
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            # once, and for this name only: a loader may serve several modules, and probes may have
            # wrapped it more than once
            if module.__name__ == name and name in self.left:
                self.left.discard(name)
                if not self.left and self in _sys.meta_path:
                    _sys.meta_path.remove(self)
                self.after(name, module)

        spec.loader.exec_module = exec_module
        return spec


def after_import(names, after):
    for name in names:
        if name in _sys.modules:
            after(name, _sys.modules[name])
    left = [name for name in names if name not in _sys.modules]
    if left:
        _sys.meta_path.insert(0, _AfterImport(left, after))
'''
