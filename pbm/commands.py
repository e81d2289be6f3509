"""The mail command language: one line of text -> one Command value.

Pure parsing: no I/O, no database, no game rules. ``COMMANDS.md`` is the spec.
Verbs and game names are case-insensitive and come back lower-case; userids,
passwords, e-mail addresses and move texts keep the case they were written in
(the service compares userids case-insensitively). A line with words left over
after a complete command is not a command. What the words mean (is the userid
well-formed, the address an address, the move legal) is the service's to check.

Two grammars:

- ``parse_command`` — the classic one: ``signup UID PW``, ``G move B UID PW MOVE``...
- ``parse_reply_command`` — reply mode (mail to a reply-token address): the
  board and the player come from the address, so a line is just ``MOVE``,
  ``resign``, ``show``, ``queue MOVE if MOVE``... It gives a ``ReplyCommand``;
  ``ReplyCommand.bind`` turns it into the Command the classic grammar would give.

A line that starts like a command but is malformed is explained by ``explain``
(``explain_reply`` in reply mode): what is wrong and the correct form.

Challenge options: ``--variant=V``, ``--nagtime=DAYS``, ``--forfeittime=DAYS``,
``--option=KEY=VALUE`` and the short form ``--KEY=VALUE`` for any other key
(``--castle_win=next_turn``, ``--d4_opening=banned``). Keys and values are
lower-cased; whether the game knows them is checked later by the game
(``Game.check_options``), not here.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

# --- the commands ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Signup:
    """``signup UID PW [EMAIL]``: a new account; ``email`` None means the sender."""

    userid: str
    password: str
    email: str | None = None


@dataclass(frozen=True, slots=True)
class Password:
    """``password UID PW NEWPW``."""

    userid: str
    password: str
    new_password: str


@dataclass(frozen=True, slots=True)
class Address:
    """``address UID PW EMAIL``."""

    userid: str
    password: str
    email: str


@dataclass(frozen=True, slots=True)
class Help:
    """``help [G]`` (also ``G help``): the commands, or the rules of ``game``."""

    game: str | None = None


@dataclass(frozen=True, slots=True)
class Games:
    """``games UID`` or ``G games [UID]``: active boards of a player and/or a game."""

    userid: str | None = None
    game: str | None = None


@dataclass(frozen=True, slots=True)
class Vacation:
    """``vacation UID PW DAYS|off``; ``days`` None means off."""

    userid: str
    password: str
    days: int | None


@dataclass(frozen=True)
class Challenge:
    """``G challenge UID1 UID2 [--variant=V] [--nagtime=D] [--forfeittime=D] [--K=V]``.

    ``userid1`` plays White and moves first. ``options`` holds every other
    ``--KEY=VALUE``; being a dict, it makes a Challenge unhashable.
    """

    game: str
    userid1: str
    userid2: str
    variant: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    nag_days: int | None = None
    forfeit_days: int | None = None


@dataclass(frozen=True, slots=True)
class Move:
    """``G move B UID PW MOVE[#N]``.

    ``expect_ply`` is N: the move is refused unless it would be move number N
    of the board, counting every move by either player from 1 — that is,
    unless ``state.ply + 1 == expect_ply``.
    """

    game: str
    board: int
    userid: str
    password: str
    move_text: str
    expect_ply: int | None = None


@dataclass(frozen=True, slots=True)
class Queue:
    """``G queue B UID PW MOVE [if OPPONENT-MOVE]`` or ``... clear`` (``move_text`` None)."""

    game: str
    board: int
    userid: str
    password: str
    move_text: str | None
    if_move: str | None = None


@dataclass(frozen=True, slots=True)
class Show:
    """``G show B`` (also ``G board B``): the current diagram."""

    game: str
    board: int


@dataclass(frozen=True, slots=True)
class History:
    """``G history B``: the move list with comments."""

    game: str
    board: int


@dataclass(frozen=True, slots=True)
class Moves:
    """``G moves B``: every legal move for the player to move."""

    game: str
    board: int


@dataclass(frozen=True, slots=True)
class Ratings:
    """``G ratings``."""

    game: str


@dataclass(frozen=True, slots=True)
class _PlayerOnBoard:
    """The shape of every ``G VERB B UID PW`` command."""

    game: str
    board: int
    userid: str
    password: str


@dataclass(frozen=True, slots=True)
class Resign(_PlayerOnBoard):
    """``G resign B UID PW`` (also ``G move B UID PW resign``)."""


@dataclass(frozen=True, slots=True)
class Undo(_PlayerOnBoard):
    """``G undo B UID PW``: ask to take back your last move."""


@dataclass(frozen=True, slots=True)
class Accept(_PlayerOnBoard):
    """``G accept B UID PW``: agree to the opponent's undo or cancel request."""


@dataclass(frozen=True, slots=True)
class Reject(_PlayerOnBoard):
    """``G reject B UID PW``: refuse the opponent's undo or cancel request."""


@dataclass(frozen=True, slots=True)
class Cancel(_PlayerOnBoard):
    """``G cancel B UID PW``."""


@dataclass(frozen=True, slots=True)
class Chat(_PlayerOnBoard):
    """``G chat B UID PW``: the comment (the rest of the mail) goes to the board."""


@dataclass(frozen=True, slots=True)
class Subscribe(_PlayerOnBoard):
    """``G subscribe B UID PW``: follow a board."""


@dataclass(frozen=True, slots=True)
class Unsubscribe(_PlayerOnBoard):
    """``G unsubscribe B UID PW``."""


Command = (
    Signup
    | Password
    | Address
    | Help
    | Games
    | Vacation
    | Challenge
    | Move
    | Queue
    | Show
    | History
    | Moves
    | Ratings
    | Resign
    | Undo
    | Accept
    | Reject
    | Cancel
    | Chat
    | Subscribe
    | Unsubscribe
)

_PlayerCommand = Resign | Undo | Accept | Reject | Cancel | Chat | Subscribe | Unsubscribe

# The verbs of the form ``G VERB B UID PW`` and their classes.
_PLAYER_VERBS: dict[str, type[_PlayerCommand]] = {
    "resign": Resign,
    "undo": Undo,
    "accept": Accept,
    "reject": Reject,
    "cancel": Cancel,
    "chat": Chat,
    "subscribe": Subscribe,
    "unsubscribe": Unsubscribe,
}

_BOARD_VERBS: dict[str, type[Show | History | Moves]] = {
    "show": Show,
    "board": Show,
    "history": History,
    "moves": Moves,
}

# The correct form of each verb, for help and error messages ("G" is the game).
_GLOBAL_FORMS: dict[str, str] = {
    "signup": "signup USERID PASSWORD [EMAIL]",
    "password": "password USERID PASSWORD NEW-PASSWORD",
    "address": "address USERID PASSWORD EMAIL",
    "help": "help [GAME]",
    "games": "games USERID",
    "vacation": "vacation USERID PASSWORD DAYS|off",
}

_GAME_FORMS: dict[str, str] = {
    "challenge": (
        "challenge USERID1 USERID2 [--variant=VARIANT] [--nagtime=DAYS] "
        "[--forfeittime=DAYS] [--OPTION=VALUE]"
    ),
    "move": "move BOARD USERID PASSWORD MOVE[#N]",
    "queue": "queue BOARD USERID PASSWORD MOVE [if OPPONENT-MOVE]  (or: ... clear)",
    **{verb: f"{verb} BOARD" for verb in _BOARD_VERBS},
    **{verb: f"{verb} BOARD USERID PASSWORD" for verb in _PLAYER_VERBS},
    "chat": "chat BOARD USERID PASSWORD  (the message is the rest of the mail, not this line)",
    "games": "games [USERID]",
    "ratings": "ratings",
    "help": "help",
}

USAGE = """\
Commands (words are case-insensitive; G is a game name, B a board number):

  signup USERID PASSWORD [EMAIL]       a new account (EMAIL: the sender)
  password USERID PASSWORD NEWPASSWORD change your password
  address USERID PASSWORD EMAIL        change your address
  vacation USERID PASSWORD DAYS|off    stop your clocks for some days
  help [G]                             this text, or the rules of G
  games USERID                         a player's active boards

  G challenge USERID1 USERID2 [--variant=V] [--nagtime=D] [--forfeittime=D]
                                       a new board; USERID1 plays White
  G move B USERID PASSWORD MOVE[#N]    play MOVE (with #N: only as move N)
  G resign B USERID PASSWORD           resign
  G show B  /  G board B               the current diagram
  G history B                          the move list with comments
  G moves B                            every legal move
  G undo B USERID PASSWORD             ask to take back your last move
  G accept B USERID PASSWORD           agree to an undo or cancel request
  G reject B USERID PASSWORD           refuse it
  G cancel B USERID PASSWORD           cancel a board
  G chat B USERID PASSWORD             send the rest of the mail to the board
  G subscribe B USERID PASSWORD        follow a board
  G unsubscribe B USERID PASSWORD      stop following it
  G queue B USERID PASSWORD MOVE [if OPPONENT-MOVE]   a move played later
  G queue B USERID PASSWORD clear      forget queued moves
  G games [USERID]                     active boards of G
  G ratings                            the rating list of G

Put the command in the Subject, or on a line of its own in the body; the other
lines of the body are a comment shown with your move.

Replying to a board mail needs no board, userid or password: write just the
move (a1:C-d1), or resign, show, history, moves, undo, accept, reject, cancel,
chat, subscribe, unsubscribe, queue MOVE [if MOVE], queue clear.
"""


class CommandError(ValueError):
    """A line that starts like a command but is malformed.

    ``problem`` says what is wrong, ``usage`` the correct form; ``str()`` gives both.
    """

    def __init__(self, problem: str, usage: str) -> None:
        super().__init__(f"{problem}\n{usage}")
        self.problem = problem
        self.usage = usage


# --- words ----------------------------------------------------------------------

# A board number, day count or move number: ASCII digits only (str.isdigit
# accepts "²", which int() refuses), and few enough that int() is cheap.
_NUMBER = re.compile(r"[0-9]{1,9}")
# A move with its optional guard: "a1:C-d1#7".
_GUARDED = re.compile(r"(?P<move>.*?)#(?P<n>[^#]*)")
# What a bare move looks like in reply mode: it starts on a cell, a1 to g7.
_MOVE_START = re.compile(r"[a-g][1-7]", re.IGNORECASE)


def _words(line: str) -> list[str]:
    # A trailing ";" closes a move in the classic notation ("d1:CHc-e1;").
    return line.strip().rstrip(";").split()


class _Reader:
    """The words of one command, taken left to right, with errors naming the form."""

    def __init__(self, words: list[str], usage: str) -> None:
        self.words = words
        self.usage = usage
        self.pos = 0

    def fail(self, problem: str) -> CommandError:
        return CommandError(problem, self.usage)

    def more(self) -> bool:
        return self.pos < len(self.words)

    def peek(self) -> str | None:
        return self.words[self.pos] if self.more() else None

    def word(self, name: str) -> str:
        if not self.more():
            raise self.fail(f"{name} is missing.")
        self.pos += 1
        return self.words[self.pos - 1]

    def board(self) -> int:
        text = self.word("BOARD")
        if _NUMBER.fullmatch(text) is None or int(text) == 0:
            raise self.fail(f"BOARD must be a board number like 12, not {text!r}.")
        return int(text)

    def end(self) -> None:
        if self.more():
            rest = " ".join(self.words[self.pos :])
            raise self.fail(f"{rest!r} is left over after the command.")


def _days(reader: _Reader, text: str, name: str) -> int:
    if _NUMBER.fullmatch(text) is None:
        raise reader.fail(f"{name} must be a number of days, not {text!r}.")
    return int(text)


def _move_and_guard(reader: _Reader, text: str) -> tuple[str, int | None]:
    """Split ``MOVE#N`` into the move text and N; a separate ``#N`` word is also read."""
    if "#" not in text and (reader.peek() or "").startswith("#"):
        text += reader.word("#N")
    m = _GUARDED.fullmatch(text)
    if m is None:
        return text, None
    number = m.group("n")
    if not m.group("move"):
        raise reader.fail("MOVE is missing before #N.")
    if _NUMBER.fullmatch(number) is None or int(number) == 0:
        raise reader.fail(f"#N must be a move number like #7, not {'#' + number!r}.")
    return m.group("move"), int(number)


def _queue_tail(reader: _Reader) -> tuple[str | None, str | None]:
    """``MOVE [if OPPONENT-MOVE]`` or ``clear``, shared by both grammars."""
    move = reader.word("MOVE")
    if move.lower() == "clear":
        return None, None
    if "#" in move:
        raise reader.fail("A queued move takes no #N.")
    if_move = None
    if (reader.peek() or "").lower() == "if":
        reader.word("if")
        if_move = reader.word("OPPONENT-MOVE")
    return move, if_move


# --- the classic grammar --------------------------------------------------------


def _parse_global(verb: str, reader: _Reader, games: dict[str, str]) -> Command:
    if verb == "signup":
        userid, password = reader.word("USERID"), reader.word("PASSWORD")
        email = reader.word("EMAIL").strip("<>") if reader.more() else None
        reader.end()
        return Signup(userid, password, email)
    if verb == "password":
        userid, password = reader.word("USERID"), reader.word("PASSWORD")
        new = reader.word("NEW-PASSWORD")
        reader.end()
        return Password(userid, password, new)
    if verb == "address":
        userid, password = reader.word("USERID"), reader.word("PASSWORD")
        email = reader.word("EMAIL").strip("<>")
        reader.end()
        return Address(userid, password, email)
    if verb == "help":
        game = None
        if reader.more():
            name = reader.word("GAME")
            game = games.get(name.lower())
            if game is None:
                raise reader.fail(f"There is no game {name!r} here; games: {_list(games)}.")
        reader.end()
        return Help(game)
    if verb == "games":
        userid = reader.word("USERID")
        reader.end()
        return Games(userid=userid)
    # vacation
    userid, password = reader.word("USERID"), reader.word("PASSWORD")
    text = reader.word("DAYS")
    days = None if text.lower() == "off" else _days(reader, text, "DAYS")
    if days == 0:
        raise reader.fail("DAYS must be at least 1 (or off).")
    reader.end()
    return Vacation(userid, password, days)


def _parse_challenge(game: str, reader: _Reader) -> Challenge:
    userid1, userid2 = reader.word("USERID1"), reader.word("USERID2")
    variant: str | None = None
    nag: int | None = None
    forfeit: int | None = None
    options: dict[str, str] = {}
    seen: set[str] = set()
    while reader.more():
        word = reader.word("OPTION")
        key, eq, value = word.lower().removeprefix("--").partition("=")
        if not word.startswith("--") or not eq or not key or not value:
            raise reader.fail(f"{word!r} is not an option like --variant=pari.")
        if key == "option":
            key, eq, value = value.partition("=")
            if not eq or not key or not value:
                raise reader.fail(f"{word!r} is not an option like --option=KEY=VALUE.")
        if key in seen:
            raise reader.fail(f"--{key} is given twice.")
        seen.add(key)
        if key == "variant":
            variant = value
        elif key == "nagtime":
            nag = _days(reader, value, "--nagtime")
        elif key == "forfeittime":
            forfeit = _days(reader, value, "--forfeittime")
        else:
            options[key] = value
    return Challenge(game, userid1, userid2, variant, options, nag, forfeit)


def _parse_game_verb(game: str, verb: str, reader: _Reader) -> Command:
    command: Command
    if verb == "challenge":
        command = _parse_challenge(game, reader)
    elif verb in _BOARD_VERBS:
        command = _BOARD_VERBS[verb](game, reader.board())
    elif verb == "games":
        userid = reader.word("USERID") if reader.more() else None
        command = Games(userid=userid, game=game)
    elif verb == "ratings":
        command = Ratings(game)
    elif verb == "help":
        command = Help(game)
    else:  # move, queue and the player verbs: B UID PW first
        board = reader.board()
        userid, password = reader.word("USERID"), reader.word("PASSWORD")
        if verb == "move":
            text = reader.word("MOVE")
            if text.lower() == "resign":
                command = Resign(game, board, userid, password)
            else:
                move, guard = _move_and_guard(reader, text)
                command = Move(game, board, userid, password, move, guard)
        elif verb == "queue":
            queued, if_move = _queue_tail(reader)
            command = Queue(game, board, userid, password, queued, if_move)
        else:
            command = _PLAYER_VERBS[verb](game, board, userid, password)
    reader.end()
    return command


def _list(names: Collection[str]) -> str:
    return ", ".join(sorted(names))


def _parse(line: str, known_games: Collection[str]) -> Command | None:
    """The command on ``line``; None when it does not start like one.

    Raises ``CommandError`` when it starts like a command but is malformed.
    """
    words = _words(line)
    if not words:
        return None
    games = {name.lower(): name.lower() for name in known_games}
    first = words[0].lower()
    if first in _GLOBAL_FORMS and first not in games:
        usage = f"{first} needs: {_GLOBAL_FORMS[first]}"
        return _parse_global(first, _Reader(words[1:], usage), games)
    if first in games:
        if len(words) < 2:
            raise CommandError(
                f"{first} needs a command word.", f"{first} commands: {_list(_GAME_FORMS)}"
            )
        verb = words[1].lower()
        if verb not in _GAME_FORMS:
            raise CommandError(
                f"{first} has no command {words[1]!r}.", f"{first} commands: {_list(_GAME_FORMS)}"
            )
        usage = f"{first} {verb} needs: {first} {_GAME_FORMS[verb]}"
        return _parse_game_verb(first, verb, _Reader(words[2:], usage))
    if len(words) >= 3 and words[1].lower() in _GAME_FORMS and _NUMBER.fullmatch(words[2]):
        # "chess move 12 ...": a game command for a game this server does not run.
        raise CommandError(
            f"There is no game {words[0]!r} here.", f"Games: {_list(games) or '(none)'}"
        )
    return None


def parse_command(line: str, known_games: Collection[str]) -> Command | None:
    """The command on ``line``, or None if the line is not exactly one command."""
    try:
        return _parse(line, known_games)
    except CommandError:
        return None


def explain(line: str, known_games: Collection[str]) -> str | None:
    """Why ``line``, which looks like an attempted command, is not one, and the right form.

    None when the line parses, or does not look like a command at all.
    """
    try:
        _parse(line, known_games)
    except CommandError as exc:
        return str(exc)
    return None


# --- reply mode -----------------------------------------------------------------

_REPLY_VERBS = (
    "move",
    "resign",
    "show",
    "board",
    "history",
    "moves",
    "undo",
    "accept",
    "reject",
    "cancel",
    "chat",
    "subscribe",
    "unsubscribe",
    "queue",
)

_REPLY_FORMS: dict[str, str] = {
    **{verb: verb for verb in _REPLY_VERBS},
    "move": "MOVE[#N]  (or: move MOVE[#N])",
    "chat": "chat [MESSAGE]  (the message: the rest of this line and of the mail)",
    "queue": "queue MOVE [if OPPONENT-MOVE]  (or: queue clear)",
}


@dataclass(frozen=True, slots=True)
class ReplyCommand:
    """A command in reply mode, for the board and player of the reply-token address.

    ``verb`` is one of ``move resign show history moves undo accept reject cancel
    chat subscribe unsubscribe queue`` (``board`` comes back as ``show``). ``move``
    carries ``move_text`` and ``expect_ply``; ``queue`` carries ``move_text``
    (None: clear) and ``if_move``; ``chat`` the message begun on its line, ``text``.
    """

    verb: str
    move_text: str | None = None
    expect_ply: int | None = None
    if_move: str | None = None
    text: str | None = None

    def bind(self, game: str, board: int, userid: str, password: str = "") -> Command:
        """The classic Command this stands for.

        The token address already proved who sent it, so ``password`` is only
        a filler (the caller must not check it).
        """
        if self.verb == "move":
            return Move(game, board, userid, password, self.move_text or "", self.expect_ply)
        if self.verb == "queue":
            return Queue(game, board, userid, password, self.move_text, self.if_move)
        if self.verb in _BOARD_VERBS:
            return _BOARD_VERBS[self.verb](game, board)
        return _PLAYER_VERBS[self.verb](game, board, userid, password)


def _parse_reply(line: str) -> ReplyCommand | None:
    words = _words(line)
    if not words:
        return None
    first = words[0].lower()
    if first in _REPLY_FORMS:
        reader = _Reader(words[1:], f"In a reply: {_REPLY_FORMS[first]}")
        if first == "move":
            text = reader.word("MOVE")
            command = _reply_move(reader, text)
        elif first == "queue":
            queued, if_move = _queue_tail(reader)
            command = ReplyCommand("queue", queued, None, if_move)
        elif first == "chat":
            # The words after chat are the start of the message, not left-over words.
            rest = line.strip()[len(words[0]) :].strip()
            return ReplyCommand("chat", text=rest or None)
        else:
            command = ReplyCommand("show" if first == "board" else first)
    elif _MOVE_START.match(words[0]):
        reader = _Reader(words[1:], f"In a reply: {_REPLY_FORMS['move']}")
        command = _reply_move(reader, words[0])
    else:
        return None
    reader.end()
    return command


def _reply_move(reader: _Reader, text: str) -> ReplyCommand:
    if text.lower() == "resign":
        return ReplyCommand("resign")
    move, guard = _move_and_guard(reader, text)
    return ReplyCommand("move", move, guard)


def parse_reply_command(line: str) -> ReplyCommand | None:
    """The reply-mode command on ``line``: a bare move or a verb with no board/userid/password."""
    try:
        return _parse_reply(line)
    except CommandError:
        return None


def explain_reply(line: str) -> str | None:
    """Like ``explain``, for reply mode."""
    try:
        _parse_reply(line)
    except CommandError as exc:
        return str(exc)
    return None
