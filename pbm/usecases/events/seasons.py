"""A league's season change, as pure arithmetic over lists of players (no I/O).

A league is a ladder of divisions, each a round robin; division 0 is the top.
When a season ends, ``next_season`` makes the next one from the final
standings of each division:

1. the top ``UP`` of each division but the top one go up one division, the
   bottom ``DOWN`` of each division but the lowest go down one (in a division
   too small for both, each takes at most half of it);
2. those who leave (they said ``league leave``, or lost more than half of their
   games on time: ``withdrawal.drops_out``) are taken out;
3. a division left with fewer than ``size`` players takes the best of the
   division below who did not just come down from it, in the order of their
   last standings, until it is full or they run out: the ladder stays full at
   the top;
4. new players, the strongest first, join the lowest division with room;
   those left over make new divisions at the bottom, of ``size`` each (a rest
   too small for a division joins the lowest one);
5. a division of fewer than ``MIN_DIVISION`` players joins the one above it.

``first_season`` makes a league's first divisions: its players by rating, cut
into divisions of ``size``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

UP = 2
DOWN = 2
MIN_DIVISION = 3  # a round robin's fewest players
MAX_DIVISION = 14  # and its most
DEFAULT_SIZE = 10  # Little Golem's leagues play in divisions of 9 to 11


class _Seat(NamedTuple):
    """A continuing player, where he comes from: his last division and place in it, and
    whether he came down from the division above."""

    division: int
    place: int
    down: bool
    player: str


def first_season(by_rating: Sequence[str], size: int = DEFAULT_SIZE) -> list[list[str]]:
    """The first divisions of a league: ``by_rating`` (strongest first) cut into
    divisions of ``size`` (a rest too small for a division joins the lowest one)."""
    return _placed([], list(by_rating), size)


def next_season(
    divisions: Sequence[Sequence[str]],
    leaving: Collection[str] = (),
    newcomers: Sequence[str] = (),
    size: int = DEFAULT_SIZE,
) -> list[list[str]]:
    """The divisions of the next season, from each division's final standings (best
    first, top division first), those ``leaving``, and the ``newcomers`` (strongest
    first). Every player is in one division; see the module's rules."""
    count = len(divisions)
    seats: list[list[_Seat]] = [[] for _ in range(count)]
    for i, division in enumerate(divisions):
        half = len(division) // 2
        up = min(UP, half) if i > 0 else 0
        down = min(DOWN, half) if i < count - 1 else 0
        for place, player in enumerate(division):
            if player in leaving:
                continue
            if place < up:
                seats[i - 1].append(_Seat(i, place, False, player))
            elif place >= len(division) - down:
                seats[i + 1].append(_Seat(i, place, True, player))
            else:
                seats[i].append(_Seat(i, place, False, player))
    for i in range(count - 1):
        below = seats[i + 1]
        while len(seats[i]) < size:
            risers = [s for s in below if not s.down]
            if not risers:
                break
            best = min(risers, key=lambda s: (s.division, s.place))
            below.remove(best)
            seats[i].append(best)
    kept = [[s.player for s in division] for division in seats if division]
    fresh = [p for p in newcomers if p not in leaving and all(p not in d for d in kept)]
    return _placed(kept, fresh, size)


def _placed(divisions: list[list[str]], newcomers: list[str], size: int) -> list[list[str]]:
    """``divisions`` with ``newcomers`` placed (rules 4 and 5)."""
    out = [list(d) for d in divisions]
    waiting = list(newcomers)
    for division in reversed(out):
        while waiting and len(division) < size:
            division.append(waiting.pop(0))
    while waiting:
        out.append(waiting[:size])
        waiting = waiting[size:]
    # Rule 5: a division too small joins the one above (the lowest may so pass ``size``).
    for i in range(len(out) - 1, 0, -1):
        if len(out[i]) < MIN_DIVISION and len(out[i - 1]) + len(out[i]) <= MAX_DIVISION:
            out[i - 1] += out.pop(i)
    return [d for d in out if d]
