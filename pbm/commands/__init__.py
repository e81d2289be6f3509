"""The mail command language: every command declared once, each line read once.

The declarations live in one module per family (``accounts``, ``boards``,
``reading``, ``talk``, ``help``); ``grammar`` says how a declaration reads a
line. Here the whole language is put together: ``parse`` reads a line in the
classic form, ``parse_reply`` in reply mode; both give a ``Parsed`` (or None
for a line that is no command) and raise ``CommandError`` for a line that
starts like a command but is malformed. ``COMMANDS.md`` is the spec.
"""

from __future__ import annotations

from collections.abc import Callable

from pbm import games
from pbm.commands.grammar import CommandError, Context, Grammar, Parsed
from pbm.commands.help import ALL, help_text

__all__ = [
    "ALL",
    "CommandError",
    "Context",
    "Parsed",
    "help_text",
    "parse",
    "parse_reply",
]

GRAMMAR = Grammar(ALL)


def parse(line: str) -> Parsed | None:
    """The command on ``line`` (classic form), or None when it does not start like one."""
    return GRAMMAR.parse(line, games.names())


def parse_reply(
    line: str, looks_like_move: Callable[[str], bool], *, lenient: bool = False
) -> Parsed | None:
    """The command on ``line`` in a reply: a bare move (as the board's game reads moves), a
    verb without board, userid and password, or a whole command (a corrected one, say).

    ``lenient``: else what a person meant (``Grammar.lenient_reply``: "OK, accept", "My
    move: e4"); the caller tries that only when no line of the mail is a command as written.
    """
    try:
        found = GRAMMAR.parse_reply(line, looks_like_move)
    except CommandError:
        meant = GRAMMAR.lenient_reply(line, looks_like_move) if lenient else None
        if meant is None:
            raise
        return meant
    if found is None:
        found = GRAMMAR.parse(line, games.names())
    if found is None and lenient:
        found = GRAMMAR.lenient_reply(line, looks_like_move)
    return found
