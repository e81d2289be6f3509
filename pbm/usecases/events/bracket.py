"""A knockout cup, as pure arithmetic over its games (no I/O).

Players are seeded 1..n (by rating); the first round pairs them in the usual
bracket order (1 against the lowest, the top two seeds meeting in the final
at the earliest), the highest seeds drawing byes up to a power of two. A match
is two games with the colours swapped, the first with the higher seed White.
A match tied after two games is decided by a third: the higher seed has White
and must win it; a draw sends the other (Black) through. The winners meet in
the next round, in bracket order, until the final's winner takes the cup.

``progress`` reads where a cup stands from its seeds and games: each round's
matches and their winners, the third games wanted, the next round to pair,
the champion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pbm.usecases.events.standings import Game

MIN_PLAYERS = 4
MAX_PLAYERS = 64


def bracket(n: int) -> list[tuple[int, int | None]]:
    """The first round of a cup of ``n`` seeds: (seed, seed or None for a bye)."""
    size = 1
    while size < n:
        size *= 2
    order = [1]
    while len(order) < size:
        double = 2 * len(order)
        order = [x for seed in order for x in (seed, double + 1 - seed)]
    pairs = [(order[i], order[i + 1]) for i in range(0, size, 2)]
    return [(a, b if b <= n else None) for a, b in pairs]


@dataclass(frozen=True)
class Match:
    """One match of a round: the higher seed ``a``, the other ``b`` (None: a bye), its
    games in the order played, the points of each and its winner (None: still played)."""

    a: str
    b: str | None
    games: Sequence[Game] = ()
    points: tuple[float, float] = (0.0, 0.0)
    winner: str | None = None
    third_wanted: bool = False  # tied after two games, the third not made yet


@dataclass(frozen=True)
class Progress:
    rounds: Sequence[Sequence[Match]] = field(default_factory=list)
    thirds: Sequence[tuple[str, str]] = ()  # (White, Black) of the third games to make
    next_round: Sequence[tuple[str, str | None]] = ()  # pairs to start, when due
    champion: str | None = None


def _score(game: Game, player: str) -> float:
    assert game.score is not None
    return game.score if game.white == player else 1.0 - game.score


def match(a: str, b: str | None, games: Sequence[Game]) -> Match:
    """Where the match of ``a`` (the higher seed) and ``b`` stands after ``games``."""
    if b is None:
        return Match(a, None, winner=a)
    first, third = list(games[:2]), list(games[2:3])
    done = [g for g in first if g.score is not None]
    points = (sum(_score(g, a) for g in done), sum(_score(g, b) for g in done))
    if len(done) < 2:
        return Match(a, b, games, points)
    if points[0] != points[1]:
        return Match(a, b, games, points, a if points[0] > points[1] else b)
    if not third:
        return Match(a, b, games, points, third_wanted=True)
    decider = third[0]
    if decider.score is None:
        return Match(a, b, games, points)
    total = (points[0] + _score(decider, a), points[1] + _score(decider, b))
    if decider.score == 0.5:  # a drawn third game: Black goes through
        return Match(a, b, games, total, decider.black)
    return Match(a, b, games, total, decider.white if decider.score == 1.0 else decider.black)


def progress(seeds: Sequence[str], games: Sequence[tuple[int, Game]]) -> Progress:
    """Where a cup of ``seeds`` (best first) stands after ``games`` (round, game), the
    games of a round in the order they were made."""
    rank = {p: i for i, p in enumerate(seeds)}
    pairs: list[tuple[str, str | None]] = [
        (seeds[a - 1], seeds[b - 1] if b is not None else None) for a, b in bracket(len(seeds))
    ]
    rounds: list[list[Match]] = []
    number = 1
    while True:
        played = [g for r, g in games if r == number]
        matches = [
            match(a, b, [g for g in played if b is not None and {g.white, g.black} == {a, b}])
            for a, b in pairs
        ]
        rounds.append(matches)
        thirds = [
            (m.a, m.b) if rank[m.a] < rank[m.b] else (m.b, m.a)
            for m in matches
            if m.third_wanted and m.b is not None
        ]
        winners = [m.winner for m in matches]
        if any(w is None for w in winners):
            return Progress(rounds, thirds)
        ahead = [w for w in winners if w is not None]
        if len(ahead) == 1:
            return Progress(rounds, champion=ahead[0])
        pairs = [
            (x, y) if rank[x] < rank[y] else (y, x)
            for x, y in zip(ahead[0::2], ahead[1::2], strict=True)
        ]
        if not any(r == number + 1 for r, _ in games):
            return Progress(rounds, next_round=pairs)
        number += 1
