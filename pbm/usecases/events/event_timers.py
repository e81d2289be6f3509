"""What the timers do for events, after the boards' clocks: look at the events whose
boards just ended (``running.CheckEvent``: a withdrawal on time, the end, a start
date come), then at the leagues whose season has ended (``leagues.SeasonChange``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pbm.store.events import EventStatus, Kind, events_due, load_events
from pbm.usecases.events.cups import CheckCup
from pbm.usecases.events.leagues import leagues_due
from pbm.usecases.events.running import CheckEvent
from pbm.usecases.unit import Action
from pbm.usecases.world import World


def events_now(world: World) -> list[Action]:
    """The events to look at now: a cup by its own rules, the others as round robins."""
    due = events_due(world.session, world.now)
    cups = {
        e.number
        for e in load_events(
            world.session, (EventStatus.OPEN, EventStatus.PLAYING), kinds=(Kind.CUP,)
        )
        if e.number in due
    }
    return [CheckCup(n) if n in cups else CheckEvent(n) for n in due]


def leagues_now(world: World) -> list[Action]:
    """The season changes due now."""
    return list(leagues_due(world))


# In this order, each read after the one before has been carried out.
PHASES: Sequence[Callable[[World], list[Action]]] = (events_now, leagues_now)
