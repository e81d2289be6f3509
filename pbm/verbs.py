"""The verbs a reply may hold: each one's words, what follows it, who may send it, what it does.

A reply to a board mail needs no board, userid or password: it holds a move
or one of these verbs (``resign``, ``chat Good game!``...). Which of them a
reader may send depends on who he is on the board (``Reader``): the player to
move, the other player, the player asked to accept (a challenge, an undo, a
draw), the challenger, a follower. This table is the one place they are
declared: the command language (``pbm.commands``) declares each by-reply
command with its verb, and every text that tells a reader what his reply may
hold (the board mail, the answer to a reply with no command, a follower's
refusal) is made from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from pbm import games
from pbm.model import Board, BoardStatus


def own_record_formats() -> tuple[str, ...]:
    """The names of the games' own record formats, sorted (``pgn``, ``sgf``)."""
    return tuple(
        sorted({f.name for name in games.names() for f in games.record_formats(games.get(name))})
    )


class Reader(Enum):
    """Who reads a board's mail, as one who may answer it by reply."""

    TO_MOVE = "the player to move"
    OTHER_PLAYER = "the other player"  # who waits for his opponent's move
    ASKED = "the player asked"  # to accept a challenge (or an undo, a draw)
    CHALLENGER = "the challenger"  # of a board that waits for an answer
    FOLLOWER = "a follower"
    AFTER = "a player of a game that is over"


@dataclass(frozen=True)
class Verb:
    """One verb a reply may hold.

    ``words``: the first is its name, the others mean the same. ``hint``: what
    it does (the help line of its command). ``readers``: who may send it by
    reply. ``args``: what follows it in a reply, as help shows it; ``bare``:
    written without its word (a move is the move alone). ``draws``: only in a
    game with draws.
    """

    words: tuple[str, ...]
    hint: str
    readers: frozenset[Reader]
    args: str = ""
    bare: bool = False
    draws: bool = False

    @property
    def name(self) -> str:
        return self.words[0]

    def form(self, word: str | None = None) -> str:
        """The verb as a reply writes it: ``chat [MESSAGE]``, ``MOVE[#N]``."""
        if self.bare:
            return self.args
        return " ".join(w for w in (word or self.name, self.args) if w)

    def __str__(self) -> str:
        return self.form()


PLAYERS = frozenset({Reader.TO_MOVE, Reader.OTHER_PLAYER})
ON_THE_BOARD = PLAYERS | {Reader.FOLLOWER, Reader.AFTER}  # whoever gets its board mails

MOVE = Verb(
    ("move",),
    "play MOVE (with #N: only as move N; MOVE claim: claim a draw after it)",
    frozenset({Reader.TO_MOVE}),
    "MOVE[#N]",
    bare=True,
)
QUEUE = Verb(
    ("queue",),
    "your conditional tree: answers played the moment your opponent moves, a line each "
    "(this one, and those below it that begin with if: if THEIR-MOVE then YOUR-MOVE if "
    "..., or the game's own way: if 12...Nf6 13.e5 Nd5), checked now, costing no time "
    "when played; show: the tree; clear: forget it",
    frozenset({Reader.OTHER_PLAYER}),
    "[MOVE [if THEIR-MOVE]|if THEIR-MOVE then MOVE...|show|clear]",
)
REMATCH = Verb(
    ("rematch",),
    "after a game: challenge your opponent to the same game, colours swapped",
    frozenset({Reader.AFTER}),
)
RESIGN = Verb(("resign",), "give up", PLAYERS)
DRAW = Verb(("draw",), "offer a draw (games with draws)", PLAYERS, draws=True)
CLAIM = Verb(
    ("claim",),
    "claim a draw the rules allow (threefold repetition...)",
    frozenset({Reader.TO_MOVE}),
    draws=True,
)
UNDO = Verb(("undo",), "ask to take back your last move", PLAYERS)
ACCEPT = Verb(
    ("accept",),
    "accept a challenge; agree to your opponent's undo request or draw offer",
    PLAYERS | {Reader.ASKED},
)
REJECT = Verb(
    ("reject", "decline"),
    "decline a challenge; refuse an undo request or draw offer",
    PLAYERS | {Reader.ASKED},
)
CANCEL = Verb(
    ("cancel",),
    "cancel a board (at once before any move, else when both ask)",
    PLAYERS | {Reader.CHALLENGER},
)
SHOW = Verb(("show", "board"), "the current diagram", ON_THE_BOARD)
HISTORY = Verb(("history",), "the move list with comments", ON_THE_BOARD)
MOVES = Verb(("moves",), "every legal move", ON_THE_BOARD)
RECORD = Verb(
    # ``record``, and the name of every game's own record format (``pgn``, ``sgf``): each
    # asks for all the board's records.
    ("record", *own_record_formats()),
    "the game's records as files: text, JSON and the game's own formats",
    ON_THE_BOARD,
)
CHAT = Verb(
    ("chat",),
    "send the rest of the mail to the players and followers of the board",
    ON_THE_BOARD,
    "[MESSAGE]",
)
UNSUBSCRIBE = Verb(("unsubscribe",), "stop following it", frozenset({Reader.FOLLOWER}))
# A follower who stopped may start again by replying to one of his old mails.
SUBSCRIBE = Verb(
    ("subscribe",), "follow a board: get every board mail", frozenset({Reader.FOLLOWER})
)

# Every verb, in the order the lists of what a reply may hold give them.
VERBS: tuple[Verb, ...] = (
    MOVE,
    QUEUE,
    REMATCH,
    RESIGN,
    DRAW,
    CLAIM,
    UNDO,
    ACCEPT,
    REJECT,
    CANCEL,
    SHOW,
    HISTORY,
    MOVES,
    RECORD,
    CHAT,
    UNSUBSCRIBE,
    SUBSCRIBE,
)


def sendable(reader: Reader, *, draws: bool = True) -> tuple[Verb, ...]:
    """The verbs ``reader`` may send by reply, in ``VERBS``' order (``draws`` False: a game
    without draws, whose draw verbs are left out)."""
    return tuple(v for v in VERBS if reader in v.readers and (draws or not v.draws))


def listed(verbs: Iterable[Verb]) -> str:
    """``resign, undo, show or chat [MESSAGE]``: verbs as a reply writes them, for a text."""
    forms = [v.form() for v in verbs]
    if len(forms) < 2:
        return "".join(forms)
    return f"{', '.join(forms[:-1])} or {forms[-1]}"


def reader_of(board: Board, userid: str) -> Reader:
    """Who ``userid`` is on ``board``, as one who may reply to its mail (no player: a
    follower)."""
    seat = board.seat_of(userid.lower())
    if seat is None:
        return Reader.FOLLOWER
    if board.status == BoardStatus.WAITING:
        asked = board.challenged == board.player_at(seat)
        return Reader.ASKED if asked else Reader.CHALLENGER
    if board.status != BoardStatus.ACTIVE:
        return Reader.AFTER
    if board.state.to_move == seat:
        return Reader.TO_MOVE
    return Reader.OTHER_PLAYER
