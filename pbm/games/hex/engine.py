"""A Hex player: Monte Carlo tree search with random playouts and RAVE.

Hex needs no evaluation to be played out: a board filled to the last cell
has exactly one winner, so a playout is a random fill of the empty cells
(the player to move taking the odd ones) and one flood from Red's top edge
to see whether it reaches the bottom. The tree search (UCT's tree without an
exploration term) picks its way by each move's win rate blended with its
"all moves as first" rate (RAVE: how the playouts went in which that
player's stone ended up on that cell, whenever it was placed). In Hex
that rate is well informed from the first playouts on, so every move's
estimate improves with every playout, not only the moves tried.

Two choices are the swap rule's:

- As Blue on move 2, swap when the best stone is worth less than an even
  game: swapping hands Blue exactly Red's prospects (the mirror is a
  symmetry of the game), which the search estimates as one minus Blue's.
- As Red on move 1 with the swap rule, place the stone whose estimate is
  nearest an even game, so that swapping gains the opponent nothing.

Levels 1 to 5 (``LEVELS``) differ in the playouts a move; 5 uses its whole
time. The clock (CPU time) cuts every level short when ``seconds`` run out.
Under a seed the engine is deterministic while the playouts, not the clock,
end the search. Pure Python: lists of ints, no I/O. At 11x11 some 10,000
playouts a second on one core; level 3 beat a random player 100 games of
100 and level 5, at 2 s a move, beat level 1 10 of 10
(``scripts/bench_hex_engine.py``).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pbm.games.hex.board import BLUE, EMPTY, RED, neighbours
from pbm.games.hex.notation import SWAP, Move

__all__ = ["LEVELS", "Choice", "Level", "choose"]


@dataclass(frozen=True, slots=True)
class Level:
    """How hard the engine tries: ``playouts`` random games a move at the most."""

    number: int
    words: str
    playouts: int


LEVELS: Final = {
    1: Level(1, "a quick look: 100 random games a move", 100),
    2: Level(2, "400 random games a move", 400),
    3: Level(3, "1,500 random games a move (well under a second at 11x11)", 1_500),
    4: Level(4, "8,000 random games a move", 8_000),
    5: Level(5, "as many random games as its whole time allows", 10**9),
}


@dataclass(frozen=True, slots=True)
class Choice:
    """What a search found: the ``move``, the ``playouts`` it took and its win ``rate``
    (for the player to move; the swap's is the best stone's, which it beats)."""

    move: Move
    playouts: int
    rate: float


_RAVE: Final = 300.0  # playouts after which a move's own rate counts as much as its RAVE rate
_EXPAND: Final = 4  # playouts through a move before the tree grows a node under it
# Moves held by the tree's nodes at the most (some 40 MB): a long search stops growing it.
_SLOTS: Final = 1_000_000
_CHECK: Final = 32  # playouts between looks at the clock
_LEAST: Final = 16  # playouts even when the clock has run out: a move is better than none
_CODE: Final = {EMPTY: 0, RED: 1, BLUE: 2}  # a stone's player; the other is 3 - player


class _Node:
    """A position in the tree: the moves from it and, for each, the playouts through it
    (``visits``, ``wins`` for the player making it) and those in which that player's
    stone ended on its cell (``seen``, ``seen_wins``: RAVE)."""

    __slots__ = ("children", "moves", "seen", "seen_wins", "visits", "wins")

    def __init__(self, moves: list[int]) -> None:
        self.moves = moves
        self.visits = [0] * len(moves)
        self.wins = [0] * len(moves)
        self.seen = [0] * len(moves)
        self.seen_wins = [0] * len(moves)
        self.children: list[_Node | None] = [None] * len(moves)

    def pick(self) -> int:
        """The move to follow: the highest blend of its win rate and its RAVE rate."""
        best, best_value = 0, -1.0
        for k in range(len(self.moves)):
            n, a = self.visits[k], self.seen[k]
            if a == 0:
                value = 1.0  # never yet seen: worth a look before anything known
            else:
                beta = math.sqrt(_RAVE / (3 * n + _RAVE))
                value = beta * self.seen_wins[k] / a
                if n:
                    value += (1 - beta) * self.wins[k] / n
            if value > best_value:
                best, best_value = k, value
        return best

    def rave_rate(self, k: int) -> float:
        return self.seen_wins[k] / self.seen[k] if self.seen[k] else 0.5


class _Search:
    """One search from a position: the board as ints, the tree, the random source."""

    def __init__(self, size: int, cells: str, to_move: int, seed: int) -> None:
        self.size = size
        self.board = [_CODE[c] for c in cells]
        self.player = to_move + 1
        self.nbrs = neighbours(size)
        self.rng = random.Random(seed)
        self.root = _Node([k for k, c in enumerate(self.board) if c == 0])
        self.slots = len(self.root.moves)
        self.playouts = 0

    def run(self, playouts: int, deadline: float, clock: Callable[[], float]) -> None:
        while self.playouts < playouts:
            if self.playouts % _CHECK == 0 and self.playouts >= _LEAST and clock() >= deadline:
                break
            self.playout()

    def playout(self) -> None:
        board = self.board[:]
        node, player = self.root, self.player
        path: list[tuple[_Node, int, int]] = []
        while True:  # down the tree
            k = node.pick()
            board[node.moves[k]] = player
            path.append((node, k, player))
            child = node.children[k]
            if child is None:
                grow = len(node.moves) - 1
                if node.visits[k] + 1 >= _EXPAND and grow and self.slots + grow <= _SLOTS:
                    taken = node.moves[k]
                    node.children[k] = _Node([m for m in node.moves if m != taken])
                    self.slots += grow
                player = 3 - player
                break
            node, player = child, 3 - player
        empty = [m for m in path[-1][0].moves if board[m] == 0]
        self.rng.shuffle(empty)
        half = (len(empty) + 1) // 2  # the player to move places the first, and the odd ones
        for m in empty[:half]:
            board[m] = player
        for m in empty[half:]:
            board[m] = 3 - player
        winner = 1 if self._red_connects(board) else 2
        for node, k, mover in path:  # back up: the moves played, and RAVE for the rest
            won = 1 if winner == mover else 0
            node.visits[k] += 1
            node.wins[k] += won
            seen, seen_wins = node.seen, node.seen_wins
            for j, m in enumerate(node.moves):
                if board[m] == mover:
                    seen[j] += 1
                    seen_wins[j] += won
        self.playouts += 1

    def _red_connects(self, board: list[int]) -> bool:
        """On a full board: whether Red's stones join the top row to the bottom row."""
        size, nbrs = self.size, self.nbrs
        bottom = size * (size - 1)
        stack = [m for m in range(size) if board[m] == 1]
        seen = set(stack)
        while stack:
            m = stack.pop()
            if m >= bottom:
                return True
            for j in nbrs[m]:
                if board[j] == 1 and j not in seen:
                    seen.add(j)
                    stack.append(j)
        return False

    def best(self) -> tuple[int, float]:
        """The move tried most and its win rate."""
        root = self.root
        k = max(range(len(root.moves)), key=lambda j: (root.visits[j], root.seen[j]))
        n = root.visits[k]
        return root.moves[k], root.wins[k] / n if n else 0.5

    def fairest(self) -> int:
        """The move whose RAVE rate is nearest an even game (ties: the lower cell)."""
        root = self.root
        k = min(range(len(root.moves)), key=lambda j: abs(root.rave_rate(j) - 0.5))
        return root.moves[k]


def choose(
    size: int,
    cells: str,
    to_move: int,
    *,
    level: int,
    seed: int,
    seconds: float,
    swap_rule: bool = False,
    ply: int = 0,
    clock: Callable[[], float] = time.process_time,
) -> Choice:
    """The move the engine plays at ``level`` (1 to 5) on the board of ``size`` with
    ``cells``, ``to_move`` to play, within ``seconds`` of CPU time.

    ``swap_rule`` and ``ply`` say whether the swap rule applies: on move 1 the
    stone is chosen for it, on move 2 the move may be ``SWAP``. ``ValueError``
    for an unknown level or a full board."""
    if level not in LEVELS:
        raise ValueError(f"no level {level}: levels are 1 to {max(LEVELS)}")
    start = clock()
    search = _Search(size, cells, to_move, seed)
    if not search.root.moves:
        raise ValueError("the board is full: there is no move to choose")
    # A tenth of the time is kept back for what comes after the search.
    search.run(LEVELS[level].playouts, start + 0.9 * seconds, clock)
    best, rate = search.best()
    move: Move = best
    if swap_rule and ply == 0:
        move = search.fairest()
    elif swap_rule and ply == 1 and rate < 0.5:
        move = SWAP
    return Choice(move, search.playouts, rate)
