"""The knockout cup (the issue's stretch): its bracket, matches of two games with colours
swapped and a third on a tie, as pure arithmetic; then a cup of five played through the
use cases and the timers on a real database, byes, a tiebreak, a withdrawal and all."""

from __future__ import annotations

import pytest
from conftest import Clock
from sqlmodel import col, select
from starlette.testclient import TestClient

from pbm.refusals import Refused
from pbm.runners.timer_runner import tick
from pbm.store.engine import Database
from pbm.store.tables import OutboxMessage
from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.events.bracket import bracket, match, progress
from pbm.usecases.events.cups import seeds_of
from pbm.usecases.events.running import read_event
from pbm.usecases.events.standings import Game
from pbm.usecases.events.tournaments import (
    CreateEvent,
    JoinEvent,
    LeaveEvent,
    ShowEvent,
    newest,
)
from pbm.usecases.moves import Resign
from pbm.usecases.site import Site
from pbm.usecases.world import World
from pbm.web.app import create_app


def test_the_bracket_meets_the_top_seeds_last_and_gives_the_byes_to_them() -> None:
    assert bracket(8) == [(1, 8), (4, 5), (2, 7), (3, 6)]
    assert bracket(5) == [(1, None), (4, 5), (2, None), (3, None)]
    assert bracket(4) == [(1, 4), (2, 3)]
    for n in range(4, 65):
        seeds = [s for pair in bracket(n) for s in pair if s is not None]
        assert sorted(seeds) == list(range(1, n + 1))


def test_a_match_two_games_then_a_third() -> None:
    a, b = "a", "b"
    assert match(a, b, [Game(a, b, 1.0), Game(b, a, 0.5)]).winner == a  # 1½-½
    assert match(a, b, [Game(a, b, 1.0)]).winner is None  # one game still played
    tied = match(a, b, [Game(a, b, 1.0), Game(b, a, 1.0)])
    assert tied.winner is None and tied.third_wanted and tied.points == (1.0, 1.0)
    assert match(a, b, [Game(a, b, 1.0), Game(b, a, 1.0), Game(a, b, 1.0)]).winner == a
    # A drawn third game sends Black through.
    assert match(a, b, [Game(a, b, 0.5), Game(b, a, 0.5), Game(a, b, 0.5)]).winner == b


def test_progress_pairs_the_winners_and_crowns_a_champion() -> None:
    seeds = ["s1", "s2", "s3", "s4"]
    r1 = [(1, Game("s1", "s4", 1.0)), (1, Game("s4", "s1", 0.0)), (1, Game("s2", "s3", 1.0))]
    found = progress(seeds, r1)
    assert not found.next_round and found.champion is None  # s2-s3 not over
    r1 += [(1, Game("s3", "s2", 0.5))]
    assert progress(seeds, r1).next_round == [("s1", "s2")]
    final = [(2, Game("s1", "s2", 0.0)), (2, Game("s2", "s1", 0.5))]
    assert progress(seeds, r1 + final).champion == "s2"


PLAYERS = ("alice", "bob", "carol", "dave", "erin")


@pytest.fixture
def site(db: Database, config: object, clock: Clock) -> Site:
    s = Site(db, config, clock)  # type: ignore[arg-type]
    for uid in PLAYERS:
        unit.run(s, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    return s


def who(uid: str) -> Who:
    return Who(uid, Password("pw"))


def state(site: Site, number: int):  # type: ignore[no-untyped-def]
    with site.db.read() as s:
        return read_event(World(s, site.config, site.clock()), number)


def active(site: Site, number: int) -> list[tuple[int, str, str]]:
    return [(g.board, g.white, g.black) for g in state(site, number).games if g.status == "active"]


def test_a_cup_of_five_is_played_to_its_champion(site: Site, clock: Clock) -> None:
    with pytest.raises(Refused, match="A cup has 4 to 64 players, not 3"):
        unit.run(site, CreateEvent("accasta", 3, kind="cup"))
    unit.run(site, CreateEvent("accasta", 5, time="classic 5/10", kind="cup", name="Cup"))
    number = newest(site)
    for uid in PLAYERS:
        unit.run(site, JoinEvent(number, f"{uid}@example.org"), who(uid))
    s1, s2, s3, s4, s5 = seeds_of(state(site, number))
    # Seeds 1 to 3 have byes; 4 and 5 play two games, colours swapped.
    first = active(site, number)
    assert {(w, k) for _, w, k in first} == {(s4, s5), (s5, s4)}
    for board, white, _ in first:  # each wins with White: 1-1
        unit.run(site, Resign(board), who(s5 if white == s4 else s4))
    tick(site.db, site.config, clock.now)
    (third,) = active(site, number)
    assert third[1:] == (s4, s5)  # the higher seed White in the third game
    unit.run(site, Resign(third[0]), who(s4))  # s5 goes through
    tick(site.db, site.config, clock.now)
    second = active(site, number)
    assert {frozenset((w, k)) for _, w, k in second} == {frozenset((s1, s5)), frozenset((s2, s3))}
    unit.run(site, LeaveEvent(number, f"{s5}@example.org"), who(s5))  # s1 goes through
    for board, _, _ in active(site, number):
        unit.run(site, Resign(board), who(s3))  # s2 beats s3 2-0
    tick(site.db, site.config, clock.now)
    final = active(site, number)
    assert {(w, k) for _, w, k in final} == {(s1, s2), (s2, s1)}
    for board, _, _ in final:
        unit.run(site, Resign(board), who(s1))
    tick(site.db, site.config, clock.now)
    assert state(site, number).event.status == "finished"
    (shown,) = unit.run(site, ShowEvent(number, "x@example.org"))
    assert f"Cup won by {s2}." in shown.body and "Final" in shown.body
    assert max(len(line) for line in shown.body.splitlines()) <= 78
    page = TestClient(create_app(site), base_url="http://localhost").get(f"/tournaments/{number}")
    assert page.status_code == 200 and f"Cup won by {s2}." in page.text
    assert f"{s2} won the cup" in " ".join(mails_to(site, f"{s1}@example.org")[-1].body.split())


def mails_to(site: Site, to: str) -> list[OutboxMessage]:
    with site.db.transaction() as s:
        rows = s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all()
        return [r for r in rows if r.to_addr == to]
