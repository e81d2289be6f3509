"""An Accasta player: negamax with alpha-beta on the rules' own move generator.

Pure: positions in, a turn out, no I/O. The search is iterative deepening
within a budget of nodes and of time, with a transposition table keyed by
Zobrist hashes (a random key per cell and stack, XORed together, updated by
the cells a turn changes), move ordering (the table's move, then turns that
capture big stacks or enter the enemy castle, then killer moves), from
level 4 a quiescence search at the leaves (the captures and castle entries
that stand open are played out before a position is judged: judged in the
middle of an exchange, a position misleads the search, the more so at an odd
depth) and an evaluation of:

- material on top: the player heading a stack holds its pieces, his own at
  their worth (Shield 1, Horse 2, Chariot 3; Pari every piece 1) and the
  enemy's beneath him at half of theirs, as they cannot move;
- the march on the enemy castle: each stack nearer to it scores more, and
  each stack headed inside it a great deal (three win);
- mobility: what each headed stack can reach.

Both variants and their options (``castle_win``, ``d4_opening``) are the
position's own, so a turn the engine returns is always one of
``Position.legal_turns()``. Levels 1 to 5 (``LEVELS``): 1 plays almost at
random, 5 uses its whole budget. Under a seed the engine is deterministic
(when its budget is nodes, not time), so tests can replay it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from pbm.games.accasta.board import CASTLES, FULL_RAYS, N_CELLS, WHITE
from pbm.games.accasta.position import REACH, Position, Turn, generate_turns

__all__ = ["LEVELS", "Level", "Search", "choose", "evaluate"]

WIN: Final = 1_000_000  # a won position's score, less the plies to the win
INF: Final = 10 * WIN


@dataclass(frozen=True, slots=True)
class Level:
    """How hard the engine tries: ``depth`` plies at most, ``nodes`` and ``seconds`` of
    budget, ``noise`` (score points added at random to each root turn: a weaker
    player's misjudgement) and ``captures``: plies past its depth in which only
    captures and castle entries are looked at, so that a position is not judged
    in the middle of an exchange (a quiescence search)."""

    number: int
    words: str
    depth: int
    nodes: int
    seconds: float
    noise: int = 0
    captures: int = 0


LEVELS: Final = {
    1: Level(1, "almost at random: takes a win it sees, else any legal turn", 0, 0, 0.0),
    2: Level(2, "looks one turn ahead, with some misjudgement", 1, 20_000, 2.0, noise=60),
    3: Level(3, "looks two turns ahead", 2, 60_000, 5.0),
    4: Level(
        4,
        "looks two turns ahead and plays out the captures that stand open",
        2,
        300_000,
        20.0,
        captures=1,
    ),
    5: Level(5, "searches as deep as its whole time allows", 64, 5_000_000, 60.0, captures=1),
}


@dataclass(frozen=True, slots=True)
class Search:
    """What a search found: the ``turn`` to play, its ``score`` (for the player to move),
    the ``depth`` completed, the ``nodes`` searched and the ``seconds`` it took."""

    turn: Turn
    score: int
    depth: int
    nodes: int
    seconds: float


# -- evaluation --

_VALUE: Final = {"S": 10, "H": 20, "C": 30, "s": 10, "h": 20, "c": 30, "P": 10, "p": 10}


def _distances() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """DIST[colour][cell]: steps from ``cell`` to the nearest cell of ``colour``'s enemy
    castle (the castle he marches on)."""
    out = []
    for colour in (0, 1):
        goal = CASTLES[1 - colour]
        dist = [99] * N_CELLS
        frontier = sorted(goal)
        for c in frontier:
            dist[c] = 0
        while frontier:
            nxt = []
            for c in frontier:
                for ray in FULL_RAYS[c]:
                    if ray and dist[ray[0]] > dist[c] + 1:
                        dist[ray[0]] = dist[c] + 1
                        nxt.append(ray[0])
            frontier = nxt
        out.append(tuple(dist))
    return out[0], out[1]


_DIST: Final = _distances()
_STACKS: dict[tuple[str, int], int] = {}  # (stack, cell) -> its worth for White


def _stack_worth(stack: str, cell: int) -> int:
    """What one stack on ``cell`` is worth to White (negative: to Black)."""
    head = stack[-1]
    colour = WHITE if head.isupper() else 1
    own = sum(_VALUE[p] for p in stack if p.isupper() == (colour == WHITE))
    held = sum(_VALUE[p] for p in stack if p.isupper() != (colour == WHITE))
    reach = REACH.get(head, 0) or sum(1 for p in stack if p.isupper() == (colour == WHITE))
    score = own + held // 2 + 2 * reach  # material, prisoners, what it can reach
    dist = _DIST[colour][cell]
    score += (6 - min(dist, 6)) * 3 * len(stack) // 2  # the march on the enemy castle
    if cell in CASTLES[1 - colour]:
        score += 120  # three of these win
    return score if colour == WHITE else -score


def evaluate(pos: Position) -> int:
    """The position's worth for the player to move (a heuristic; wins are ``WIN``)."""
    total = 0
    table = _STACKS
    for cell, stack in enumerate(pos.board):
        if stack:
            key = (stack, cell)
            worth = table.get(key)
            if worth is None:
                worth = table[key] = _stack_worth(stack, cell)
            total += worth
    return total if pos.to_move == WHITE else -total


# -- Zobrist keys --

_ZRNG = random.Random(0x5EED)
_ZOBRIST: dict[tuple[int, str], int] = {}
_SIDE: Final = _ZRNG.getrandbits(64)


def _z(cell: int, stack: str) -> int:
    key = (cell, stack)
    found = _ZOBRIST.get(key)
    if found is None:
        found = _ZOBRIST[key] = _ZRNG.getrandbits(64) if stack else 0
    return found


def zobrist(pos: Position) -> int:
    """The position's key: its stacks and the player to move."""
    key = _SIDE if pos.to_move else 0
    for cell, stack in enumerate(pos.board):
        if stack:
            key ^= _z(cell, stack)
    return key


def _cells_of(turn: Turn) -> tuple[int, ...]:
    return (turn[0], *turn[2::2])


# -- the search --


class _OutOfBudget(Exception):
    pass


_EXACT, _LOWER, _UPPER = 0, 1, 2


class _Searcher:
    def __init__(
        self, root: Position, level: Level, rng: random.Random, clock: Callable[[], float]
    ):
        self.root = root
        self.level = level
        self.rng = rng
        self.clock = clock
        self.started = clock()
        self.deadline = self.started + level.seconds
        self.nodes = 0
        self.table: dict[int, tuple[int, int, int, Turn | None]] = {}
        self.killers: dict[int, list[Turn]] = {}

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes >= self.level.nodes:
            raise _OutOfBudget
        if self.nodes & 255 == 0 and self.clock() >= self.deadline:
            raise _OutOfBudget

    def over(self, pos: Position) -> int | None:
        """The score of a finished position for the player to move (None: not over), by
        the castle rule; a player with no turn is found where his turns are made."""
        mover = pos.to_move
        if pos.castle_win == "next_turn":
            if pos.castle_stacks(mover) >= 3:
                return WIN
        elif pos.ply > 0 and pos.castle_stacks(1 - mover) >= 3:
            return -WIN
        return None

    def ordered(self, pos: Position, turns: list[Turn], best: Turn | None, ply: int) -> list[Turn]:
        board = pos.board
        mover = pos.to_move
        enemy_castle = CASTLES[1 - mover]
        killers = self.killers.get(ply, [])

        def weight(turn: Turn) -> int:
            if turn == best:
                return 1 << 30
            w = _gain(board, mover, enemy_castle, turn)
            if turn in killers:
                w += 50
            return w

        return sorted(turns, key=weight, reverse=True)

    def quiet(self, pos: Position, alpha: int, beta: int, ply: int, left: int) -> int:
        """The position's worth once the captures and castle entries that stand open are
        played out (``left`` plies of them at most): the side to move may also stop."""
        self.tick()
        done = self.over(pos)
        if done is not None:
            return done - ply if done > 0 else done + ply
        standing = evaluate(pos)
        if left <= 0 or standing >= beta:
            return standing
        alpha = max(alpha, standing)
        board, mover = pos.board, pos.to_move
        enemy_castle = CASTLES[1 - mover]
        gains = [(g, t) for t in generate_turns(pos) if (g := _gain(board, mover, enemy_castle, t))]
        gains.sort(key=lambda gt: gt[0], reverse=True)
        for _, turn in gains:
            score = -self.quiet(pos.push(turn), -beta, -alpha, ply + 1, left - 1)
            if score >= beta:
                return score
            alpha = max(alpha, score)
        return alpha

    def negamax(self, pos: Position, key: int, depth: int, alpha: int, beta: int, ply: int) -> int:
        self.tick()
        done = self.over(pos)
        if done is not None:
            return done - ply if done > 0 else done + ply
        if depth <= 0:
            # A leaf is judged once its exchanges are played out; a player with no turn
            # at all is not looked for there (it would cost more than the rest of the
            # search, and a stalemate is rare).
            if self.level.captures:
                return self.quiet(pos, alpha, beta, ply, self.level.captures)
            return evaluate(pos)
        turns = generate_turns(pos)
        if not turns:
            return -WIN + ply  # who cannot move loses
        entry = self.table.get(key)
        best_turn: Turn | None = None
        if entry is not None:
            e_depth, e_score, e_flag, best_turn = entry
            if e_depth >= depth:
                if e_flag == _EXACT:
                    return e_score
                if e_flag == _LOWER and e_score >= beta:
                    return e_score
                if e_flag == _UPPER and e_score <= alpha:
                    return e_score
        start_alpha = alpha
        best = -INF
        board = pos.board
        for turn in self.ordered(pos, turns, best_turn, ply):
            child = pos.push(turn)
            child_key = key ^ _SIDE
            for c in _cells_of(turn):
                child_key ^= _z(c, board[c]) ^ _z(c, child.board[c])
            score = -self.negamax(child, child_key, depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best, best_turn = score, turn
            if best > alpha:
                alpha = best
            if alpha >= beta:
                killers = self.killers.setdefault(ply, [])
                if turn not in killers:
                    killers.insert(0, turn)
                    del killers[2:]
                break
        flag = _UPPER if best <= start_alpha else _LOWER if best >= beta else _EXACT
        self.table[key] = (depth, best, flag, best_turn)
        return best

    def root_search(
        self, depth: int, order: list[Turn]
    ) -> tuple[Turn, int, list[tuple[int, Turn]]]:
        pos = self.root
        key = zobrist(pos)
        board = pos.board
        alpha = -INF
        scored: list[tuple[int, Turn]] = []
        best_turn, best = order[0], -INF
        noise = self.level.noise
        for turn in order:
            child = pos.push(turn)
            child_key = key ^ _SIDE
            for c in _cells_of(turn):
                child_key ^= _z(c, board[c]) ^ _z(c, child.board[c])
            score = -self.negamax(
                child, child_key, depth - 1, -INF, -alpha if not noise else INF, 1
            )
            if noise:
                score += self.rng.randint(-noise, noise)
            scored.append((score, turn))
            if score > best:
                best, best_turn = score, turn
                alpha = max(alpha, score)
        return best_turn, best, scored


def choose(
    pos: Position,
    level: int = 3,
    *,
    seed: int = 0,
    seconds: float | None = None,
    nodes: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Search:
    """The turn the engine plays in ``pos`` at ``level`` (1 to 5); ``seconds`` and
    ``nodes`` replace the level's budget. ValueError when the game is over."""
    if level not in LEVELS:
        raise ValueError(f"the level is 1 to 5, not {level}")
    settings = LEVELS[level]
    if seconds is not None or nodes is not None:
        settings = replace(
            settings,
            nodes=nodes if nodes is not None else settings.nodes,
            seconds=seconds if seconds is not None else settings.seconds,
        )
    rng = random.Random(seed)
    started = clock()
    turns = list(pos.legal_turns())
    if not turns or pos.is_over():
        raise ValueError("the game is over: there is no turn to play")
    rng.shuffle(turns)  # ties go to a seeded choice, not to the generator's order
    winning = next((t for t in turns if _wins(pos, t)), None)
    if winning is not None:
        return Search(winning, WIN - 1, 1, len(turns), clock() - started)
    if settings.depth == 0:
        return Search(turns[0], 0, 0, 0, clock() - started)
    searcher = _Searcher(pos, settings, rng, clock)
    order = searcher.ordered(pos, turns, None, 0)
    best: tuple[Turn, int, int] = (order[0], 0, 0)
    for depth in range(1, settings.depth + 1):
        try:
            turn, score, scored = searcher.root_search(depth, order)
        except _OutOfBudget:
            break
        best = (turn, score, depth)
        # The next iteration looks at the best turns of this one first.
        order = [t for _, t in sorted(scored, key=lambda st: st[0], reverse=True)]
        if abs(score) >= WIN - 100:
            break  # a forced win or loss is found: deeper says nothing more
    return Search(best[0], best[1], best[2], searcher.nodes, clock() - started)


def _gain(board: tuple[str, ...], mover: int, enemy_castle: frozenset[int], turn: Turn) -> int:
    """What ``turn`` takes at once: enemy stacks captured (the bigger the better) and
    steps into the enemy castle; 0 for a quiet turn."""
    w = 0
    for i in range(2, len(turn), 2):
        target = turn[i]
        stack = board[target]
        if stack and stack[-1].isupper() != (mover == WHITE):
            w += 100 * len(stack)
        if target in enemy_castle:
            w += 150
    return w


def _wins(pos: Position, turn: Turn) -> bool:
    """Whether ``turn`` wins at once: three stacks in the enemy castle (``immediate``), or
    an opponent left with no turn."""
    after = pos.push(turn)
    out = after.outcome()
    return out is not None and out.winner == pos.to_move
