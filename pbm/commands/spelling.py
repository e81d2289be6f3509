"""Misspelled words: the nearest word a command language knows, to suggest instead."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches

# How near a word must be to be taken for a misspelling of it (difflib's ratio): a
# letter left out, doubled or swapped in a word of five letters or more ("acasta",
# "chalenge", "resgin": 0.83 and more); "hello" is no "help" (0.67).
NEAR = 0.8


def closest(word: str, words: Iterable[str]) -> str | None:
    """The one of ``words`` that ``word`` is a misspelling of (case aside), if any."""
    found = get_close_matches(word.lower(), sorted(set(words)), n=1, cutoff=NEAR)
    return found[0] if found else None
