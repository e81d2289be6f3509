"""Area scoring (Chinese and AGA rules) and pbm's own guess at the dead stones.

A player's score is his stones on the board and the empty points that only
his stones surround, once the stones both players agreed are dead have
been taken off; White adds the komi. Points that touch both colours (dame,
and the shared liberties of a seki) count for nobody.

The dead stones are proposed by GNU Go when it is installed (``gnugo``);
``estimate_dead`` is the guess used without it, deliberately simple, and
the players correct what it gets wrong (``dead``, ``alive``): a group is
hopeless when the region around it that the opponent's stones enclose
(its stones, their neighbours that are not the opponent's, and so on)
holds no two separate eyes for it (empty areas that only its colour
touches; an area of four points or more counts as two) and fewer of its
stones than the opponent's stones around it. The smallest hopeless group
is taken off, and the board looked at again without it, until none is
left: a dead stone inside a territory does not spoil it for its owner. A
seki is marked dead by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pbm.games import Outcome
from pbm.games.go.board import BLACK, EMPTY, WHITE, chain, neighbours, opponent

BIG_EYE = 4  # an own area this big has room for two eyes, at the end of play

__all__ = [
    "BIG_EYE",
    "Score",
    "area",
    "estimate_dead",
    "komi_text",
    "marked_groups",
    "score",
    "territory",
]


def komi_text(komi: float) -> str:
    """``7.5``, ``7``, ``-3.5``, ``0``."""
    return f"{komi:g}"


def _points(n: float) -> str:
    return f"{n:g} point" + ("" if n == 1 else "s")


@dataclass(frozen=True, slots=True)
class Score:
    """Both areas, the komi, and who wins by how much."""

    black: int
    white: int
    komi: float

    @property
    def margin(self) -> float:
        """Black's lead over White with the komi: below 0, White leads."""
        return self.black - (self.white + self.komi)

    @property
    def winner(self) -> int | None:
        """The winning seat: 0 Black, 1 White, None for an equal score (jigo)."""
        return None if self.margin == 0 else 0 if self.margin > 0 else 1

    def outcome(self) -> Outcome:
        """The game's end by this score: ``by 3.5 points``; a draw is ``jigo (equal score)``."""
        if self.winner is None:
            return Outcome(None, "jigo (equal score)")
        return Outcome(self.winner, f"by {_points(abs(self.margin))}")

    def sgf_result(self) -> str:
        """SGF's RE: ``W+3.5``, ``B+1``, ``0`` for jigo."""
        if self.winner is None:
            return "0"
        return f"{'BW'[self.winner]}+{abs(self.margin):g}"

    def line(self) -> str:
        """``Black 45, White 36 + komi 7.5 = 43.5: Black wins by 1.5``."""
        white = f"White {self.white}"
        if self.komi:
            sign = "+" if self.komi > 0 else "-"
            white += f" {sign} komi {komi_text(abs(self.komi))} = {self.white + self.komi:g}"
        verdict = (
            "jigo, a draw"
            if self.winner is None
            else f"{('Black', 'White')[self.winner]} wins by {abs(self.margin):g}"
        )
        return f"Black {self.black}, {white}: {verdict}"


def territory(grid: str, size: int, dead: Iterable[int] = ()) -> dict[int, str]:
    """The points each colour owns besides its living stones: the empty points (and the
    dead stones' points) of regions that only that colour's stones touch."""
    board = list(grid)
    for p in dead:
        board[p] = EMPTY
    near = neighbours(size)
    owned: dict[int, str] = {}
    seen: set[int] = set()
    for start, stone in enumerate(board):
        if stone != EMPTY or start in seen:
            continue
        region, touching, todo = [start], set(), [start]
        seen.add(start)
        while todo:
            for n in near[todo.pop()]:
                if board[n] == EMPTY:
                    if n not in seen:
                        seen.add(n)
                        region.append(n)
                        todo.append(n)
                else:
                    touching.add(board[n])
        if len(touching) == 1:
            (owner,) = touching
            owned.update((p, owner) for p in region)
    return owned


def area(grid: str, size: int, dead: Iterable[int] = ()) -> tuple[int, int]:
    """Black's and White's area: living stones and the territory they alone surround."""
    gone = frozenset(dead)
    stones = {BLACK: 0, WHITE: 0}
    for p, stone in enumerate(grid):
        if stone != EMPTY and p not in gone:
            stones[stone] += 1
    for owner in territory(grid, size, gone).values():
        stones[owner] += 1
    return stones[BLACK], stones[WHITE]


def score(grid: str, size: int, dead: Iterable[int], komi: float) -> Score:
    black, white = area(grid, size, dead)
    return Score(black, white, komi)


def marked_groups(grid: str, size: int, points: Iterable[int]) -> frozenset[int]:
    """The stones of every chain that has a stone on one of ``points``."""
    out: set[int] = set()
    for p in points:
        out |= chain(grid, size, p)
    return frozenset(out)


def estimate_dead(grid: str, size: int) -> frozenset[int]:
    """pbm's own guess at the dead stones, when GNU Go cannot say (see the module): the
    smallest hopeless group taken off, then the next on the board without it, and so on,
    so that a dead stone does not spoil the eye of the group around it."""
    dead: set[int] = set()
    board = grid
    while True:
        hopeless = _hopeless(board, size)
        if not hopeless:
            return frozenset(dead)
        weakest = min(hopeless, key=lambda stones: (len(stones), min(stones)))
        dead |= weakest
        board = "".join(EMPTY if p in weakest else s for p, s in enumerate(board))


def _hopeless(grid: str, size: int) -> list[frozenset[int]]:
    """The groups (a colour's stones in a region the opponent encloses) with no two eyes
    and fewer stones than the opponent's around them."""
    near = neighbours(size)
    found: list[frozenset[int]] = []
    for colour in (BLACK, WHITE):
        enemy = opponent(colour)
        seen: set[int] = set()
        for start, stone in enumerate(grid):
            if stone != colour or start in seen:
                continue
            # The region the enemy encloses around this chain: every point reached
            # without crossing an enemy stone.
            region, todo, edges = {start}, [start], set()
            while todo:
                for n in near[todo.pop()]:
                    if grid[n] == enemy:
                        edges.add(n)
                    elif n not in region:
                        region.add(n)
                        todo.append(n)
            seen |= region
            own = frozenset(p for p in region if grid[p] == colour)
            if len(own) < len(edges) and _eyes(grid, size, region, colour) < 2:
                found.append(own)
    return found


def _eyes(grid: str, size: int, region: set[int], colour: str) -> int:
    """How many eyes the empty areas of ``region`` that touch only ``colour``'s stones make:
    one each, two for an area of ``BIG_EYE`` points or more (room to make two)."""
    near = neighbours(size)
    eyes = 0
    seen: set[int] = set()
    for start in region:
        if grid[start] != EMPTY or start in seen:
            continue
        area_, todo, own_only = [start], [start], True
        seen.add(start)
        while todo:
            for n in near[todo.pop()]:
                if grid[n] == EMPTY:
                    if n not in seen:
                        seen.add(n)
                        area_.append(n)
                        todo.append(n)
                elif grid[n] != colour:
                    own_only = False
        if own_only:
            eyes += 2 if len(area_) >= BIG_EYE else 1
    return eyes
