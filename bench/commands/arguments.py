"""argparse helpers the verbs share: names given as lists, numbers that must be positive."""

from __future__ import annotations

import argparse


def split_names(values) -> list[str]:
    """Names given as 'a,b' 'c' (commas and/or spaces) -> [a, b, c]; empty
    strings (an unset workflow input) vanish. Shared by --backends, --models ..."""
    return [part for v in values or () for part in v.replace(",", " ").split()]


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1 ('3'), else one line naming the value."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}; expected a whole number >= 1")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 ('2.5'), else one line naming the value."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}; expected a number > 0")
    return value
