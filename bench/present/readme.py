"""Put the markdown table into a README between two marker comments.

Only the text between the markers changes; everything else, byte for byte,
stays. The file is replaced atomically so a crash never leaves half a README.
"""

from __future__ import annotations

from pathlib import Path

from bench.errors import BenchError
from bench.records import atomic

START = "<!-- bench:table:start -->"
END = "<!-- bench:table:end -->"


class ReadmeError(BenchError, ValueError):
    """The README lacks the marker lines, has one twice, or has them in the wrong order."""


def update_readme(path: str | Path, markdown_table: str) -> bool:
    """Replace the section; returns True when the file changed."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--readme {path}: no such file; expected a README holding {START} ... {END}")
    text = path.read_bytes().decode("utf-8")  # bytes: keep the file's own line endings
    new = replace_section(text, markdown_table, str(path))
    if new == text:
        return False
    atomic.write_text(path, new, newline="")
    return True


def replace_section(text: str, markdown_table: str, source: str = "README") -> str:
    """`text` with the lines between the marker lines replaced by the table.

    A marker counts only as a whole line of its own (surrounding blanks
    aside): the same words quoted in prose or inside a table cell are text,
    not markers. The table's lines take the file's line ending.
    """
    lines = text.splitlines(keepends=True)
    starts, ends = _marker_lines(lines, START), _marker_lines(lines, END)
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ReadmeError(
            f"{source}: expected the marker lines {START} and {END}, once each and in that order, "
            f"around the table; found {_found(START, starts)} and {_found(END, ends)}")
    first, last = starts[0], ends[0]
    newline = "\r\n" if lines[first].endswith("\r\n") else "\n"
    body = [line + newline for line in markdown_table.strip("\n").split("\n")]
    return "".join(lines[:first + 1] + body + lines[last:])


def _marker_lines(lines: list[str], marker: str) -> list[int]:
    """0-based indices of the lines that are exactly `marker`."""
    return [i for i, line in enumerate(lines) if line.strip() == marker]


def _found(marker: str, at: list[int]) -> str:
    if not at:
        return f"{marker} 0 times"
    where = ", ".join(str(i + 1) for i in at)
    return f"{marker} {len(at)} time{'s' * (len(at) > 1)} (line{'s' * (len(at) > 1)} {where})"
