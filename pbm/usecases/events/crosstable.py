"""An event's crosstable as plain ASCII text (mail, the command line), no wider than 78
columns for 14 players, single or double round robin. Pure, no I/O.

One row a player in the order of the standings, one column each opponent by
his place. A cell holds the result of each game between the two, from the
row's player's side: ``1`` a win, ``=`` a draw, ``0`` a loss, ``.`` still
played, ``-`` struck (a withdrawn player's game that counts for nobody). Then
the points and the tiebreaks: W (wins), SB (Sonneborn-Berger), DE (the direct
encounter among the players still tied). A place shared has ``=`` after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.usecases.events.standings import Game, Line

NAME = 12  # a player's name, cut to this


def number(value: float) -> str:
    """Points as the crosstable writes them: 3, 2.5, 0.5."""
    return f"{value:g}"


def _mark(game: Game, me: str, struck: bool) -> str:
    if game.score is None:
        return "."
    if struck:
        return "-"
    mine = game.score if game.white == me else 1 - game.score
    return {1.0: "1", 0.5: "=", 0.0: "0"}[mine]


def crosstable(
    lines: Sequence[Line], games: Sequence[Game], names: Mapping[str, str] | None = None
) -> list[str]:
    """The crosstable of ``lines`` (the standings) after ``games``, as lines of text."""
    names = names or {}
    order = [line.player for line in lines]
    gone = {line.player for line in lines if line.struck}
    width = max(2, max((_count(games, a, b) for a in order for b in order if a != b), default=1))
    head = f"{'':3} {'Player':<{NAME}}" + "".join(
        f"{i:>{width + 1}}" for i in range(1, len(order) + 1)
    )
    out = [head + f" {'Pts':>4} {'W':>2} {'SB':>6} {'DE':>4}"]
    for line in lines:
        me = line.player
        cells = []
        for them in order:
            if them == me:
                cells.append("X" * min(width, _count(games, me, me) or 1))
                continue
            between = [g for g in games if {g.white, g.black} == {me, them}]
            cells.append("".join(_mark(g, me, bool({me, them} & gone)) for g in between))
        place = f"{line.rank:>2}{'=' if line.shared else ' '}" if not line.struck else " - "
        name = names.get(me, me)[:NAME]
        row = f"{place} {name:<{NAME}}" + "".join(f"{c:>{width + 1}}" for c in cells)
        if line.struck:
            out.append(row + "   withdrawn: struck")
            continue
        out.append(
            row
            + f" {number(line.points):>4} {line.wins:>2} {number(line.sb):>6} "
            + f"{number(line.direct):>4}"
        )
    return out


def _count(games: Sequence[Game], a: str, b: str) -> int:
    """The games between ``a`` and ``b`` (1, or 2 in a double round robin)."""
    if a == b:
        return 1
    return sum({g.white, g.black} == {a, b} for g in games)
