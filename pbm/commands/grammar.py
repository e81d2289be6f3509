"""How a mail command is declared and read: words, arguments, one parse per line.

A ``Command`` declares, once, everything about one mail command: its words,
its arguments (``Arg``: how each is read and shown), its help line, whether
it may be sent by reply, and ``build``, which turns what was read into the
use case to carry out. ``Grammar`` reads a line against a set of commands,
in the classic form (``G VERB B UID PW ...``, ``signup UID PW``) or in reply
mode, where a reply address gives the board and the player.

Words are case-insensitive; userids, passwords, addresses and moves keep
the case they were written in. A line with words left over after a whole
command is not that command. A line that starts like a command but is
malformed raises ``CommandError``: what is wrong, and the correct form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pbm.commands.spelling import closest
from pbm.usecases.auth import ByReply, Password, Who
from pbm.usecases.unit import Action
from pbm.verbs import Verb

# A board number, day count or move number: ASCII digits only (str.isdigit
# accepts "²", which int() refuses), and few enough that int() is cheap.
NUMBER = re.compile(r"[0-9]{1,9}")


class CommandError(ValueError):
    """A line that starts like a command but is malformed.

    ``problem`` says what is wrong, ``usage`` the correct form; ``str()`` gives both.
    """

    def __init__(self, problem: str, usage: str, secrets: frozenset[int] = frozenset()) -> None:
        super().__init__(f"{problem}\n{usage}")
        self.problem = problem
        self.usage = usage
        self.secrets = secrets  # where the line's passwords are (``mask``)


# Arguments that are secrets: never quoted back (``mask``).
SECRETS = frozenset({"PASSWORD", "NEW-PASSWORD"})


def mask(line: str, secrets: frozenset[int]) -> str:
    """``line`` with the words at ``secrets`` (word positions) replaced by ``******``."""
    if not secrets:
        return line.strip()
    return " ".join("******" if i in secrets else w for i, w in enumerate(line.split()))


class Reader:
    """The words of one command, taken left to right, with errors naming the form."""

    def __init__(
        self,
        words: list[str],
        usage: str,
        line: str = "",
        offset: int = 0,
        games: Collection[str] = (),
        phrases: Callable[[str], bool] | None = None,
    ) -> None:
        self.words = words
        self.games = games  # the game names there are, for an argument naming one
        # Whether words read together are one move of the game (``g 7``, ``dead D4 E5``:
        # ``pbm.games.move_phrases``); None: a move is one word.
        self.phrases = phrases
        self.usage = usage
        self.line = line  # the whole line, for an argument that takes its rest as written
        self.offset = offset  # words of the line before ``words`` (the verb...)
        self.pos = 0
        self.secrets: set[int] = set()  # positions in the line of the passwords read

    def fail(self, problem: str) -> CommandError:
        return CommandError(problem, self.usage, frozenset(self.secrets))

    def more(self) -> bool:
        return self.pos < len(self.words)

    def peek(self) -> str | None:
        return self.words[self.pos] if self.more() else None

    def word(self, name: str) -> str:
        if not self.more():
            raise self.fail(f"{name} is missing.")
        self.pos += 1
        if name in SECRETS:
            self.secrets.add(self.offset + self.pos - 1)
        return self.words[self.pos - 1]

    def rest(self) -> str:
        """The rest of the line as written, after the words read so far; nothing is left over."""
        before = self.offset + self.pos
        parts = self.line.strip().split(None, before)
        self.pos = len(self.words)
        return parts[before].strip() if len(parts) > before else ""

    def end(self) -> None:
        if self.more():
            rest = " ".join(self.words[self.pos :])
            raise self.fail(f"{rest!r} is left over after the command.")


def days(reader: Reader, text: str, name: str) -> int:
    if NUMBER.fullmatch(text) is None:
        raise reader.fail(f"{name} must be a number of days, not {text!r}.")
    return int(text)


@dataclass(frozen=True)
class Args:
    """What a command line said, argument by argument (None: not given)."""

    board: int | None = None
    userid: str | None = None
    userid2: str | None = None
    password: str | None = None
    new_password: str | None = None
    email: str | None = None
    game: str | None = None
    move: str | None = None
    expect: int | None = None  # the #N of a move
    clear: bool = False  # queue ... clear
    days: int | None = None  # None with ``off``: a vacation ends
    status: bool = False  # ``vacation ... status``: the days left
    variant: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    nag_days: int | None = None
    forfeit_days: int | None = None
    time: str | None = None  # a time control's spec (``pbm.timecontrol``)
    message: str | None = None
    claim: bool = False  # a move followed by "claim"
    format: str | None = None  # html | text
    topic: str | None = None  # help computer
    show: bool = False  # queue ... show: the tree as it stands
    notify: str | None = None  # notify ...: "each", or "digest TIMES [ZONE]" (checked)


@dataclass(frozen=True)
class Arg:
    """One argument: its name in forms and help, and how it is read into ``Args``.

    ``read`` takes the reader and returns the ``Args`` fields it sets.
    ``by_reply``: a reply address gives it (BOARD, USERID, PASSWORD), so reply
    mode leaves it out.
    """

    name: str
    read: Callable[[Reader], dict[str, Any]]
    by_reply: bool = False


@dataclass(frozen=True)
class Context:
    """What comes with a command line: who sent it, the comment, the reply address."""

    sender: str
    comment: str = ""
    message_id: str | None = None  # of the mail the line came in
    game: str | None = None  # the game word of a game command
    reply_board: int | None = None  # reply mode: the board and player of the address
    reply_userid: str | None = None

    def who(self, args: Args) -> Who:
        """Who acts: the reply address's player, or the userid and password of the line."""
        if self.reply_board is not None and self.reply_userid is not None:
            return Who(self.reply_userid, ByReply(self.reply_board))
        assert args.userid is not None and args.password is not None
        return Who(args.userid, Password(args.password))

    def board(self, args: Args) -> int:
        """The board of a board command: the line's, or the reply address's."""
        board = args.board if args.board is not None else self.reply_board
        assert board is not None
        return board


Built = tuple[Action, Who | None]


@dataclass(frozen=True)
class Command:
    """One mail command, declared once.

    ``words``: the verb and its synonyms (the first is its name). ``per_game``:
    written after a game name (``G show 12``). ``args``: what follows the
    verb. ``verb``: the command a reply may hold (``pbm.verbs``: its words,
    help and reply form are the verb's; ``reply_command`` declares one);
    ``reply_args``: what follows it in a reply (by default the ``args`` not
    given by the reply address). ``note`` follows the form in help and error
    messages, ``reply_note`` the reply form. ``build`` makes the use case to
    carry out, and who asks for it.
    """

    words: tuple[str, ...]
    args: tuple[Arg, ...]
    help: str
    build: Callable[[Args, Context], Built]
    per_game: bool = False
    verb: Verb | None = None
    reply_args: tuple[Arg, ...] | None = None
    note: str = ""
    reply_note: str = ""

    @property
    def name(self) -> str:
        return self.words[0]

    @property
    def by_reply(self) -> bool:
        """Whether a reply may hold it (without board, userid and password)."""
        return self.verb is not None

    def form(self, game: str = "G", verb: str | None = None) -> str:
        """``G move BOARD USERID PASSWORD MOVE[#N]``: the command as written."""
        words = [game, verb or self.name] if self.per_game else [verb or self.name]
        return " ".join([*words, *(a.name for a in self.args)])

    def usage(self, game: str = "G", verb: str | None = None) -> str:
        """The form with its note, for help and error messages."""
        form = self.form(game, verb)
        return f"{form}  ({self.note})" if self.note else form

    @property
    def replied(self) -> tuple[Arg, ...]:
        """The arguments in reply mode."""
        if self.reply_args is not None:
            return self.reply_args
        return tuple(a for a in self.args if not a.by_reply)

    def reply_form(self, verb: str | None = None) -> str:
        """The command as written in a reply."""
        if self.verb is not None:
            return self.verb.form(verb)
        return " ".join([verb or self.name, *(a.name for a in self.replied)])

    def reply_usage(self, verb: str | None = None) -> str:
        """The form in reply mode, with its note."""
        form = self.reply_form(verb)
        return f"{form}  ({self.reply_note})" if self.reply_note else form


def reply_command(
    verb: Verb,
    args: tuple[Arg, ...],
    build: Callable[[Args, Context], Built],
    *,
    reply_args: tuple[Arg, ...] | None = None,
    note: str = "",
    reply_note: str = "",
) -> Command:
    """A board command a reply may hold: its words and help are its verb's."""
    return Command(
        verb.words,
        args,
        verb.hint,
        build,
        per_game=True,
        verb=verb,
        reply_args=reply_args,
        note=note,
        reply_note=reply_note,
    )


@dataclass(frozen=True)
class Parsed:
    """A line read as a command: which one, its arguments, and the game it was for.

    ``secrets``: the positions of the line's passwords, for quoting it (``mask``).
    """

    command: Command
    args: Args
    game: str | None = None
    secrets: frozenset[int] = frozenset()
    in_reply: bool = False  # read in reply mode: board and player come from the address

    def build(self, ctx: Context) -> Built:
        return self.command.build(self.args, ctx)


def read_args(command: Command, args: Sequence[Arg], reader: Reader) -> Args:
    values: dict[str, Any] = {}
    for arg in args:
        values.update(arg.read(reader))
    reader.end()
    return Args(**values)


def listed(names: Collection[str]) -> str:
    """Names for a message: sorted, with commas."""
    return ", ".join(sorted(names))


class Grammar:
    """The mail command language of a set of declared commands."""

    def __init__(self, commands: Sequence[Command]) -> None:
        self.commands = tuple(commands)
        self.site = {w: c for c in commands if not c.per_game for w in c.words}
        self.game = {w: c for c in commands if c.per_game for w in c.words}
        self.reply = {w: c for c in commands if c.by_reply for w in c.words}

    def parse(
        self,
        line: str,
        games: Collection[str],
        phrases_of: Callable[[str], Callable[[str], bool] | None] | None = None,
    ) -> Parsed | None:
        """The command on ``line``; None when it does not start like one.

        ``phrases_of``: a game's ``Reader.phrases``, by its name.
        Raises ``CommandError`` when it starts like a command but is malformed.
        """
        words = _words(line)
        if not words:
            return None
        names = {g.lower() for g in games}
        first = words[0].lower()
        pair = " ".join(words[:2]).lower()  # a verb of two words: "password reset"
        if " " in pair and pair in self.site:
            first, taken = pair, 2
        else:
            taken = 1
        if first in self.site and first not in names:
            command = self.site[first]
            usage = f"{first} needs: {command.usage(verb=first)}"
            reader = Reader(words[taken:], usage, line, taken, names)
            args = read_args(command, command.args, reader)
            return Parsed(command, args, None, frozenset(reader.secrets))
        if first in names:
            if len(words) < 2:
                raise CommandError(
                    f"{first} needs a command word.", f"{first} commands: {listed(self.game)}"
                )
            verb = words[1].lower()
            command = self.game.get(verb)  # type: ignore[assignment]
            if command is None:
                near = closest(verb, self.game)
                meant = f" Did you mean {first} {near}?" if near else ""
                raise CommandError(
                    f"{first} has no command {words[1]!r}.{meant}",
                    f"{first} commands: {listed(self.game)}",
                )
            usage = f"{first} {verb} needs: {command.usage(first, verb)}"
            phrases = phrases_of(first) if phrases_of is not None else None
            reader = Reader(words[2:], usage, line, 2, names, phrases)
            args = read_args(command, command.args, reader)
            return Parsed(command, args, first, frozenset(reader.secrets))
        if len(words) >= 3 and words[1].lower() in self.game and NUMBER.fullmatch(words[2]):
            # "shogi move 12 ...": a game command for a game this server does not run. Its
            # password is where the command would have it: masked when quoted back.
            command = self.game[words[1].lower()]
            at = frozenset(2 + i for i, arg in enumerate(command.args) if arg.name in SECRETS)
            near = closest(first, names)
            meant = f" Did you mean {near} {words[1].lower()}?" if near else ""
            raise CommandError(
                f"There is no game {words[0]!r} here.{meant}",
                f"Games: {listed(names) or '(none)'}",
                at,
            )
        return None

    def parse_reply(
        self,
        line: str,
        looks_like_move: Callable[[str], bool],
        phrases: Callable[[str], bool] | None = None,
    ) -> Parsed | None:
        """The reply-mode command on ``line``: a bare move, or a verb without board and player.

        ``phrases``: whether words together are one move (``Reader.phrases``).
        Raises ``CommandError`` when it starts like one but is malformed.
        """
        words = _words(line)
        if not words:
            return None
        first = words[0].lower()
        command = self.reply.get(first)
        if command is not None:
            usage = f"In a reply: {command.reply_usage(first)}"
            reader = Reader(words[1:], usage, line, 1, phrases=phrases)
            return Parsed(command, read_args(command, command.replied, reader), in_reply=True)
        move = self.reply.get("move")
        if move is not None and (
            looks_like_move(words[0]) or (phrases is not None and phrases(" ".join(words)))
        ):
            reader = Reader(words, f"In a reply: {move.reply_usage()}", line, phrases=phrases)
            return Parsed(move, read_args(move, move.replied, reader), in_reply=True)
        return None

    def lenient_reply(self, line: str, looks_like_move: Callable[[str], bool]) -> Parsed | None:
        """A reply line that is no command as written, read as a person means it.

        A verb among words that add nothing ("OK, accept", "Yes, I resign."), or the one
        word of the line that looks like a move ("My move: c4:S-d4", "e4!", "Nf3 - your
        turn, Bob"); the other words of the line are no comment (a comment is what follows
        the move's line). Two moves on a line, or a verb with other words ("I will not
        resign"), are not guessed at: None.
        """
        words = _words(line)
        cleaned = [bare(w) for w in words]
        meant = [b.lower() for b in cleaned if b and b.lower() not in _FILLERS]
        if len(meant) == 1 and meant[0] in self.reply:
            command = self.reply[meant[0]]
            if not command.replied:
                return Parsed(command, Args(), in_reply=True)
        found = [i for i, b in enumerate(cleaned) if b and looks_like_move(b)]
        move = self.reply.get("move")
        if len(found) != 1 or move is None:
            return None
        (i,) = found
        reader = Reader([cleaned[i]], f"In a reply: {move.reply_usage()}", cleaned[i])
        args = read_args(move, move.replied, reader)
        return Parsed(move, args, in_reply=True)


# Words that say nothing a command needs, around a verb in a reply ("OK, accept").
_FILLERS = frozenset(
    [
        "ok",
        "okay",
        "yes",
        "yeah",
        "yep",
        "sure",
        "fine",
        "alright",
        "right",
        "well",
        "so",
        "then",
        "i",
        "i'll",
        "we",
        "please",
        "thanks",
        "thank",
        "you",
        "dear",
        "hi",
        "hello",
        "and",
        "now",
    ]
)
# What people put around a word: quotes and brackets, and a sentence's punctuation after
# it. No move ends in one of these (chess's + and # stay; its !? annotations go).
_LEADING = "\"'([{<"
_TRAILING = ".,;:!?\"')]}>"


def bare(word: str) -> str:
    """``word`` without quotes, brackets or punctuation around it (``"e4!"`` -> ``e4``)."""
    return word.lstrip(_LEADING).rstrip(_TRAILING)


def _words(line: str) -> list[str]:
    # A trailing ";" closes a move in the classic notation ("d1:CHc-e1;").
    return line.strip().rstrip(";").split()
