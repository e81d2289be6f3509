"""The game protocol every game package implements, and the registry that finds them.

Nothing here (nor in any game package) does I/O, and no game package imports
anything else of pbm: a game is a set of pure functions over small immutable
values. The shell stores a game's state as the text ``GameState.dump()``
returns and loads it back with ``Game.load``; it never replays a history to
find the current position, and it never names a game: everything it shows
or asks about a game comes through this protocol.

Games are found through the ``pbm.games`` entry point group
(``importlib.metadata``): a game is a package and an entry point, whether it
lives in pbm or in a distribution of its own. Accasta registers itself the
same way (``pyproject.toml``).

A game may also bring record formats of its own (``Game.record_formats``:
PGN for chess) beside the text and JSON records every game has; the shell
finds them with ``record_formats`` and ``record_format``, and a game written
before they existed simply has none. The other optional parts of the
protocol are read through the helpers at the end (``move_number``,
``picture``, ``legend``, ``can_win``, ``time_out_outcome``,
``legal_moves_text``, ``perft``, ``move_phrases``): the shell never asks a
game whether it has them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from importlib.metadata import entry_points
from typing import Protocol

ENTRY_POINT_GROUP = "pbm.games"


class Termination(StrEnum):
    """How a game ends outside its rules: the shell decides these, for every game (a
    game's own endings are its words: ``castle``, ``checkmate``...)."""

    RESIGN = "resign"
    FORFEIT = "forfeit"
    AGREEMENT = "agreement"  # a draw offered by one player and accepted by the other


class Result(StrEnum):
    """How a game ended, as a game record writes it."""

    FIRST_SEAT_WINS = "1-0"  # the seat that moves first (0)
    SECOND_SEAT_WINS = "0-1"
    DRAW = "1/2-1/2"


class IllegalMove(ValueError):
    """A move (or claim) that the rules refuse; ``str()`` says why in words for a player."""


class BadNotation(IllegalMove):
    """Text that is not a move at all in the game's notation."""


class BadOption(ValueError):
    """An unknown variant or game option, or an option value out of range."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the winning seat (0 moves first), or None for a draw, and how.

    ``termination`` is a few words for the record's Termination tag and the
    board mail: the game's own (``castle``, ``checkmate``, ``stalemate``...) or
    a ``Termination``.
    """

    winner: int | None
    termination: str

    def result(self) -> Result:
        """``1-0``, ``0-1`` or ``1/2-1/2``, as in a game record."""
        return RESULTS[self.winner]

    @property
    def is_draw(self) -> bool:
        return self.winner is None


# The result of each winning seat (None: a draw).
RESULTS: Mapping[int | None, Result] = {
    0: Result.FIRST_SEAT_WINS,
    1: Result.SECOND_SEAT_WINS,
    None: Result.DRAW,
}


def winner_of(result: str) -> int | None:
    """The winning seat of a result text (None: a draw); ValueError for anything else."""
    for seat, text in RESULTS.items():
        if text == result:
            return seat
    raise ValueError(f"not a result: {result!r}")


@dataclass(frozen=True, slots=True)
class Option:
    """A game option a challenge may set: ``--name=value``, declared once by the game.

    Challenge flags, ``help``, the record's tags and the CLI's ``--option``
    are all made from these. ``variants`` lists the variants the option
    applies to (empty: every variant).
    """

    name: str
    values: tuple[str, ...]
    default: str
    help: str
    variants: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """One played move as a game record shows it: canonical notation, comment, time."""

    ply: int  # the move's number, 1 for the first
    notation: str
    comment: str = ""
    played_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game as an archive writes it (``Game.record_formats``): who, when, the moves, the end."""

    game: str  # the game's name
    variant: str
    options: Mapping[str, str]
    board: int
    players: tuple[str, str]  # by seat
    started: datetime
    ended: datetime | None
    result: str  # "1-0", "0-1", "1/2-1/2", or "*" while the game goes on
    termination: str | None
    moves: tuple[RecordedMove, ...]
    site: str  # the server's mail address
    nag_days: int
    forfeit_days: int
    time_control: str = (
        ""  # the PGN standard's TimeControl (9.6.1): ``1/259200``, ``864000+129600``
    )


@dataclass(frozen=True, slots=True)
class ReadRecord:
    """A record as a game's own format reads it: the tags, the moves as written, the end.

    ``moves`` hold the move texts in the record's notation (``ply`` from 1)
    with their comments; ``result`` is None for an unfinished game or one
    whose record does not say; ``termination`` is in the words of
    ``Outcome.termination`` (``resign``, ``forfeit``, ``checkmate``...), None
    when the record does not say how the game ended.
    """

    tags: Mapping[str, str]
    moves: tuple[RecordedMove, ...]
    result: str | None
    termination: str | None
    # The result stands on the record's word where the moves stop before the game's end:
    # a game scored by the players' count (Go's ``RE[W+0.5]`` of a record without its
    # scoring phase), which no replay of the moves can check.
    result_stands: bool = False


class RecordFormat(Protocol):
    """A record format of a game's own (PGN for chess): how archives write it, how it is read.

    Optional, read through ``recognizes_text``: ``recognizes_text(text) -> bool``,
    whether ``text`` is a record in this format (an SGF game tree of this game); the
    shell then reads the other records of the game (its own text record) itself, and
    finds the game of a record that names none by it. Without it the format reads every
    record of its game.
    """

    name: str  # the word after ``pbm archive --format`` and of the ``record`` mail: "pgn"
    suffix: str  # the archive file's ending, without the dot: "pgn"
    media_type: str  # the file's MIME type, as programs of the game know it

    def write(self, record: GameRecord) -> str:
        """The record of one game in this format."""
        ...

    def read(self, text: str) -> ReadRecord:
        """The first game of ``text``; ``ValueError`` saying where and why it cannot be read."""
        ...

    def recognizes(self, tags: Mapping[str, str]) -> bool:
        """Whether a record with these tags, naming no game, is one of this format."""
        ...


class GameState(Protocol):
    """One position of a game, with everything needed to go on from it.

    Optional, each read through the helper of its name below: ``picture(seat, alt,
    last)`` and ``legend(seat)`` (the board drawn), ``can_win(seat)``,
    ``time_out_outcome(seat)`` (how the game ends when ``seat`` runs out of time, where
    that is no plain loss: Go's scoring phase), ``legal_moves_text()`` (the ``moves``
    mail's answer, where a list of every move would be long: Hex's empty cells by row),
    ``perft(depth)`` (the count of ``count_turns`` with the game's own move generator),
    and ``computer_move(level, seed, seconds)``.
    """

    @property
    def variant(self) -> str: ...

    @property
    def options(self) -> Mapping[str, str]: ...

    @property
    def ply(self) -> int:
        """Turns played so far; the next turn is move number ``ply + 1``."""
        ...

    @property
    def to_move(self) -> int:
        """The seat to move: 0 (moves first) or 1."""
        ...

    @property
    def outcome(self) -> Outcome | None:
        """The rules' verdict, or None while the game goes on."""
        ...

    def play(self, text: str) -> tuple[GameState, str]:
        """Play a move written by the player to move.

        Returns the new state and the move's canonical notation; raises
        ``IllegalMove`` (``BadNotation`` for text that is no move) otherwise.
        """
        ...

    def legal_moves(self) -> list[str]:
        """Every legal move in canonical notation, sorted."""
        ...

    def example_move(self) -> str | None:
        """One legal move in canonical notation (cheap: no full list), or None."""
        ...

    def diagram(self, seat: int | None = None, ended: str | None = None) -> str:
        """The ASCII board with a legend and whose turn it is, as ``seat`` sees it.

        ``seat`` None: the game's usual side (a game may draw every reader the same).
        ``ended``: how a game that the position does not end ended (``Black wins
        (resign)``, ``Cancelled``), said where whose turn it is would be.
        """
        ...

    def claim_draw(self) -> Outcome:
        """The draw a player may claim in this position (threefold repetition...).

        Raises ``IllegalMove`` saying why when there is none to claim.
        """
        ...

    def dump(self) -> str:
        """A compact text from which ``Game.load`` rebuilds this state."""
        ...


class Game(Protocol):
    """A game the server can run.

    Optional, read through ``record_formats`` (a game may leave it out):
    ``record_formats: tuple[RecordFormat, ...]``, the game's own record
    formats, which ``pbm archive --format NAME`` writes and ``pbm rules
    replay`` reads (the first that reads is used for every record of the game).

    Optional, read through ``move_number``: ``move_number(ply) -> int``, the
    number players give the turn played as the game's ``ply``-th (chess: White's
    and Black's move 4 are plies 7 and 8). Without it a move's number is its ply.

    Optional, read through ``move_phrases``: ``looks_like_phrase(text) -> bool``,
    whether a text of several words is written as one move of the game (``g 7``,
    ``dead D4 E5``): then the rest of a command's line is the move. Without it a move
    is one word.

    A word the shell knows as a command (``accept``) is a move of the game where the
    game lists it among ``legal_moves()`` and the board has no challenge, undo or draw
    offer to answer: Go's scoring phase.

    Optional, read through ``line_moves``: ``line_moves(text) -> tuple[str, ...]``,
    the moves of a line of play as players write it (a conditional move tree's
    line; chess: ``12...Nf6 13.e5 Nd5``). Without it each word is a move.
    """

    name: str  # the word in mail commands and on the CLI: "accasta"
    title: str  # for people: "Accasta"
    variants: tuple[str, ...]  # the first is the default
    options: tuple[Option, ...]
    seat_names: tuple[str, str]  # ("White", "Black")
    # The words game records use for each seat, in the languages they are
    # written in (a record ending "Weiß gibt auf" is read with these).
    seat_words: tuple[tuple[str, ...], tuple[str, ...]]
    notation_examples: tuple[str, ...]  # moves as players write them, for help texts
    draw_offers: bool  # whether the players may agree a draw

    def looks_like_move(self, text: str) -> bool:
        """Whether a word could be meant as a move (reply mode, records): cheap, no rules."""
        ...

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        """Validate a variant and its options; return them with defaults filled in.

        Raises ``BadOption`` with a message that lists what would work.
        """
        ...

    def new(
        self, variant: str | None = None, options: Mapping[str, str] | None = None
    ) -> GameState:
        """The starting position."""
        ...

    def load(self, data: str) -> GameState:
        """The inverse of ``GameState.dump``."""
        ...

    def help_text(self) -> str:
        """The rules and the notation, for the ``help G`` mail command."""
        ...


def check_declared_options(
    game: Game, variant: str | None, given: Mapping[str, str]
) -> tuple[str, dict[str, str]]:
    """The variant and options of ``given`` checked against what ``game`` declares.

    Keys and values are read case-insensitively (``-`` for ``_`` in keys); the
    result has every declared option, defaults filled in; an option that
    applies to some variants only keeps its default in the others.
    Raises ``BadOption`` naming what would work. Games call this from
    ``check_options`` and add their own rules.
    """
    chosen = (variant or game.variants[0]).lower()
    if chosen not in game.variants:
        raise BadOption(f"unknown variant {variant!r}: choose {' or '.join(game.variants)}")
    declared = {o.name: o for o in game.options}
    checked = {o.name: o.default for o in game.options}
    for key, value in given.items():
        name = key.lower().replace("-", "_")
        option = declared.get(name)
        if option is None:
            known = ", ".join(sorted(declared)) or "no options"
            raise BadOption(f"unknown option {key!r}: {game.title} knows {known}")
        val = value.lower()
        if val not in option.values:
            raise BadOption(f"{name} cannot be {value!r}: choose {' or '.join(option.values)}")
        if option.variants and chosen not in option.variants and val != option.default:
            only = " or ".join(v.capitalize() for v in option.variants)
            raise BadOption(f"{name}={val} is a rule of the {only} variant only")
        checked[name] = val
    return chosen, checked


@functools.cache
def registry() -> Mapping[str, Game]:
    """Every game installed, by name: the ``pbm.games`` entry points, loaded once.

    ``registry.cache_clear()`` looks again (a test that installs a game).
    """
    found: dict[str, Game] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        game: Game = entry.load()
        found[game.name.lower()] = game
    return dict(sorted(found.items()))


def get(name: str) -> Game:
    """The game called ``name`` (case-insensitive); KeyError if there is none."""
    return registry()[name.lower()]


def names() -> tuple[str, ...]:
    """The names of every game this server runs, sorted."""
    return tuple(registry())


def looks_like_any_move(word: str) -> bool:
    """Whether ``word`` looks like a move of any game this server runs (a mail that names
    no game yet)."""
    return any(game.looks_like_move(word) for game in registry().values())


def looks_like_move_of(name: str | None) -> Callable[[str], bool]:
    """The test of a word that may be a move: the game ``name``'s, or any game's when
    ``name`` is none this server runs (a board not known yet)."""
    game = registry().get(name or "")
    return game.looks_like_move if game is not None else looks_like_any_move


def move_number(game: Game, ply: int) -> int:
    """The number players give the ``ply``-th turn of ``game`` (``Game.move_number``;
    the ply itself when the game numbers every turn)."""
    number: Callable[[int], int] | None = getattr(game, "move_number", None)
    return ply if number is None else number(ply)


def picture(state: GameState, seat: int = 0, alt: str = "", last: str = "") -> str | None:
    """The position as an SVG picture from ``seat`` (the optional ``GameState.picture
    (seat, alt, last)``: a game without it has none, and its ASCII diagram stands in).
    ``last``: the last move's notation, for a game that marks it from there (chess
    knows its own); ``alt``: the picture's name for a screen reader."""
    draw: Callable[[int, str, str], str] | None = getattr(state, "picture", None)
    return draw(seat, alt, last) if draw is not None else None


def legend(state: GameState, seat: int = 0) -> str:
    """What the picture from ``seat`` shows, in words to go under it (the optional
    ``GameState.legend(seat)``): which mark is which piece, how a stack reads, what the
    tinted cells are, which side is below. One line a sentence; "" for a game without.
    The ASCII diagram has its own legend."""
    says: Callable[[int], str] | None = getattr(state, "legend", None)
    return says(seat) if says is not None else ""


def can_win(state: GameState, seat: int) -> bool:
    """Whether ``seat`` could still win (the optional ``GameState.can_win(seat)``; a game
    without it: always). A player who runs out of time against one who cannot draws."""
    check: Callable[[int], bool] | None = getattr(state, "can_win", None)
    return True if check is None else check(seat)


def record_formats(game: Game) -> tuple[RecordFormat, ...]:
    """The record formats of ``game``'s own (``Game.record_formats``); none if it has none."""
    formats: tuple[RecordFormat, ...] = getattr(game, "record_formats", ())
    return formats


def record_format(game: Game, name: str) -> RecordFormat | None:
    """``game``'s own record format called ``name`` (case-insensitive), or None."""
    return next((f for f in record_formats(game) if f.name == name.lower()), None)


def time_out_outcome(state: GameState, seat: int) -> Outcome | None:
    """How the game ends when ``seat``, to move, runs out of time, where the rules say
    more than that he loses (the optional ``GameState.time_out_outcome(seat)``: Go's
    scoring phase ends by the score of the marking that stands). None: the shell's
    loss on time."""
    ends: Callable[[int], Outcome | None] | None = getattr(state, "time_out_outcome", None)
    return None if ends is None else ends(seat)


def legal_moves_text(state: GameState) -> str | None:
    """The legal moves in the game's own words (the optional ``GameState.legal_moves_text``:
    Hex's empty cells by row), or None: the shell lists ``legal_moves()``."""
    says: Callable[[], str] | None = getattr(state, "legal_moves_text", None)
    return None if says is None else says()


def count_turns(state: GameState, depth: int) -> int:
    """The number of turn sequences of length ``depth`` from ``state`` (perft), through
    the protocol alone: ``legal_moves`` and ``play``. A finished game has none."""
    if depth <= 0:
        return 1
    if state.outcome is not None:
        return 0
    legal = state.legal_moves()
    if depth == 1:
        return len(legal)
    return sum(count_turns(state.play(m)[0], depth - 1) for m in legal)


def perft(state: GameState, depth: int) -> int:
    """``count_turns`` with the game's own move generator where it has one (the optional
    ``GameState.perft(depth)``: no notation written or read), else through the protocol."""
    count: Callable[[int], int] | None = getattr(state, "perft", None)
    return count_turns(state, depth) if count is None else count(depth)


def move_phrases(game: Game) -> Callable[[str], bool] | None:
    """How ``game`` tells a move of several words (the optional ``Game.looks_like_phrase``:
    ``g 7``, ``dead D4 E5``), or None for a game whose every move is one word."""
    phrase: Callable[[str], bool] | None = getattr(game, "looks_like_phrase", None)
    return phrase


def recognizes_text(record_format: RecordFormat, text: str) -> bool:
    """Whether ``text`` is a record in ``record_format`` (the optional
    ``RecordFormat.recognizes_text``; a format without it reads every record of its game)."""
    check: Callable[[str], bool] | None = getattr(record_format, "recognizes_text", None)
    return True if check is None else check(text)


def knows_text(record_format: RecordFormat) -> bool:
    """Whether ``record_format`` tells its records from others (``recognizes_text``)."""
    return getattr(record_format, "recognizes_text", None) is not None


def line_moves(game: Game, text: str) -> tuple[str, ...]:
    """The moves of a line of play as a player writes it, in order (the optional
    ``Game.line_moves(text)``: chess reads ``12...Nf6 13.e5 Nd5``, its move numbers no
    moves); a game without it takes each word for a move."""
    read: Callable[[str], tuple[str, ...]] | None = getattr(game, "line_moves", None)
    return read(text) if read is not None else tuple(text.split())
