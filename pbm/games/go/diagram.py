"""The board as ASCII for mail: ``X`` Black, ``O`` White, the last move in brackets.

Points are ``.``, star points ``+``; the columns' letters run along the
top and bottom, the rows' numbers down both sides, row 1 at the bottom as
in the notation. A 19x19 board is 44 columns wide. In the scoring phase
(and once the score ended the game) the stones marked dead are written in
lower case, ``x`` and ``o``, and the score is said under the board.
"""

from __future__ import annotations

from pbm.games.go.board import BLACK, EMPTY, star_points
from pbm.games.go.notation import COLUMNS, point_name
from pbm.games.go.scoring import komi_text
from pbm.games.go.values import OVER, PASSED, SCORING, GoPosition

__all__ = ["SEAT_NAMES", "render"]

SEAT_NAMES = ("Black", "White")
_STONES = {BLACK: "X", "w": "O"}


def _rows(state: GoPosition, dead: frozenset[int]) -> list[str]:
    size = state.size
    stars = set(star_points(size))
    head = "    " + " ".join(COLUMNS[:size])
    lines = [head]
    for row in range(size - 1, -1, -1):
        cells, gaps = [], [" "] * (size + 1)
        for col in range(size):
            p = row * size + col
            stone = state.grid[p]
            if stone == EMPTY:
                cells.append("+" if p in stars else ".")
            else:
                mark = _STONES[stone]
                cells.append(mark.lower() if p in dead else mark)
            if p == state.last:
                gaps[col], gaps[col + 1] = "[", "]"
        body = "".join(g + c for g, c in zip(gaps, cells, strict=False)) + gaps[size]
        lines.append(f"{row + 1:>2} {body} {row + 1}")
    lines.append(head)
    return lines


def _last(state: GoPosition) -> str:
    mover = SEAT_NAMES[1 - state.to_move]
    if state.last == PASSED:
        return f"Last move: {mover} passed."
    if state.last is None:
        return ""
    return f"Last move: {mover} {point_name(state.last, state.size)}, in [ ]."


def _status(state: GoPosition, ended: str | None) -> list[str]:
    to_move = SEAT_NAMES[state.to_move]
    if state.phase == OVER:
        return [f"Game over by the score: {state.score.line()}."]
    if state.phase == SCORING:
        marked = (
            "The stones marked dead are written x and o"
            if state.dead
            else "No stones are marked dead"
        )
        lines = [
            f"Play has ended. {marked} (as first proposed by {state.proposer}).",
            f"Score: {state.score.line()}.",
        ]
        if state.accepted is not None:
            lines.append(f"{SEAT_NAMES[state.accepted]} accepts this marking.")
        if ended is not None:
            return [*lines, ended]
        lines.append(
            f"{to_move} to answer: accept, dead POINTS or alive POINTS (to change the "
            "marking), or resume (to play on)."
        )
        return lines
    if ended is not None:
        return [ended]
    if state.passes == 1:
        return [f"{to_move} to move: a second pass in a row ends play."]
    return [f"{to_move} to move."]


def render(state: GoPosition, ended: str | None = None) -> str:
    dead = state.dead if state.phase in (SCORING, OVER) else frozenset()
    rules = state.rules
    extras = f"komi {komi_text(rules.komi)}" + (
        f", handicap {rules.handicap}" if rules.handicap else ""
    )
    legend = [
        f"X Black, O White, + a star point; {extras}.",
        f"Captured so far: by Black {state.captures[0]}, by White {state.captures[1]}.",
    ]
    last = _last(state)
    text = [*_rows(state, dead), "", *legend, *([last] if last else []), *_status(state, ended)]
    return "\n".join(_wrapped(text)) + "\n"


def _wrapped(lines: list[str], width: int = 78) -> list[str]:
    """Lines longer than ``width`` broken between words."""
    out: list[str] = []
    for line in lines:
        while len(line) > width:
            cut = line.rfind(" ", 0, width + 1)
            if cut <= 0:
                break
            out.append(line[:cut])
            line = line[cut + 1 :]
        out.append(line)
    return out
