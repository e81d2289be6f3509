"""Accasta move notation: canonical text for turns, and every way players write them.

Canonical (long) form, as in the published games: the origin, ``:``, then the
submoves joined by ``,``; a submove is the moving pieces, a type mark and the
target. Standard pieces are written from the top down, the mover's upper case
and captured enemy pieces lower case (``a1:C+b2,HS-c1``, ``e4:Chsxc3``); Pari
writes the number of pieces, omitted when 1 (``b4:2-c5``, ``e4:+e3``). The
mark is ``-`` onto an empty cell, ``+`` onto a stack the mover heads, ``x``
onto a stack the enemy heads.

Also read: the short form without punctuation (``a1Cd1Hb1b1``, ``c1Ccc4``,
``b42c5``), standard submoves without pieces (the whole remaining stack),
``×`` for x, ``–``/``—`` for -, ``!``/``?`` annotations, spaces, a trailing
``;`` and upper-case cell letters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from pbm.games import BadNotation, IllegalMove
from pbm.games.accasta.board import (
    CASTLES,
    CELLS,
    COLOUR_NAMES,
    D4,
    INDEX,
    ROW_LENGTHS,
    ROWS,
    line,
)
from pbm.games.accasta.position import (
    LIMIT,
    PIECE_NAMES,
    REACH,
    Position,
    Turn,
    colour_of,
    counts,
    how_won,
    turns_from,
    winner,
)

_TRANSLATE = str.maketrans({"×": "x", "X": "x", "–": "-", "—": "-", "−": "-"})
_DROP = re.compile(r"[\s!?;]+")
_CELL = re.compile(r"[a-gA-G][1-7]")
_STANDARD_PIECES = re.compile(r"[SHCshc]*")
_PARI_COUNT = re.compile(r"[0-9]*")
_MARKS = "-+x"


def _relative(pieces: str, mover: int) -> str:
    """Pieces as the mover writes them: his own upper case, the enemy's lower case."""
    return pieces if mover == 0 else pieces.swapcase()


def _mark(target: str, mover: int) -> str:
    if not target:
        return "-"
    return "+" if colour_of(target[-1]) == mover else "x"


def _pieces_text(pos: Position, k: int, moving: str, mover: int) -> str:
    """Pari: the count, omitted when 1; standard: the pieces from the top down."""
    if pos.pari:
        return str(k) if k > 1 else ""
    return _relative(moving[::-1], mover)


def turn_to_text(pos: Position, turn: Turn, *, short: bool = False) -> str:
    """The turn in canonical long notation, or in the short form with no punctuation."""
    board = list(pos.board)
    origin = turn[0]
    mover = pos.to_move
    parts = []
    for i in range(1, len(turn), 2):
        k, t = turn[i], turn[i + 1]
        s = board[origin]
        moving = s[-k:]
        target = board[t]
        pieces = _pieces_text(pos, k, moving, mover)
        mark = "" if short else _mark(target, mover)
        parts.append(f"{pieces}{mark}{CELLS[t]}")
        board[t] = target + moving
        board[origin] = s[:-k]
    if short:
        return CELLS[origin] + "".join(parts)
    return f"{CELLS[origin]}:{','.join(parts)}"


@dataclass(frozen=True, slots=True)
class _Submove:
    pieces: str | None  # standard: the letters written; Pari: the digits; None: omitted
    mark: str | None
    target: str


@dataclass(frozen=True, slots=True)
class _Parse:
    origin: str
    submoves: tuple[_Submove, ...]


def normalize(text: str) -> str:
    """The move text without annotations, spaces, ``;`` and typographic variants."""
    return _DROP.sub("", text.translate(_TRANSLATE))


def _parses(text: str, pari: bool) -> Iterator[_Parse]:
    """Every way to read ``text`` (already normalized) as origin and submoves."""
    m = _CELL.match(text)
    if m is None:
        return
    origin = m.group().lower()
    rest = text[m.end() :]
    if rest.startswith(":"):
        rest = rest[1:]
    if not rest:
        return
    pieces_re = _PARI_COUNT if pari else _STANDARD_PIECES

    def submoves(s: str, first: bool) -> Iterator[tuple[_Submove, ...]]:
        if not s:
            yield ()
            return
        if not first and s.startswith(","):
            s = s[1:]
        pm = pieces_re.match(s)
        longest = pm.end() if pm else 0
        # Longest run of piece letters first; shorter ones when a cell letter
        # (c2, or C2 in upper case) was swallowed as a piece.
        for n in range(longest, -1, -1):
            pieces = s[:n] or None
            r = s[n:]
            mark = None
            if r[:1] in _MARKS and r[:1]:
                mark, r = r[0], r[1:]
            cm = _CELL.match(r)
            if cm is None:
                continue
            sub = _Submove(pieces, mark, cm.group().lower())
            for tail in submoves(r[cm.end() :], False):
                yield (sub, *tail)

    for subs in submoves(rest, True):
        yield _Parse(origin, subs)


# A letter and a number, as a cell is written: to name one that is no cell (b9, h1).
_CELL_LIKE = re.compile(r"(?<![a-z])[a-z][0-9]+")


def parse_turn(pos: Position, text: str) -> Turn:
    """The legal turn ``text`` describes in ``pos``.

    Raises ``BadNotation`` for text that is no Accasta move, and ``IllegalMove``
    with the reason for a move the rules forbid.
    """
    out = pos.outcome()
    if out is not None:
        raise IllegalMove(f"the game is over: {COLOUR_NAMES[winner(out)]} won ({how_won(out)})")
    norm = normalize(text)
    first_error: IllegalMove | None = None
    for parse in _parses(norm, pos.pari):
        if parse.origin not in INDEX or any(sub.target not in INDEX for sub in parse.submoves):
            continue  # a cell that is none (g7): said below
        try:
            return _resolve(pos, parse)
        except IllegalMove as exc:
            if first_error is None:
                first_error = exc
    if first_error is not None:
        raise first_error
    example = "b4:2-c5 or b42c5" if pos.pari else "a1:C-d1,H-b1 or a1Cd1Hb1"
    wrong = [c for c in _CELL_LIKE.findall(norm) if c not in INDEX]
    if wrong:
        raise BadNotation(
            f"{wrong[0]} is not a cell of the board: rows a to g have "
            f"{', '.join(f'{r}1-{r}{n}' for r, n in zip(ROWS, ROW_LENGTHS, strict=True))} "
            f"(e.g. {example})"
        )
    raise BadNotation(
        f"{text.strip()!r} is not an Accasta move: write the origin cell, then each "
        f"submove as pieces, a mark (- + x) and a target cell, e.g. {example}"
    )


def _names_top_down(stack: str, mover: int) -> str:
    return ", ".join(_relative(stack[::-1], mover))


def _resolve(pos: Position, parse: _Parse) -> Turn:
    mover = pos.to_move
    me, enemy = COLOUR_NAMES[mover], COLOUR_NAMES[1 - mover]
    board = list(pos.board)
    origin = INDEX[parse.origin]
    start = board[origin]
    if not start:
        raise IllegalMove(f"{parse.origin} is empty: start from a stack you head")
    if colour_of(start[-1]) != mover:
        raise IllegalMove(
            f"{parse.origin} is headed by {enemy}; it is {me}'s turn: start from a stack you head"
        )
    home = origin in CASTLES[mover]
    turn: list[int] = [origin]
    ended: str | None = None
    previous = ""
    for sub in parse.submoves:
        if ended == "empty":
            raise IllegalMove(
                f"after {previous} nothing is left on {parse.origin}: the turn is over"
            )
        if ended == "release":
            raise IllegalMove(
                f"{previous} releases {enemy}'s piece on {parse.origin}, which ends the turn: "
                "nothing may follow it"
            )
        s = board[origin]
        n = len(s)
        if pos.pari:
            k = int(sub.pieces) if sub.pieces else 1
            if k == 0 or k > n:
                raise IllegalMove(
                    f"{parse.origin} holds {n} piece{'s' if n != 1 else ''}; you cannot move {k}"
                )
            mine = counts(s)[mover]
            reach = mine
        else:
            if sub.pieces is None:
                k = n
            else:
                k = len(sub.pieces)
                expected = _relative(s[-k:][::-1], mover) if k <= n else ""
                if k > n or sub.pieces.lower() != expected.lower():
                    raise IllegalMove(
                        f"{parse.origin} holds {_names_top_down(s, mover)} from the top; "
                        f"you wrote {', '.join(sub.pieces)}"
                    )
            reach = REACH[s[-1]]
        moving = s[-k:]
        rest = s[:-k]
        t = INDEX[sub.target]
        if t == origin:
            raise IllegalMove(f"pieces on {parse.origin} cannot move to {sub.target} itself")
        path = line(origin, t)
        if path is None:
            raise IllegalMove(
                f"{sub.target} is not on a straight line from {parse.origin}: "
                "pieces move straight in one of the six directions"
            )
        if len(path) > reach:
            if pos.pari:
                why = (
                    f"{parse.origin} holds {reach} of your pieces, so they move up to {reach}"
                    f" cell{'s' if reach != 1 else ''}"
                )
            else:
                name = PIECE_NAMES[s[-1].upper()]
                why = f"a {name} moves up to {reach} cell{'s' if reach != 1 else ''}"
            raise IllegalMove(
                f"{sub.target} is {len(path)} cells from {parse.origin}: too far, {why}"
            )
        for c in path[:-1]:
            if board[c]:
                raise IllegalMove(
                    f"{CELLS[c]} is in the way from {parse.origin} to {sub.target}: "
                    "no piece moves over another"
                )
        if t == D4 and pos.d4_banned:
            raise IllegalMove(
                "White may not move onto d4 in the first turn (option d4_opening=banned)"
            )
        target = board[t]
        tw, tb = counts(target)
        mw, mb = counts(moving)
        for colour, total in ((0, tw + mw), (1, tb + mb)):
            if total > LIMIT:
                raise IllegalMove(
                    f"{sub.target} would hold {total} {COLOUR_NAMES[colour].lower()} pieces: "
                    f"a stack holds at most {LIMIT} of each colour"
                )
        actual = _mark(target, mover)
        if sub.mark is not None and sub.mark != actual:
            what = {
                "-": "an empty cell",
                "+": "your own stack",
                "x": f"a stack headed by {enemy}",
            }[actual]
            raise IllegalMove(f"{sub.target} is {what}: write {actual} not {sub.mark}")
        if rest and colour_of(rest[-1]) != mover:
            if home:
                raise IllegalMove(
                    f"moving {k} from {parse.origin} would release {enemy}'s piece inside "
                    "your own castle, which is not allowed"
                )
            ended = "release"
        elif not rest:
            ended = "empty"
        board[t] = target + moving
        board[origin] = rest
        turn += (k, t)
        previous = f"{_pieces_text(pos, k, moving, mover)}{actual}{sub.target}"
    result = tuple(turn)
    if result not in turns_from(pos, origin):  # a guard: the checks above mirror the generator
        raise IllegalMove(f"{turn_to_text(pos, result)} is not a legal move here")
    return result
