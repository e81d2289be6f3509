"""The words of automatic mail: wrapping, times, short notes.

Every line fits in 78 characters (RFC 5322 2.1.1); times are UTC, to the minute.
"""

from __future__ import annotations

import textwrap
from datetime import datetime

from pbm.replies import MailKind, Reply

WIDTH = 78

__all__ = ["WIDTH", "fmt_time", "note", "wrap"]


def fmt_time(t: datetime | None) -> str:
    return "-" if t is None else t.strftime("%Y-%m-%d %H:%M UTC")


def wrap(text: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """Wrap each paragraph of ``text`` to ``width``, prefixing ``indent``."""
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        if not para.strip():
            lines.append(indent.rstrip())
            continue
        lines.extend(
            textwrap.wrap(
                para,
                width=width,
                initial_indent=indent,
                subsequent_indent=indent,
                break_long_words=True,
                break_on_hyphens=False,
            )
        )
    return lines


def note(
    to: str, subject: str, text: str, board: int | None = None, *, kind: MailKind = MailKind.ANSWER
) -> Reply:
    """A short mail of wrapped text (``kind``: see ``Reply``)."""
    body = "\n".join(wrap(text)) + "\n"
    return Reply(to=to, subject=subject, body=body, board=board, kind=kind)
