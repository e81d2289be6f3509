"""Events and time, on a real database (SQLite and PostgreSQL), moved by the timers'
``tick`` as ``pbm tick --now`` does: vacations stop an event's clocks up to its cap
(``--vacation-days``), an event starts at its start date (or is cancelled with too few
players), and a double round robin plays each pairing in both colours."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import Clock

from pbm.runners.timer_runner import tick
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.events.running import read_event
from pbm.usecases.events.tournaments import CreateEvent, JoinEvent, newest
from pbm.usecases.site import Site
from pbm.usecases.vacations import Vacation
from pbm.usecases.world import World

PLAYERS = ("alice", "bob", "carol", "dave")


@pytest.fixture
def site(db: Database, config: object, clock: Clock) -> Site:
    s = Site(db, config, clock)  # type: ignore[arg-type]
    for uid in PLAYERS:
        unit.run(s, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    return s


def who(uid: str) -> Who:
    return Who(uid, Password("pw"))


def event_of(site: Site, **kw: object) -> int:
    unit.run(site, CreateEvent("accasta", kw.pop("players", 3), time="classic 2/3", **kw))  # type: ignore[arg-type]
    return newest(site)


def state(site: Site, number: int):  # type: ignore[no-untyped-def]
    with site.db.read() as s:
        return read_event(World(s, site.config, site.clock()), number)


def started(site: Site, players: tuple[str, ...], **kw: object) -> int:
    number = event_of(site, players=len(players), **kw)
    for uid in players:
        unit.run(site, JoinEvent(number, f"{uid}@example.org"), who(uid))
    return number


def status_of_whites_board(site: Site, number: int, white: str) -> str:
    return next(g.status.value for g in state(site, number).games if g.white == white)


@pytest.mark.parametrize("cap, forfeited", [(None, False), (1, True)])
def test_vacations_stop_an_events_clocks_up_to_its_cap(
    site: Site, clock: Clock, cap: int | None, forfeited: bool
) -> None:
    number = started(site, ("alice", "bob", "carol"), vacation_days=cap)
    white = state(site, number).games[0].white
    unit.run(site, Vacation(5), who(white))
    # Three days to move, five away: uncapped, his clock stands still until day 8; with
    # a cap of one day it runs again after day 1, and he is out of time on day 4.
    clock.advance(days=4, hours=12)
    tick(site.db, site.config, clock.now)
    assert (status_of_whites_board(site, number, white) == "finished") is forfeited


def test_an_event_starts_at_its_start_date(site: Site, clock: Clock) -> None:
    number = event_of(site, players=5, starts_at=clock.now + timedelta(days=2))
    for uid in ("alice", "bob", "carol"):
        unit.run(site, JoinEvent(number, f"{uid}@example.org"), who(uid))
    clock.advance(days=1)
    tick(site.db, site.config, clock.now)
    assert state(site, number).event.status == "open"
    clock.advance(days=1, minutes=1)
    tick(site.db, site.config, clock.now)
    after = state(site, number)
    assert after.event.status == "playing" and len(after.games) == 3


def test_an_event_with_too_few_players_at_its_date_is_cancelled(site: Site, clock: Clock) -> None:
    number = event_of(site, players=5, starts_at=clock.now + timedelta(days=2))
    unit.run(site, JoinEvent(number, "alice@example.org"), who("alice"))
    clock.advance(days=3)
    tick(site.db, site.config, clock.now)
    assert state(site, number).event.status == "cancelled"


def test_a_double_round_robin_plays_each_pairing_in_both_colours(site: Site) -> None:
    number = started(site, PLAYERS, double=True)
    games = state(site, number).games
    assert len(games) == 12
    pairs = [(g.white, g.black) for g in games]
    assert all((b, w) in pairs for w, b in pairs)
    assert max(g.round for g in games) == 6
