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
from pbm.commands.spelling import closest

__all__ = [
    "ALL",
    "CommandError",
    "Context",
    "Parsed",
    "help_text",
    "parse",
    "parse_reply",
    "suggestion",
]

GRAMMAR = Grammar(ALL)


def _phrases_of(game: str) -> Callable[[str], bool] | None:
    """How the game called ``game`` reads a move of several words (``games.move_phrases``)."""
    return games.move_phrases(games.get(game))


def parse(line: str) -> Parsed | None:
    """The command on ``line`` (classic form), or None when it does not start like one."""
    return GRAMMAR.parse(line, games.names(), _phrases_of)


def parse_reply(
    line: str,
    looks_like_move: Callable[[str], bool],
    *,
    lenient: bool = False,
    phrases: Callable[[str], bool] | None = None,
) -> Parsed | None:
    """The command on ``line`` in a reply: a bare move (as the board's game reads moves), a
    verb without board, userid and password, or a whole command (a corrected one, say).

    ``lenient``: else what a person meant (``Grammar.lenient_reply``: "OK, accept", "My
    move: e4"); the caller tries that only when no line of the mail is a command as written.
    ``phrases``: how the board's game reads a move of several words (``games.move_phrases``).
    """
    try:
        found = GRAMMAR.parse_reply(line, looks_like_move, phrases)
    except CommandError:
        meant = GRAMMAR.lenient_reply(line, looks_like_move) if lenient else None
        if meant is None:
            raise
        return meant
    if found is None:
        found = GRAMMAR.parse(line, games.names(), _phrases_of)
    if found is None and lenient:
        found = GRAMMAR.lenient_reply(line, looks_like_move)
    return found


def suggestion(line: str, *, reply: bool = False) -> str | None:
    """The command words a line that is no command was a misspelling of, if any:
    ``accasta challenge`` for ``acasta chalenge alice bob``, ``signup`` for ``singup
    alice pw``; ``reply``: a reply's one word (``resign`` for ``resgin``)."""
    words = line.split()
    if not words:
        return None
    first = words[0].lower()
    if reply:
        return closest(first, GRAMMAR.reply) if len(words) == 1 else None
    game = first if first in games.names() else closest(first, games.names())
    if game is not None and len(words) > 1:
        verb = words[1].lower()
        verb = verb if verb in GRAMMAR.game else closest(verb, GRAMMAR.game) or ""
        return f"{game} {verb}" if verb and (game, verb) != (first, words[1].lower()) else None
    return closest(first, (w for w in GRAMMAR.site if " " not in w))
