"""Text from outside made safe to store and to mail: no control characters.

Whatever a stranger writes may end up in the database and in other
players' mail. PostgreSQL refuses text with NUL in it (one such row would
stop the inbox), terminals act on escape sequences and BEL, and bidi
overrides make a line read differently from what it holds (CVE-2021-42574,
"Trojan Source"). So text is cleaned where it enters: the C0 controls
but the line break and the tab (Unicode's Cc category, which is also DEL and
C1), the bidi embeddings, overrides and isolates, and the line and paragraph
separators. Line breaks become ``\\n``; a tab becomes a space.
"""

from __future__ import annotations

import re

# RLM/LRM and the Arabic letter mark are left: they change no order of what follows.
_BIDI = "\u202a-\u202e\u2066-\u2069"
_DROP = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]")
_BREAKS = re.compile("\r\n?|[\u2028\u2029\x85]")


def strip_controls(text: str) -> str:
    """``text`` without control characters: line breaks made ``\\n``, tabs spaces."""
    text = _BREAKS.sub("\n", text)
    return _DROP.sub("", text).replace("\t", " ")


def one_line(text: str) -> str:
    """``text`` cleaned (``strip_controls``) and folded onto one line (a name, a subject)."""
    return " ".join(strip_controls(text).split())


def has_controls(text: str) -> bool:
    """Whether ``strip_controls`` would change ``text`` beyond its line breaks."""
    return _DROP.search(text) is not None or "\t" in text
