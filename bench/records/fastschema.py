"""A JSON Schema compiled to Python source: a fast "is it valid?".

Why: `bench report` reads every run record of the history (about 11,000
files for five years); the generic jsonschema validator costs ~0.3 ms per
record, most of the report's time. The run schema uses only a handful of
keywords, so we compile exactly those, with jsonschema's own semantics
(bool is not a number, 1.0 is an integer, `equal` keeps True apart from 1,
keywords only apply to their instance type, `format` asks the same format
checker). The compiled check only ever *accepts*: when it says no,
bench.records.record runs full jsonschema to find and word the error, so messages
are unchanged. A schema holding any keyword not listed here compiles to
None and every record goes through jsonschema, slow but never wrong.
tests/test_report_fastschema.py checks both agree on many mutated records.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Mapping

Check = Callable[[Any], bool]

# Keywords that only annotate: they never make an instance invalid.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description",
                          "default", "examples", "deprecated", "readOnly", "writeOnly"})
_SUPPORTED = frozenset({"type", "properties", "required", "items", "const", "enum",
                        "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
                        "exclusiveMaximum", "allOf", "if", "then", "else", "format"}) | _ANNOTATIONS


class Unsupported(Exception):
    """The schema uses a keyword (or form) this compiler does not implement."""


def equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema defines it (True is not 1, recursive)."""
    if a is b:
        return True
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):
        return False  # `a is b` above already matched the same bool
    return a == b


def compile_schema(schema: Any, format_checker: Any = None) -> Check | None:
    """A predicate equal to jsonschema's is_valid, or None if unsupported.

    The schema becomes the source of a few plain Python functions (one per
    `if` subschema, one for the whole), run through exec once: no closure
    calls per value (~8 us a record against ~560 us for jsonschema).
    """
    try:
        gen = _Gen(format_checker)
        top = gen.function(schema)
    except Unsupported:
        return None
    namespace = {"_equal": equal, "_Number": numbers.Number, "_c": gen.consts, "_fc": format_checker}
    exec(compile("\n".join(gen.source), "<bench.records.fastschema>", "exec"), namespace)  # noqa: S102
    return namespace[top]


def _is_number(v: str) -> str:
    return f"(type({v}) is float or type({v}) is int or (isinstance({v}, _Number) and not isinstance({v}, bool)))"


_TYPES: Mapping[str, Callable[[str], str]] = {
    "object": lambda v: f"isinstance({v}, dict)",
    "array": lambda v: f"isinstance({v}, list)",
    "string": lambda v: f"isinstance({v}, str)",
    "number": _is_number,
    "integer": lambda v: (f"((isinstance({v}, int) and not isinstance({v}, bool))"
                          f" or (isinstance({v}, float) and {v}.is_integer()))"),
    "boolean": lambda v: f"isinstance({v}, bool)",
    "null": lambda v: f"{v} is None",
}
_BOUNDS = {"minimum": "<", "maximum": ">", "exclusiveMinimum": "<=", "exclusiveMaximum": ">="}


class _Gen:
    """Writes one function per (sub)schema that needs a yes/no of its own."""

    def __init__(self, fc: Any):
        self.fc = fc
        self.consts: list[Any] = []
        self.source: list[str] = []
        self.names = 0

    def const(self, value: Any) -> str:
        self.consts.append(value)
        return f"_c[{len(self.consts) - 1}]"

    def function(self, schema: Any) -> str:
        name = f"_f{self.names}"
        self.names += 1
        lines: list[str] = []
        self.vars = getattr(self, "vars", 0)
        self.body(schema, "x", lines, "    ")
        self.source += [f"def {name}(x):", *lines, "    return True", ""]
        return name

    def var(self) -> str:
        self.vars += 1
        return f"v{self.vars}"

    def block(self, schema: Any, v: str, out: list[str], ind: str) -> None:
        """body() under an if/for header: `pass` when it checks nothing."""
        n = len(out)
        self.body(schema, v, out, ind)
        if len(out) == n:
            out.append(f"{ind}pass")

    def body(self, schema: Any, v: str, out: list[str], ind: str) -> None:
        """Lines that `return False` when value `v` breaks `schema`."""
        if schema is True:
            return
        if schema is False:
            out.append(f"{ind}return False")
            return
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        unknown = set(schema) - _SUPPORTED
        if unknown:
            raise Unsupported(", ".join(sorted(unknown)))
        for keyword, arg in schema.items():
            self.keyword(keyword, arg, schema, v, out, ind)

    def keyword(self, kw: str, arg: Any, schema: dict, v: str, out: list[str], ind: str) -> None:
        if kw == "type":
            names = [arg] if isinstance(arg, str) else arg
            if not isinstance(names, list) or not all(isinstance(n, str) and n in _TYPES for n in names):
                raise Unsupported(f"type {arg!r}")
            out.append(f"{ind}if not ({' or '.join(_TYPES[n](v) for n in names)}): return False")
        elif kw == "required":
            if not all(isinstance(n, str) for n in arg):
                raise Unsupported(f"required {arg!r}")
            out.append(f"{ind}if isinstance({v}, dict):")
            out.extend(f"{ind}    if {n!r} not in {v}: return False" for n in arg)
            if not arg:
                out.append(f"{ind}    pass")
        elif kw == "properties":
            out.append(f"{ind}if isinstance({v}, dict):")
            n0 = len(out)
            for name, sub in arg.items():
                w = self.var()
                out.append(f"{ind}    if {name!r} in {v}:")
                out.append(f"{ind}        {w} = {v}[{name!r}]")
                self.body(sub, w, out, ind + "        ")
            if len(out) == n0:
                out.append(f"{ind}    pass")
        elif kw == "items":
            if isinstance(arg, list):
                raise Unsupported("items as a list")  # tuple form (draft 4-7)
            w = self.var()
            out.append(f"{ind}if isinstance({v}, list):")
            out.append(f"{ind}    for {w} in {v}:")
            self.block(arg, w, out, ind + "        ")
        elif kw in ("const", "enum"):
            values = [arg] if kw == "const" else list(arg)
            if values and all(isinstance(e, str) for e in values):  # common case: a str is only equal to a str
                out.append(f"{ind}if not (isinstance({v}, str) and {v} in {self.const(frozenset(values))}): return False")
            else:
                out.append(f"{ind}if not any(_equal(e, {v}) for e in {self.const(values)}): return False")
        elif kw in ("minLength", "maxLength"):
            op = "<" if kw == "minLength" else ">"
            out.append(f"{ind}if isinstance({v}, str) and len({v}) {op} {self.const(arg)}: return False")
        elif kw in _BOUNDS:
            out.append(f"{ind}if {_is_number(v)} and {v} {_BOUNDS[kw]} {self.const(arg)}: return False")
        elif kw == "allOf":
            for sub in arg:
                self.body(sub, v, out, ind)
        elif kw == "if":
            test = self.function(arg)
            out.append(f"{ind}if {test}({v}):")
            self.block(schema.get("then", True), v, out, ind + "    ")
            out.append(f"{ind}else:")
            self.block(schema.get("else", True), v, out, ind + "    ")
        elif kw == "format" and self.fc is not None:
            out.append(f"{ind}if not _fc.conforms({v}, {self.const(arg)}): return False")
        # annotations, "then"/"else" (read by "if"; alone they do nothing, as
        # in jsonschema) and "format" without a checker add no line
