"""Conditional move trees: a player's answers written in advance, keyed by the opponent's
reply. Pure values and functions, no database.

A player waiting for his opponent gives lines, each the moves to come from the
board's position, the opponent's first: ``if g2:C+f2 then a3:S-b3 if g1:H-f1 then
b2:C-c3``, in the game's notation (``if 12...Nf6 13.e5 Nd5 14.c4`` too, for a game
that reads a line of moves its own way: ``pbm.games.line_moves``). Today's form,
``MOVE if THEIRS``, is a line of one step, and ``MOVE`` alone answers any reply
(``ANY``). The lines are merged into one ``Tree``, each move checked by the rules
when it is given (``checked_line``); a line that gives a second answer to a reply
the tree answers already is refused (``Conflict``). When the opponent moves, the
tree's answer to his move is played (``Tree.answer``) and what follows it is the
tree from then on; a move the tree does not answer drops it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pbm.games import BadNotation, Game, GameState, IllegalMove, line_moves

ANY = "*"  # the reply of an answer given for whatever the opponent plays
MAX_LINES = 30  # lines a tree holds (its leaves)
MAX_PLIES = 30  # moves of one line, both players' together

Line = tuple[str, ...]  # their move, my answer, their move, my answer... (canonical)


class Conflict(ValueError):
    """A line the tree cannot take: ``str()`` says why, in a player's words."""


@dataclass(frozen=True, slots=True)
class Tree:
    """The lines of one player's tree on one board, each a full path from the root (its
    moves in canonical notation, the opponent's first; ``ANY`` for any reply). No line
    is a prefix of another, and no two give different answers to one reply."""

    lines: tuple[Line, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.lines)

    def merged(self, line: Line) -> Tree:
        """The tree with ``line`` in it; ``Conflict`` when it answers a reply the tree
        answers otherwise already, or makes the tree hold more than ``MAX_LINES``."""
        if not line or len(line) % 2:
            raise Conflict("A line ends with your own answer.")
        for old in self.lines:
            for i in range(0, min(len(old), len(line)), 2):
                if old[i] != line[i]:
                    break
                if old[i + 1] != line[i + 1]:
                    raise Conflict(_conflict(line, old, i))
        if any(old[: len(line)] == line for old in self.lines):
            return self  # it is in the tree already
        kept = tuple(old for old in self.lines if line[: len(old)] != old)
        if len(kept) + 1 > MAX_LINES:
            raise Conflict(
                f"A tree holds at most {MAX_LINES} lines; this one would be line "
                f"{len(kept) + 1}. Clear the tree, or give fewer lines."
            )
        return Tree((*kept, line))

    def answer(self, theirs: str) -> tuple[str, Tree] | None:
        """The answer to the opponent's move ``theirs`` (canonical) and the tree from the
        position after it; None when the tree does not answer it. A line for that very
        move wins over one for any move (``ANY``)."""
        for key in (theirs, ANY):
            found = [line for line in self.lines if line[0] == key]
            if found:
                rest = tuple(line[2:] for line in found if len(line) > 2)
                return found[0][1], Tree(rest)
        return None

    def to_json(self) -> str:
        return json.dumps([list(line) for line in self.lines], separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Tree:
        return cls(tuple(tuple(str(m) for m in line) for line in json.loads(text)))

    def render(self, them: str, indent: str = "  ") -> list[str]:
        """The tree as indented text: each reply and its answer, what follows it below."""
        out: list[str] = []
        steps = dict.fromkeys((line[0], line[1]) for line in self.lines)  # in order, once
        for reply, answer in steps:
            shown = f"{them} plays anything else" if reply == ANY else reply
            out.append(f"{indent}if {shown} then {answer}")
            rest = Tree(tuple(ln[2:] for ln in self.lines if ln[:2] == (reply, answer) and ln[2:]))
            out += rest.render(them, indent + "  ")
        return out


def _conflict(line: Line, old: Line, at: int) -> str:
    before = f" after {' '.join(line[:at])}" if at else ""
    reply = "any other move" if line[at] == ANY else line[at]
    return (
        f"Your tree answers {reply}{before} with {old[at + 1]} already; a line cannot "
        f"answer it with {line[at + 1]} as well. Clear the tree to change it."
    )


@dataclass(frozen=True, slots=True)
class Written:
    """A line as the player wrote it: its moves (``ANY`` for any reply), the opponent's
    first."""

    moves: tuple[str, ...]


def read_line(rules: Game, text: str) -> Written:
    """The moves of one written line: ``if A then B [if C then D]...``, ``if A B C D``
    (the game's own reading of a line of moves, ``pbm.games.line_moves``), ``MINE if
    THEIRS`` (today's form) or ``MINE`` (an answer to any reply). ``Conflict`` for a
    line that is none of them."""
    words = text.split()
    low = [w.lower() for w in words]
    if not words:
        raise Conflict("An empty line is no line.")
    if "then" in low:
        if low[0] != "if":
            raise Conflict(f"A line with 'then' begins with 'if': {text.strip()!r}.")
        moves: list[str] = []
        expect, current = "if", list[str]()  # the keyword the next segment follows
        for at, (word, lowered) in enumerate(zip(words, low, strict=True)):
            if lowered == expect:
                if at:  # the first "if" has no move before it
                    moves.append(_one_move(rules, current, _other(expect), text))
                current = []
                expect = _other(expect)
            elif lowered in ("if", "then"):
                raise Conflict(f"'{word}' comes where a move should: {text.strip()!r}.")
            else:
                current.append(word)
        if expect == "then":  # the line ends after "if MOVE": an opponent's move alone
            raise Conflict(f"A line ends with your answer, after 'then': {text.strip()!r}.")
        moves.append(_one_move(rules, current, "then", text))
        return Written(tuple(moves))
    if low[0] == "if":
        moves = list(line_moves(rules, " ".join(words[1:])))
        if not moves:
            raise Conflict("'if' needs the opponent's move after it.")
        return Written(tuple(moves))
    if "if" in low:
        at = low.index("if")
        mine, theirs = words[:at], words[at + 1 :]
        if not mine or not theirs or "if" in low[at + 1 :]:
            raise Conflict(f"Write MOVE if THEIR-MOVE, or if THEIR-MOVE then MOVE: {text!r}.")
        return Written((" ".join(theirs), " ".join(mine)))
    return Written((ANY, " ".join(words)))


def _other(keyword: str) -> str:
    return "then" if keyword == "if" else "if"


def _one_move(rules: Game, words: list[str], after: str, text: str) -> str:
    """The one move ``words`` (after the keyword ``after``) write."""
    if not words:
        raise Conflict(f"A move is missing after '{after}': {text.strip()!r}.")
    found = line_moves(rules, " ".join(words))
    return found[0] if len(found) == 1 else " ".join(words)


@dataclass(frozen=True, slots=True)
class Names:
    """How a line's refusals name its moves: the opponent's name and the number players
    give a ply (``Game.move_number``)."""

    them: str
    number: Callable[[int], int] = int


def checked_line(state: GameState, written: Written, names: Names, index: int = 1) -> Line:
    """``written`` (line ``index`` of the mail) played out from ``state``, where the
    opponent is to move: every move checked by the rules, now; the line in canonical
    notation. ``Conflict`` naming the ply of a move the rules refuse."""
    moves = written.moves
    if len(moves) > MAX_PLIES:
        raise Conflict(f"Line {index} holds {len(moves)} moves; a line holds at most {MAX_PLIES}.")
    if len(moves) % 2:
        raise Conflict(
            f"Line {index} ends with {names.them}'s move {moves[-1]}: end it with your answer."
        )
    if moves[0] == ANY:
        return (ANY, _any_reply_answer(state, moves[1], index))
    out: list[str] = []
    for i, text in enumerate(moves):
        ply = state.ply + 1
        who = f"{names.them}'s" if i % 2 == 0 else "your"
        where = f"Line {index}, ply {i + 1} ({who} move {names.number(ply)}, {text})"
        if state.outcome is not None:
            raise Conflict(f"{where}: the game is over before it.")
        try:
            state, canonical = state.play(text)
        except IllegalMove as exc:
            raise Conflict(f"{where}: {exc}") from None
        out.append(canonical)
    return tuple(out)


def _any_reply_answer(state: GameState, text: str, index: int) -> str:
    """An answer to any reply: only how it is written can be checked now (whether it is
    legal depends on the reply); it is played if it is legal then."""
    legal = state.legal_moves()
    if not legal:
        raise Conflict(f"Line {index}: the game is over.")
    try:
        return state.play(legal[0])[0].play(text)[1]
    except BadNotation as exc:
        raise Conflict(f"Line {index}: {exc}") from None
    except IllegalMove:
        return text  # it may well be legal after another reply


def checked_lines(rules: Game, state: GameState, texts: Sequence[str], names: Names) -> list[Line]:
    """Each written line (``read_line``) played out from ``state`` (``checked_line``);
    ``Conflict`` naming the line that cannot be."""
    out = []
    for index, text in enumerate(texts, start=1):
        try:
            written = read_line(rules, text)
        except Conflict as exc:
            raise Conflict(f"Line {index}: {exc}") from None
        out.append(checked_line(state, written, names, index))
    return out


def merge_all(tree: Tree, lines: Sequence[Line]) -> Tree:
    """``tree`` with every one of ``lines`` merged in, in order (``Conflict`` naming the
    line that cannot go in: nothing of them is kept then)."""
    for index, line in enumerate(lines, start=1):
        try:
            tree = tree.merged(line)
        except Conflict as exc:
            raise Conflict(f"Line {index}: {exc}") from None
    return tree
