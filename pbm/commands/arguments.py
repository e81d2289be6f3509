"""The arguments of mail commands: how each kind is read and how forms show it.

``BOARD``, ``USERID``, ``PASSWORD``, ``MOVE[#N]``... Each ``Arg`` reads its
words from a ``Reader`` into ``Args`` fields, with errors that name the
command's correct form.
"""

from __future__ import annotations

import re
from typing import Any

from pbm.commands.grammar import NUMBER, Arg, Reader, bare, days, listed
from pbm.commands.spelling import closest
from pbm.usecases.schedule import BadSchedule, read_schedule
from pbm.verbs import QUEUE

# A move with its optional guard: "a1:C-d1#7". The last "#" is the guard's: a "#"
# with nothing after it is a move's own (a mate sign, "Qxf7#").
_GUARDED = re.compile(r"(?P<move>.*)#(?P<n>[^#]*)")


def _board(reader: Reader) -> dict[str, Any]:
    text = reader.word("BOARD")
    if NUMBER.fullmatch(text) is None or int(text) == 0:
        raise reader.fail(f"BOARD must be a board number like 12, not {text!r}.")
    return {"board": int(text)}


def _word(name: str, field_name: str, strip: str = "", by_reply: bool = False) -> Arg:
    def read(reader: Reader) -> dict[str, Any]:
        return {field_name: reader.word(name).strip(strip)}

    return Arg(name, read, by_reply)


def _optional(name: str, field_name: str, strip: str = "") -> Arg:
    def read(reader: Reader) -> dict[str, Any]:
        return {field_name: reader.word(name).strip(strip)} if reader.more() else {}

    return Arg(f"[{name}]", read)


def _guard(text: str) -> bool:
    """Whether a move's text ends in a guard (``#N``, not a bare mate sign)."""
    m = _GUARDED.fullmatch(text)
    return m is not None and bool(m.group("n"))


class BadGuard(ValueError):
    """A ``#N`` that is no move number, or one with no move before it."""


def guarded(text: str) -> tuple[str, int | None]:
    """``MOVE#N`` -> (MOVE, N); a move with no guard -> (MOVE, None). The one reading of
    a move's guard, for the mail commands and the command line alike."""
    m = _GUARDED.fullmatch(text)
    if m is None or not m.group("n"):
        return text, None
    number = m.group("n")
    if not m.group("move"):
        raise BadGuard("MOVE is missing before #N.")
    if NUMBER.fullmatch(number) is None or int(number) == 0:
        raise BadGuard(f"#N must be a move number like #7, not {'#' + number!r}.")
    return m.group("move"), int(number)


def move_and_guard(reader: Reader, text: str) -> dict[str, Any]:
    """``MOVE#N`` as the move and N; a separate ``#N`` word is also read."""
    if text.lower() == "resign":
        return {"move": "resign"}
    if not _guard(text) and (reader.peek() or "").startswith("#"):
        text += reader.word("#N")
    try:
        move, expect = guarded(text)
    except BadGuard as exc:
        raise reader.fail(str(exc)) from None
    return {"move": move} if expect is None else {"move": move, "expect": expect}


def _phrase(reader: Reader, first: str) -> str:
    """``first`` and the words after it up to a ``#N`` or ``claim``, when the game reads
    them together as one move (``g 7``, ``dead D4 E5``: ``Reader.phrases``); else
    ``first`` alone."""
    rest = []
    for word in reader.words[reader.pos :]:
        if word.startswith("#") or word.lower() == "claim":
            break
        rest.append(word)
    if reader.phrases is None or not rest:
        return first
    text = " ".join([first, *rest])
    guarded = _GUARDED.fullmatch(text)
    probe = guarded.group("move") if guarded is not None and guarded.group("n") else text
    if not reader.phrases(bare(probe)):
        return first
    reader.pos += len(rest)
    return text


def _move(reader: Reader) -> dict[str, Any]:
    # "a1:C+b2." and "e4!": a sentence's punctuation is no part of the move.
    written = _phrase(reader, reader.word("MOVE"))
    values = move_and_guard(reader, bare(written) or written)
    if (reader.peek() or "").lower() == "claim":
        reader.word("claim")
        values["claim"] = True
    return values


def _queued(reader: Reader) -> dict[str, Any]:
    if not reader.more():
        return {}  # the lines follow, one a line, below the command
    word = reader.peek() or ""
    if word.lower() in ("clear", "show") and len(reader.words) == reader.pos + 1:
        reader.word("clear|show")
        return {"clear": True} if word.lower() == "clear" else {"show": True}
    if _guard(word):
        raise reader.fail("A queued move takes no #N.")
    line = reader.rest()
    if line.lower().split()[-1] in ("if", "then"):
        raise reader.fail(f"The line ends with {line.split()[-1]!r}: a move must follow it.")
    return {"move": line}


def _notify(reader: Reader) -> dict[str, Any]:
    how = reader.word("each|digest").lower()
    if how == "each":
        return {"notify": "each"}
    if how != "digest":
        raise reader.fail(f"notify takes each or digest, not {how!r}.")
    words = []
    while reader.more():
        words.append(reader.word("HH:MM"))
    try:
        schedule = read_schedule(words)
    except BadSchedule as exc:
        raise reader.fail(str(exc)) from None
    return {"notify": f"digest {schedule.times_text} {schedule.zone}"}


def _days_or_off(reader: Reader) -> dict[str, Any]:
    text = reader.word("DAYS")
    if text.lower() == "off":
        return {"days": None}
    if text.lower() == "status":
        return {"days": None, "status": True}
    count = days(reader, text, "DAYS")
    if count == 0:
        raise reader.fail("DAYS must be at least 1 (or off, or status).")
    return {"days": count}


def _quoted(reader: Reader, value: str) -> str:
    """A value that may hold spaces in quotes (``--time="days 3"``), as written."""
    quote = value[:1]
    if quote not in ('"', "'"):
        return value
    words = [value[1:]]
    while not words[-1].endswith(quote):
        if not reader.more():
            raise reader.fail(f"The quote {quote} after --time= is not closed.")
        words.append(reader.word("TIME"))
    return " ".join(words)[:-1].strip()


def _options(reader: Reader) -> dict[str, Any]:
    values: dict[str, Any] = {}
    options: dict[str, str] = {}
    seen: set[str] = set()
    while reader.more():
        word = reader.word("OPTION")
        key, eq, value = word.lower().removeprefix("--").partition("=")
        if not word.startswith("--") or not eq or not key or not value:
            raise reader.fail(f"{word!r} is not an option like --variant=VARIANT.")
        if key == "option":
            key, eq, value = value.partition("=")
            if not eq or not key or not value:
                raise reader.fail(f"{word!r} is not an option like --option=KEY=VALUE.")
        if key in seen:
            raise reader.fail(f"--{key} is given twice.")
        seen.add(key)
        if key == "variant":
            values["variant"] = value
        elif key == "nagtime":
            values["nag_days"] = days(reader, value, "--nagtime")
        elif key == "forfeittime":
            values["forfeit_days"] = days(reader, value, "--forfeittime")
        elif key == "time":
            values["time"] = _quoted(reader, word.partition("=")[2])
        else:
            options[key] = value
    return {**values, "options": options}


def _game(reader: Reader) -> dict[str, Any]:
    if not reader.more():
        return {}
    name = reader.word("GAME")
    if name.lower() == "computer":
        return {"topic": "computer"}  # help computer: the computer player
    if name.lower() not in reader.games:
        near = closest(name, reader.games)
        meant = f" Did you mean {near}?" if near else ""
        raise reader.fail(f"There is no game {name!r} here; games: {listed(reader.games)}.{meant}")
    return {"game": name.lower()}


def _message(reader: Reader) -> dict[str, Any]:
    text = reader.rest()
    return {"message": text or None}


BOARD = Arg("BOARD", _board, by_reply=True)
USERID = _word("USERID", "userid", by_reply=True)
PASSWORD = _word("PASSWORD", "password", by_reply=True)
NEW_PASSWORD = _word("NEW-PASSWORD", "new_password")
EMAIL = _word("EMAIL", "email", strip="<>")
OPTIONAL_EMAIL = _optional("EMAIL", "email", strip="<>")
OPTIONAL_USERID = _optional("USERID", "userid")
USERID1 = _word("USERID1", "userid")
USERID2 = _word("USERID2", "userid2")
MOVE = Arg("MOVE[#N]", _move)
QUEUED = Arg(QUEUE.args, _queued)
NOTIFY = Arg("each|digest HH:MM[,HH:MM] [TIMEZONE]", _notify)
DAYS = Arg("DAYS|off|status", _days_or_off)


def _format(reader: Reader) -> dict[str, Any]:
    word = reader.word("html|text").lower()
    if word not in FORMATS:
        raise reader.fail(f"The format is html or text, not {word!r}.")
    return {"format": word}


FORMATS = ("html", "text")  # a board picture with the text, or plain text only
FORMAT = Arg("html|text", _format)
OPTIONS = Arg(
    '[--variant=VARIANT] [--time="TIME CONTROL"] [--nagtime=DAYS] [--forfeittime=DAYS] '
    "[--OPTION=VALUE]",
    _options,
)
MESSAGE = Arg("[MESSAGE]", _message)
OPTIONAL_GAME = Arg("[GAME]", _game)
