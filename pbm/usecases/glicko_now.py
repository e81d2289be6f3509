"""Glicko-2 ratings as they stand (``pbm.glicko``, worked out by ``usecases.glickos``):
a player's now, the lists', the line a game's last board mail shows. Nothing here
writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pbm.glicko import Glicko, idle
from pbm.store import Session
from pbm.store.glicko import GlickoStanding, rated_until, standings

DAY = timedelta(days=1)


def day_start(moment: datetime) -> datetime:
    """The start (00:00 UTC) of the day ``moment`` is in."""
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def standing_now(standing: GlickoStanding | None, now: datetime) -> Glicko:
    """A player's Glicko-2 rating at ``now``: as it stood after his last rated day, its
    deviation grown by the days since (none yet: the start's)."""
    if standing is None:
        return Glicko()
    return idle(standing.glicko, (day_start(now) - standing.rated_until) // DAY)


def shown(glicko: Glicko) -> str:
    """``1500 (RD 350)``: a Glicko-2 rating as mail and the site show it."""
    return f"{round(glicko.rating)} (RD {round(glicko.deviation)})"


def glicko_standings(
    session: Session, game: str | None, variant: str | None
) -> dict[tuple[str, str, str], Glicko]:
    """The Glicko-2 ratings of a game and variant (None: any) by (game, variant, userid),
    as they stand after the last day worked out."""
    until = rated_until(session)
    return {
        key: standing_now(found, until) if until is not None else found.glicko
        for key, found in standings(session, game, variant).items()
    }
