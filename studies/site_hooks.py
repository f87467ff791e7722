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
does not use it up; a loader that two probes share runs `after` once.
"""

AFTER_IMPORT = '''
import importlib.abc as _abc
import sys as _sys


class _AfterImport(_abc.MetaPathFinder):
    def __init__(self, names, after):
        self.left, self.after = set(names), after

    def find_spec(self, name, path, target=None):
        if name not in self.left or name in _sys.modules:
            return None
        for finder in _sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if name in self.left:  # once, whatever number of probes wrapped this loader
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
