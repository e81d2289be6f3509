"""Accasta positions, legal turns and game end — pure values, no I/O.

A position holds the 37 stacks, whose turn it is, the ply and the rules
options. Stacks are strings written bottom to top: ``"SHC"`` is a Chariot on a
Horse on a Shield. White pieces are upper case (``S H C``, Pari ``P``), Black
lower case (``s h c``, Pari ``p``).

A **turn** is a flat tuple ``(origin, k1, t1, k2, t2, ...)``: from the stack
on ``origin`` the top ``k1`` pieces move to cell ``t1``; if the mover heads
the origin again, the top ``k2`` pieces of what is left move to ``t2``, and so
on. Cells are indices into ``board.CELLS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pbm.games import Outcome
from pbm.games.accasta.board import CASTLES, COLOUR_NAMES, D4, INDEX, N_CELLS, RAYS, WHITE
from pbm.games.accasta.diagram import render

Turn = tuple[int, ...]

STANDARD: Final = "standard"
PARI: Final = "pari"
VARIANTS: Final = (STANDARD, PARI)

CASTLE_WIN_VALUES: Final = ("immediate", "next_turn")
D4_OPENING_VALUES: Final = ("allowed", "banned")

# How far a leading piece moves in the standard game.
REACH: Final = {"S": 1, "H": 2, "C": 3, "s": 1, "h": 2, "c": 3}
PIECE_NAMES: Final = {"S": "Shield", "H": "Horse", "C": "Chariot"}
LIMIT: Final = 3  # no stack holds more than 3 pieces of one colour


class _StackInfo:
    """What the move generator needs to know about one stack, computed once."""

    __slots__ = ("counts", "own", "splits")

    def __init__(self, s: str) -> None:
        w = sum(1 for ch in s if ch.isupper())
        self.counts = (w, len(s) - w)
        self.own = self.counts  # own[colour]: pieces of that colour in the stack
        n = len(s)
        splits = []
        for k in range(1, n + 1):
            moving, rest = s[n - k :], s[: n - k]
            mw = sum(1 for ch in moving if ch.isupper())
            rest_head = -1 if not rest else (WHITE if rest[-1].isupper() else 1)
            splits.append((k, moving, rest, mw, k - mw, rest_head))
        self.splits: tuple[tuple[int, str, str, int, int, int], ...] = tuple(splits)


class _InfoCache(dict[str, _StackInfo]):
    def __missing__(self, s: str) -> _StackInfo:
        info = self[s] = _StackInfo(s)
        return info


class _CountCache(dict[str, tuple[int, int]]):
    def __missing__(self, s: str) -> tuple[int, int]:
        w = sum(1 for ch in s if ch.isupper())
        counts = self[s] = (w, len(s) - w)
        return counts


_INFO: Final = _InfoCache()
_COUNTS: Final = _CountCache()


def colour_of(piece: str) -> int:
    """0 for a white piece, 1 for a black one."""
    return WHITE if piece.isupper() else 1


def counts(stack: str) -> tuple[int, int]:
    """(white pieces, black pieces) in a stack."""
    return _COUNTS[stack]


def _expand(
    board: list[str],
    origin: int,
    prefix: Turn,
    out: list[Turn],
    mover: int,
    pari: bool,
    home: bool,
) -> None:
    """Append to ``out`` every turn that starts with ``prefix`` and moves on from ``origin``.

    ``board`` is changed while a continuation is explored and restored after.
    """
    s = board[origin]
    info = _INFO[s]
    reach = info.own[mover] if pari else REACH[s[-1]]
    rays = RAYS[origin][reach]
    append = out.append
    for k, moving, rest, mw, mb, rest_head in info.splits:
        if rest_head == mover:
            go_on = True
        elif rest_head == -1:
            go_on = False
        elif home:
            continue  # a release inside one's own castle is forbidden
        else:
            go_on = False  # a release ends the turn
        for ray in rays:
            for t in ray:
                target = board[t]
                if target:
                    tw, tb = _COUNTS[target]
                    if tw + mw <= LIMIT and tb + mb <= LIMIT:
                        turn = (*prefix, k, t)
                        append(turn)
                        if go_on:
                            board[origin] = rest
                            board[t] = target + moving
                            _expand(board, origin, turn, out, mover, pari, home)
                            board[t] = target
                            board[origin] = s
                    break  # nothing moves over an occupied cell
                turn = (*prefix, k, t)
                append(turn)
                if go_on:
                    board[origin] = rest
                    board[t] = moving
                    _expand(board, origin, turn, out, mover, pari, home)
                    board[t] = ""
                    board[origin] = s


def apply_turn(board: tuple[str, ...], turn: Turn) -> tuple[str, ...]:
    """The board after ``turn`` (assumed legal)."""
    b = list(board)
    origin = turn[0]
    for i in range(1, len(turn), 2):
        k, t = turn[i], turn[i + 1]
        s = b[origin]
        b[t] += s[-k:]
        b[origin] = s[:-k]
    return tuple(b)


def initial_board(variant: str = STANDARD) -> tuple[str, ...]:
    """The starting position's stacks."""
    board = [""] * N_CELLS
    white = {"a": "SHC", "b": "SH", "c": "S"}
    black_rows = {"g": "a", "f": "b", "e": "c"}
    for name, k in INDEX.items():
        row, num = name[0], int(name[1])
        if row == "a" or (row == "b" and 2 <= num <= 4) or (row == "c" and num in (3, 4)):
            board[k] = white[row]
        elif row in black_rows:
            mirror = black_rows[row]
            if (
                mirror == "a"
                or (mirror == "b" and 2 <= num <= 4)
                or (mirror == "c" and num in (3, 4))
            ):
                board[k] = white[mirror].lower()
    if variant == PARI:
        board = ["".join("P" if ch.isupper() else "p" for ch in s) for s in board]
    return tuple(board)


@dataclass(frozen=True, slots=True)
class Position:
    """An Accasta position: stacks, the player to move, the ply and the options."""

    board: tuple[str, ...]
    to_move: int = WHITE
    ply: int = 0
    variant: str = STANDARD
    castle_win: str = "immediate"
    d4_opening: str = "allowed"

    @classmethod
    def initial(
        cls, variant: str = STANDARD, castle_win: str = "immediate", d4_opening: str = "allowed"
    ) -> Position:
        """The starting position; White moves first."""
        return cls(initial_board(variant), WHITE, 0, variant, castle_win, d4_opening)

    @property
    def pari(self) -> bool:
        return self.variant == PARI

    @property
    def d4_banned(self) -> bool:
        """White may not land on d4 in the first turn (Italian Pari rules)."""
        return self.pari and self.d4_opening == "banned" and self.ply == 0

    def legal_turns(self) -> list[Turn]:
        """Every legal turn of the player to move, in generation order."""
        return _legal_turns(self)

    def push(self, turn: Turn) -> Position:
        """The position after ``turn`` (which must be one of ``legal_turns()``)."""
        return Position(
            apply_turn(self.board, turn),
            1 - self.to_move,
            self.ply + 1,
            self.variant,
            self.castle_win,
            self.d4_opening,
        )

    def castle_stacks(self, colour: int) -> int:
        """How many stacks ``colour`` heads inside the enemy castle."""
        board = self.board
        n = 0
        for c in CASTLES[1 - colour]:
            s = board[c]
            if s and (s[-1].isupper() == (colour == WHITE)):
                n += 1
        return n

    def outcome(self) -> Outcome | None:
        """Who has won and how, or None while the game goes on.

        ``immediate``: a player who ends his turn heading 3 stacks in the enemy
        castle wins. ``next_turn``: he wins only if that still holds when his next
        turn begins. Either way, a player who cannot move when his turn begins loses.
        """
        return _outcome(self)

    def is_over(self) -> bool:
        return _outcome(self) is not None

    def __str__(self) -> str:
        return self.diagram()

    def diagram(self, *, turned: bool = False) -> str:
        """The ASCII diagram with its legend and whose turn it is or who won (``turned``:
        as Black sees the board, row a at the top)."""
        out = _outcome(self)
        status = None
        if out is not None:
            status = f"{COLOUR_NAMES[winner(out)]} wins: {how_won(out)}"
        to_move = None if out else self.to_move
        return render(self.board, pari=self.pari, to_move=to_move, status=status, turned=turned)


def winner(out: Outcome) -> int:
    """The winning seat of an outcome the rules decided: Accasta has no draws."""
    assert out.winner is not None
    return out.winner


def how_won(out: Outcome) -> str:
    """The way a game ended, in words: "3 stacks in the enemy castle", "Black cannot move"."""
    if out.termination == "castle":
        return "3 stacks in the enemy castle"
    return f"{COLOUR_NAMES[1 - winner(out)]} cannot move"


# Caches keyed by the position value: positions are immutable, and the service,
# the notation and the outcome check all ask for the same turns.
_TURNS_CACHE: dict[Position, list[Turn]] = {}
_OUTCOME_CACHE: dict[Position, Outcome | None] = {}
_CACHE_LIMIT = 4096


def _legal_turns(pos: Position) -> list[Turn]:
    cached = _TURNS_CACHE.get(pos)
    if cached is not None:
        return cached
    turns = generate_turns(pos)
    if len(_TURNS_CACHE) >= _CACHE_LIMIT:
        _TURNS_CACHE.clear()
    _TURNS_CACHE[pos] = turns
    return turns


def generate_turns(pos: Position) -> list[Turn]:
    """Every legal turn of ``pos`` (uncached: the benchmark's entry point)."""
    board = list(pos.board)
    out: list[Turn] = []
    for origin in range(N_CELLS):
        _turns_from(pos, board, origin, out)
    if pos.d4_banned:
        out = [t for t in out if D4 not in t[2::2]]
    return out


def turns_from(pos: Position, origin: int) -> list[Turn]:
    """The legal turns of ``pos`` that start on ``origin``, in generation order.

    Checking one turn someone wrote needs no more than the turns of its cell.
    """
    out: list[Turn] = []
    _turns_from(pos, list(pos.board), origin, out)
    if pos.d4_banned:
        out = [t for t in out if D4 not in t[2::2]]
    return out


def _turns_from(pos: Position, board: list[str], origin: int, out: list[Turn]) -> None:
    """Append the turns starting on ``origin`` (none unless the mover heads it)."""
    s = board[origin]
    mover = pos.to_move
    if s and s[-1].isupper() == (mover == WHITE):
        _expand(board, origin, (origin,), out, mover, pos.pari, origin in CASTLES[mover])


def first_turn(pos: Position) -> Turn | None:
    """``legal_turns()[0]`` (None when there is none), without generating the rest.

    Turns are generated stack by stack, so the first stack that can move
    gives it. Whether a game is over, and the example in a board mail, need
    no more than this.
    """
    cached = _TURNS_CACHE.get(pos)
    if cached is not None:
        return cached[0] if cached else None
    for origin in range(N_CELLS):
        out = turns_from(pos, origin)
        if out:
            return out[0]
    return None


def has_legal_turn(pos: Position) -> bool:
    """Whether the player to move has any legal turn."""
    return first_turn(pos) is not None


def _outcome(pos: Position) -> Outcome | None:
    if pos in _OUTCOME_CACHE:
        return _OUTCOME_CACHE[pos]
    result: Outcome | None = None
    if pos.castle_win == "next_turn":
        if pos.castle_stacks(pos.to_move) >= 3:
            result = Outcome(pos.to_move, "castle")
    elif pos.ply > 0 and pos.castle_stacks(1 - pos.to_move) >= 3:
        result = Outcome(1 - pos.to_move, "castle")
    if result is None and not has_legal_turn(pos):
        result = Outcome(1 - pos.to_move, "no moves")
    if len(_OUTCOME_CACHE) >= _CACHE_LIMIT:
        _OUTCOME_CACHE.clear()
    _OUTCOME_CACHE[pos] = result
    return result


def perft(pos: Position, depth: int) -> int:
    """The number of turn sequences of length ``depth`` from ``pos``.

    A finished game has none: a sequence stops counting where the game ends.
    """
    if depth <= 0:
        return 1
    if _outcome(pos) is not None:
        return 0
    turns = _legal_turns(pos)
    if depth == 1:
        return len(turns)
    return sum(perft(pos.push(t), depth - 1) for t in turns)
