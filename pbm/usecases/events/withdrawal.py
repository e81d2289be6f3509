"""The fair way of leaving an event (ICCF's rule), as pure arithmetic, no I/O.

A player who leaves an event, or is withdrawn from it, resigns his games
still in play. If he had finished fewer than half of his games then, all of
them are struck from the standings (``pbm.usecases.events.standings``): the results
against him count for nobody. Otherwise his games stand, the resigned ones
as losses. Two losses on time in one event withdraw a player under the same
rule, and a withdrawn player may join no new event for ``BAR``.

In a league, a player who lost more than half of his season's games on time
drops out of the league at the season's end.
"""

from __future__ import annotations

from datetime import datetime, timedelta

TIME_LOSSES = 2  # losses on time in one event that withdraw a player
BAR = timedelta(days=30)  # no new event for this long after a withdrawal (ICCF, 2022)


def struck(finished: int, total: int) -> bool:
    """Whether a player leaving after ``finished`` of his ``total`` games has all his
    results struck: fewer than half of them were played."""
    return 2 * finished < total


def withdrawn_on_time(time_losses: int) -> bool:
    """Whether these losses on time in one event withdraw a player."""
    return time_losses >= TIME_LOSSES


def barred_until(withdrawn_at: datetime) -> datetime:
    """When a player withdrawn at ``withdrawn_at`` may join a new event again."""
    return withdrawn_at + BAR


def drops_out(time_losses: int, games: int) -> bool:
    """Whether a league player who lost ``time_losses`` of his ``games`` on time drops
    out of the league: more than half of them."""
    return 2 * time_losses > games
