"""Round-robin pairings: the Berger tables of FIDE's handbook (C.05, Annex 1).

Pure arithmetic, no I/O. Players are numbered 1..n by their draw (seeding); an
odd number plays as n + 1 with the highest number a bye, whose pairings are
dropped. Round ``r`` (1-based) of an even ``n``:

- the players other than ``n`` meet in pairs whose numbers add up to ``r + 1``
  modulo ``n - 1`` (``n - 1`` standing for 0); of two such, the lower number
  has White when they are an odd distance apart, the higher one otherwise;
- player ``n`` meets the one whose number doubled is ``r + 1`` modulo
  ``n - 1``, with Black in odd rounds and White in even ones.

So every player has White as often as can be: ``n / 2`` or ``n / 2 - 1``
times. A double round robin plays the table twice, colours reversed in the
second cycle, and (FIDE's recommendation) the last two rounds of the first
cycle swapped, so nobody gets the same colour three times running.
"""

from __future__ import annotations

from typing import NamedTuple

MIN_PLAYERS = 3
MAX_PLAYERS = 14


class Pairing(NamedTuple):
    """One game of the table: its round, and the draw numbers of White and Black."""

    round: int
    white: int
    black: int


def table(n: int) -> list[list[tuple[int, int]]]:
    """The Berger table for ``n`` players: each round's games as (White, Black), the
    byes left out."""
    if n < 2:
        return []
    size = n + (n % 2)
    return [[(w, b) for w, b in _round(size, r) if w <= n and b <= n] for r in range(1, size)]


def _round(size: int, r: int) -> list[tuple[int, int]]:
    """Round ``r`` of an even ``size``: the fixed player's game first, then the others."""
    mod = size - 1
    target = (r + 1) % mod

    def norm(x: int) -> int:
        x %= mod
        return mod if x == 0 else x

    last = next(p for p in range(1, size) if (2 * p) % mod == target)
    games: list[tuple[int, int]] = []
    seen = {last}
    for i in range(1, size):
        if i in seen:
            continue
        j = norm(target - i)
        seen |= {i, j}
        low, high = min(i, j), max(i, j)
        games.append((low, high) if (high - low) % 2 == 1 else (high, low))
    first = (size, last) if r % 2 == 0 else (last, size)
    return [first, *sorted(games)]


def pairings(n: int, double: bool = False) -> list[Pairing]:
    """Every game of a round robin of ``n`` players (``double``: twice, colours
    reversed in the second cycle, the first cycle's last two rounds swapped)."""
    rounds = table(n)
    if not double:
        return [Pairing(r, w, b) for r, games in enumerate(rounds, 1) for w, b in games]
    first = list(rounds)
    if len(first) >= 2:
        first[-2], first[-1] = first[-1], first[-2]
    out = [Pairing(r, w, b) for r, games in enumerate(first, 1) for w, b in games]
    cycle = len(rounds)
    out += [Pairing(cycle + r, b, w) for r, games in enumerate(rounds, 1) for w, b in games]
    return out
