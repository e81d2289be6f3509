"""Glicko-2 ratings beside Elo, in daily rating periods (``pbm.glicko``).

Elo rates a game when it ends (``endings.finish``). Glicko-2 rates the games of a
whole day (UTC) together, once the day is over: the timers carry out ``RateDays``,
which works out every day not worked out yet, each player against his opponents
as they stood when the day began. A player who does not play keeps his rating; its
deviation grows each day (``glicko_now.standing_now``), to at most the start's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from pbm.games import winner_of
from pbm.glicko import Glicko, rate
from pbm.model import Key
from pbm.store import Session
from pbm.store.glicko import (
    GlickoStanding,
    ended_between,
    first_ending,
    rated_until,
    save_rated_until,
    save_standing,
    standings,
)
from pbm.store.statements import Row
from pbm.usecases.auth import Actor
from pbm.usecases.glicko_now import DAY, day_start, standing_now
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

PERIODS: Key = ("glicko", "periods")


@dataclass(frozen=True)
class StandingChange:
    """A player's Glicko-2 standing in a game and variant, as it was and is to be."""

    game: str
    variant: str
    before: GlickoStanding | None
    after: GlickoStanding

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("glicko", f"{self.game}.{self.variant}.{self.after.userid}")})

    def save(self, session: Session) -> None:
        save_standing(session, self.game, self.variant, self.before, self.after)


@dataclass(frozen=True)
class PeriodsChange:
    """How far the rating periods are worked out, as it was and is to be."""

    before: datetime | None
    after: datetime

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({PERIODS})

    def save(self, session: Session) -> None:
        save_rated_until(session, self.before, self.after)


def days_due(world: World) -> bool:
    """Whether a day has ended that the Glicko-2 ratings do not hold yet."""
    done = rated_until(world.session)
    return done is None or done < day_start(world.now)


@dataclass(frozen=True)
class RateDays:
    """Work out the Glicko-2 ratings of every day that ended since the last worked out."""

    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        world.reads.add(PERIODS)
        session, until = world.session, day_start(world.now)
        done = rated_until(session)
        start = done
        if start is None:
            first = first_ending(session)
            start = day_start(first) if first is not None else until
        if start >= until:
            return (
                Decision() if done is not None else Decision(changes=(PeriodsChange(None, until),))
            )
        rows = ended_between(session, start, until)
        by_day: dict[tuple[datetime, str, str], list[Row]] = defaultdict(list)
        for row in rows:
            by_day[(day_start(row.ended_at), row.game, row.variant)].append(row)
        known: dict[tuple[str, str, str], GlickoStanding] = {}
        for game, variant in {(g, v) for _, g, v in by_day}:
            players = {
                u
                for r in rows
                if (r.game, r.variant) == (game, variant)
                for u in (r.white, r.black)
            }
            known.update(standings(session, game, variant, players))
        first_seen = dict(known)
        for (day, game, variant), games in sorted(by_day.items()):
            known.update(_period(known, day, game, variant, games))
        changes = [
            StandingChange(g, v, first_seen.get((g, v, u)), standing)
            for (g, v, u), standing in known.items()
            if first_seen.get((g, v, u)) != standing
        ]
        return Decision(changes=(*changes, PeriodsChange(done, until)))


def _period(
    known: dict[tuple[str, str, str], GlickoStanding],
    day: datetime,
    game: str,
    variant: str,
    games: list[Row],
) -> dict[tuple[str, str, str], GlickoStanding]:
    """The standings of the players of ``games`` (one game and variant, ended on ``day``)
    after that day's period."""
    before = {
        u: standing_now(known.get((game, variant, u)), day)
        for r in games
        for u in (r.white, r.black)
    }
    results: dict[str, list[tuple[Glicko, float]]] = defaultdict(list)
    for r in games:
        winner = winner_of(r.result)
        white_score = {0: 1.0, 1: 0.0, None: 0.5}[winner]
        results[r.white].append((before[r.black], white_score))
        results[r.black].append((before[r.white], 1.0 - white_score))
    out = {}
    for userid, played in results.items():
        old = known.get((game, variant, userid))
        count = (old.games_played if old is not None else 0) + len(played)
        out[(game, variant, userid)] = GlickoStanding(
            userid, rate(before[userid], played), count, day + DAY
        )
    return out
