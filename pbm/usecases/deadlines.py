"""Deadlines in the calendar: a player's time-outs as an iCalendar feed (RFC 5545), for
the web site's ``/players/UID/deadlines.ics``.

One event a board that waits for the player's move, its start and end at the move's
time-out, with an alarm a day before and the board page's address. An event's UID
names the board and the move it waits for, so a calendar that reads the feed again
moves an event in place (a vacation puts it off) and drops it once the move is made.
Only what the site shows anyone goes in: no address, no chat, no comment.
``calendar_of`` builds the feed from values (pure, with ``icalendar``);
``player_deadlines`` reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from icalendar import TRANSP, Alarm, Calendar, Event, vDuration

from pbm.usecases.queries.pages import NotShown, confirmed
from pbm.usecases.site import Site
from pbm.usecases.waiting import boards_of, waiting_for
from pbm.usecases.weblinks import board_url
from pbm.usecases.world import World

PRODID = "-//pbm//correspondence deadlines//EN"
ALARM_BEFORE = timedelta(days=1)
REFRESH = timedelta(hours=1)  # how often a calendar is asked to read the feed again


@dataclass(frozen=True, slots=True)
class Deadline:
    """A board that waits for a player's move: when his time runs out."""

    board: int
    ply: int  # the turn it waits for (its number in the game: ``move``)
    move: int
    title: str  # "Accasta Board 7"
    player: str  # display names
    opponent: str
    time_out: datetime


def calendar_of(
    player: str, deadlines: Sequence[Deadline], base_url: str, domain: str, now: datetime
) -> bytes:
    """The feed of ``player``'s ``deadlines`` (an event each), made at ``now``."""
    calendar = Calendar.new(
        prodid=PRODID,
        uid=f"pbm-deadlines-{player.lower()}@{domain}",
        name=f"pbm: {player}'s deadlines",
        description=f"The boards that wait for {player}'s move, each at its time-out.",
    )
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    # RFC 7986 5.7, and the older name calendars still read: read the feed again hourly.
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(REFRESH))
    for d in deadlines:
        url = board_url(base_url, d.board)
        what = f"{d.player}'s move {d.move} on {d.title} against {d.opponent}"
        event = Event.new(
            uid=f"pbm-board-{d.board}-ply-{d.ply}@{domain}",
            stamp=now,
            start=d.time_out,
            end=d.time_out,
            summary=f"Time out: {d.title}, {d.player} to move",
            description=f"The time for {what} runs out now: {url}",
            url=url,
            transparency=TRANSP.TRANSPARENT,
        )
        alarm = Alarm.new(description=f"A day left for {what}: {url}")
        alarm.add("action", "DISPLAY")
        alarm.add("trigger", -ALARM_BEFORE)
        event.add_component(alarm)
        calendar.add_component(event)
    return bytes(calendar.to_ical())


def player_deadlines(site: Site, userid: str) -> tuple[str, list[Deadline]]:
    """A confirmed player's display name and the boards that wait for his move, the
    earliest time-out first; ``NotShown`` for anyone else."""
    now = site.clock()
    with site.db.read() as session:
        uid, display = confirmed(session, userid)
        world = World(session, site.config, now)
        waiting = waiting_for(boards_of(world, uid), uid, now)
    return display, [
        Deadline(
            w.number,
            w.board.ply + 1,
            w.board.move_number(w.board.ply + 1),
            w.board.title(),
            display,
            w.board.name(w.board.player_at(1 - w.seat)),
            w.time_out,
        )
        for w in waiting
    ]


__all__ = ["Deadline", "NotShown", "calendar_of", "player_deadlines"]
