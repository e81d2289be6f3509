"""An event's standings, computed from its games: points and ICCF's tiebreaks.

Pure arithmetic, no I/O: nothing here is stored, so an undone move or a
corrected result changes the standings the next time they are asked for.

- Points: a win 1, a draw ½, a loss 0.
- Ties are broken, in ICCF's order, by the number of wins (Baumbach), then
  Sonneborn-Berger (the points of each opponent beaten, and half those of
  each opponent drawn with, after the strikes), then the direct encounter
  (the points scored in the games among the players still tied); players
  still equal share their place.
- A player whose results are struck (``pbm.usecases.events.withdrawal``) counts for
  nobody: his games are left out of everyone's points and tiebreaks, and he
  is listed last, with none.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple


class Game(NamedTuple):
    """One game of an event: its players and White's score (1, 0.5 or 0; None while it
    is played, or when it was cancelled)."""

    white: str
    black: str
    score: float | None
    board: int = 0


@dataclass(frozen=True)
class Line:
    """One player's line in the standings, with each figure they are ranked by."""

    player: str
    rank: int  # 1 first; players who share a place have the same
    points: float
    wins: int
    sb: float  # Sonneborn-Berger
    direct: float  # the points scored against the players tied with him on all above
    played: int  # games finished (and counted)
    struck: bool = False
    shared: bool = False  # his place is shared


def counted(games: Iterable[Game], struck: Collection[str] = ()) -> list[Game]:
    """The finished games that count: those of a struck player do not."""
    return [
        g for g in games if g.score is not None and g.white not in struck and g.black not in struck
    ]


def scores(games: Iterable[Game]) -> dict[str, float]:
    """Each player's points in ``games`` (finished ones)."""
    out: dict[str, float] = {}
    for g in games:
        if g.score is None:
            continue
        out[g.white] = out.get(g.white, 0.0) + g.score
        out[g.black] = out.get(g.black, 0.0) + 1.0 - g.score
    return out


def standings(
    players: Sequence[str], games: Iterable[Game], struck: Collection[str] = ()
) -> list[Line]:
    """The standings of ``players`` after ``games``; those of ``struck`` count for nobody."""
    played = counted(games, struck)
    points = scores(played)
    wins: dict[str, int] = {}
    sb: dict[str, float] = {}
    done: dict[str, int] = {}
    for g in played:
        assert g.score is not None
        for me, them, mine in ((g.white, g.black, g.score), (g.black, g.white, 1 - g.score)):
            done[me] = done.get(me, 0) + 1
            wins[me] = wins.get(me, 0) + (mine == 1)
            sb[me] = sb.get(me, 0.0) + mine * points.get(them, 0.0)
    ranked = [p for p in players if p not in struck]

    def key(p: str) -> tuple[float, int, float]:
        return (points.get(p, 0.0), wins.get(p, 0), sb.get(p, 0.0))

    direct: dict[str, float] = {}
    groups: dict[tuple[float, int, float], list[str]] = {}
    for p in ranked:
        groups.setdefault(key(p), []).append(p)
    for tied in groups.values():
        among = set(tied)
        inner = scores(g for g in played if g.white in among and g.black in among)
        for p in tied:
            direct[p] = inner.get(p, 0.0) if len(tied) > 1 else 0.0

    def full(p: str) -> tuple[float, int, float, float]:
        return (*key(p), direct[p])

    ordered = sorted(ranked, key=lambda p: tuple(-x for x in full(p)))
    firsts: dict[tuple[float, int, float, float], int] = {}
    counts: dict[tuple[float, int, float, float], int] = {}
    for j, q in enumerate(ordered):
        firsts.setdefault(full(q), j)
        counts[full(q)] = counts.get(full(q), 0) + 1
    lines: list[Line] = []
    for p in ordered:
        first, shared = firsts[full(p)], counts[full(p)] > 1
        lines.append(
            Line(
                p,
                first + 1,
                points.get(p, 0.0),
                wins.get(p, 0),
                sb.get(p, 0.0),
                direct[p],
                done.get(p, 0),
                shared=shared,
            )
        )
    last = len(ordered) + 1
    lines += [Line(p, last, 0.0, 0, 0.0, 0.0, 0, struck=True) for p in players if p in struck]
    return lines


def figure(value: float) -> str:
    """Points as a crosstable writes them: 3, 2½, ½."""
    whole, half = int(value), value - int(value) >= 0.5
    if half:
        return f"{whole}½" if whole else "½"
    return str(whole)
