"""Put the markdown table into a README between two marker comments.

Only the text between the markers changes; everything else, byte for byte,
stays. The file is replaced atomically so a crash never leaves half a README.
"""

from __future__ import annotations

from pathlib import Path

from bench.records import atomic

START = "<!-- bench:table:start -->"
END = "<!-- bench:table:end -->"


class ReadmeError(ValueError):
    """The README lacks the markers (or has them in the wrong order)."""


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
    start, end = text.find(START), text.find(END)
    if start < 0 or end < 0 or end < start or text.count(START) != 1 or text.count(END) != 1:
        found = [m for m in (START, END) if m in text]
        raise ReadmeError(
            f"{source}: expected the markers {START} and {END}, once each and in that order, "
            f"around the table; found {', '.join(found) or 'neither'}"
        )
    body = markdown_table.strip("\n")
    return f"{text[:start + len(START)]}\n{body}\n{text[end:]}"
