"""The package's stages import one way (docs/DESIGN.md, Layout):

    errors <- config <- records <- analyse <- present <- compare <- ci <- commands <- cli

and measure stands apart: it runs on the runner and imports only records,
config and errors (and itself); only commands and the cli import it. A stage
may import itself and any stage below it. Every `import` counts, also one
inside a function: a lazy import still ties the stages together."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "bench"
ORDER = ["errors", "config", "records", "analyse", "present", "compare", "ci", "commands", "cli"]
MEASURE_MAY_IMPORT = {"errors", "config", "records", "measure"}


def stage(module: str) -> str | None:
    """bench.<stage>[.…] -> stage; bench itself, __main__ and cli -> 'cli'; else None."""
    parts = module.split(".")
    if parts[0] != "bench":
        return None
    if len(parts) == 1 or parts[1] in ("__init__", "__main__", "cli"):
        return "cli"
    return parts[1]


def imports(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, absolute module) of every bench import in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = "bench." + ".".join(path.relative_to(package).with_suffix("").parts)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = here.split(".")[:-node.level]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from bench import compare` names the stage in the imported names
            if name == "bench":
                out += [(node.lineno, f"bench.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, name))
    return [(line, name) for line, name in out if name.split(".")[0] == "bench"]


def violations(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        src = stage("bench." + ".".join(path.relative_to(package).with_suffix("").parts))
        for line, name in imports(path, package):
            dst = stage(name)
            if dst is None or dst == src or (src == "cli" and dst != "cli"):
                continue
            if src == "measure":
                ok = dst in MEASURE_MAY_IMPORT
            elif dst == "measure":
                ok = src in ("commands", "cli")
            elif src in ORDER and dst in ORDER:
                ok = ORDER.index(dst) < ORDER.index(src)
            else:
                ok = False  # a new top-level module: give it a place in ORDER first
            if not ok:
                found.append(f"{path.relative_to(package.parent)}:{line}: {src} imports {name} ({dst})")
    return found


def one_module(tmp_path: Path, src: str, text: str) -> Path:
    """A made-up bench package holding one module `src` with `text`."""
    pkg = tmp_path / "bench"
    (pkg / src).parent.mkdir(parents=True)
    (pkg / src).write_text(text + "\n")
    return pkg


def test_no_import_runs_against_the_stage_order():
    assert violations() == []


@pytest.mark.parametrize("src, line", [
    ("measure/x.py", "from bench.compare.extras import worker_values"),
    ("records/x.py", "import bench.analyse.trends"),
    ("analyse/x.py", "def f():\n    from bench.present import table"),
    ("present/x.py", "from ..compare import stats"),
    ("records/x.py", "from bench.measure import harness"),
    ("compare/x.py", "from bench import commands"),
])
def test_the_checker_catches_an_import_against_the_order(tmp_path, src, line):
    assert len(violations(one_module(tmp_path, src, line))) == 1, line


@pytest.mark.parametrize("src, line", [
    ("measure/x.py", "from bench.records.workers import worker_values"),
    ("compare/x.py", "from bench.present import escape\nfrom bench.analyse import trends"),
    ("commands/x.py", "from bench.measure import harness"),
    ("present/x.py", "from . import table"),
])
def test_the_checker_lets_an_import_down_the_order_through(tmp_path, src, line):
    assert violations(one_module(tmp_path, src, line)) == []
