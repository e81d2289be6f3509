"""Tournaments through the use cases, on a real database (SQLite and PostgreSQL): opening,
joining, starting with the Berger table, standings from the games, the withdrawal rule
(struck, losses, two losses on time, the 30-day bar), cancelling, and bad input refused
with a sentence."""

from __future__ import annotations

import pytest
from conftest import Clock
from sqlmodel import col, select

from pbm.refusals import Refused
from pbm.store.engine import Database
from pbm.store.tables import OutboxMessage
from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.events.running import read_event
from pbm.usecases.events.tournaments import (
    CancelEvent,
    CorrectResult,
    CreateEvent,
    JoinEvent,
    LeaveEvent,
    ListEvents,
    ShowEvent,
    StartEvent,
)
from pbm.usecases.moves import Resign
from pbm.usecases.queries.reading import Show
from pbm.usecases.site import Site
from pbm.usecases.world import World

PLAYERS = ("alice", "bob", "carol", "dave", "erin", "frank", "gina")


@pytest.fixture
def site(db: Database, config: object, clock: Clock) -> Site:
    s = Site(db, config, clock)  # type: ignore[arg-type]
    for uid in PLAYERS:
        unit.run(s, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    return s


def flat(text: str) -> str:
    return " ".join(text.split())


def who(uid: str) -> Who:
    return Who(uid, Password("pw"))


def join(site: Site, event: int, uid: str) -> None:
    unit.run(site, JoinEvent(event, f"{uid}@example.org"), who(uid))


def refused(call: object) -> str:
    with pytest.raises(Refused) as info:
        call()  # type: ignore[operator]
    return info.value.message


def opened(site: Site, players: int = 4, **kw: object) -> int:
    unit.run(site, CreateEvent("accasta", players, time="classic 2/3", **kw))  # type: ignore[arg-type]
    with site.db.read() as s:
        return max(
            e.event.number
            for e in [
                read_event(World(s, site.config, site.clock()), n)
                for n in range(1, 20)
                if _exists(s, site, n)
            ]
        )


def _exists(session: object, site: Site, n: int) -> bool:
    try:
        read_event(World(session, site.config, site.clock()), n)  # type: ignore[arg-type]
    except Refused:
        return False
    return True


def state(site: Site, number: int):  # type: ignore[no-untyped-def]
    with site.db.read() as s:
        return read_event(World(s, site.config, site.clock()), number)


def mails(db: Database, to: str | None = None) -> list[OutboxMessage]:
    with db.transaction() as s:
        rows = list(s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all())
    return [r for r in rows if to is None or r.to_addr == to]


def test_a_full_event_starts_with_the_berger_table_and_one_mail_a_player(site: Site) -> None:
    number = opened(site, 4)
    for uid in PLAYERS[:3]:
        join(site, number, uid)
    assert not state(site, number).games
    before = len(mails(site.db))
    join(site, number, "dave")
    st = state(site, number)
    assert st.event.status == "playing" and len(st.games) == 6
    seeds = {e.userid: e.seed for e in st.entries}
    by_seed = {s: u for u, s in seeds.items()}
    assert {(g.round, g.white, g.black) for g in st.games} == {
        (1, by_seed[1], by_seed[4]),
        (1, by_seed[2], by_seed[3]),
        (2, by_seed[4], by_seed[3]),
        (2, by_seed[1], by_seed[2]),
        (3, by_seed[2], by_seed[4]),
        (3, by_seed[3], by_seed[1]),
    }
    new = mails(site.db)[before:]
    # dave's join answer and start mail are one; the other three get one each.
    started = [m for m in new if "started: your 3 boards" in m.subject]
    assert sorted(m.to_addr for m in started) == [
        f"{u}@example.org" for u in ("alice", "bob", "carol", "dave")
    ]
    assert len(new) == 5  # and dave's answer to his join (one mail, when it came by mail)
    alice = next(m for m in started if m.to_addr == "alice@example.org")
    assert "fewer than half" in flat(alice.body) and alice.body.count("Board ") == 3
    # No mail a board: the boards' own mails come with the moves, and name the event.
    (shown,) = unit.run(site, Show(st.games[0].board, "alice@example.org"))
    assert f"Event: Tournament {number} (Accasta round robin {number}), round 1" in shown.body


def test_standings_come_from_the_games_and_follow_a_corrected_result(site: Site) -> None:
    number = opened(site, 3)
    for uid in PLAYERS[:3]:
        join(site, number, uid)
    st = state(site, number)
    first = st.games[0]
    unit.run(site, Resign(first.board), who(first.black))
    lines = {x.player: x for x in state(site, number).standings()}
    assert lines[first.white].points == 1 and lines[first.black].points == 0
    # An admin's correction of the result changes the standings: nothing else to mend.
    unit.run(site, CorrectResult(number, first.board, "0-1"))
    lines = {x.player: x for x in state(site, number).standings()}
    assert lines[first.white].points == 0 and lines[first.black].points == 1


def test_leaving_with_fewer_than_half_played_strikes_every_result(site: Site) -> None:
    number = opened(site, 4)
    for uid in PLAYERS[:4]:
        join(site, number, uid)
    st = state(site, number)
    g = next(g for g in st.games if "alice" in (g.white, g.black))
    other = g.black if g.white == "alice" else g.white
    unit.run(site, Resign(g.board), who(other))  # alice won one of her three
    unit.run(site, LeaveEvent(number, "alice@example.org"), who("alice"))
    st = state(site, number)
    assert st.entry("alice").struck  # type: ignore[union-attr]
    assert all(g.status != "active" for g in st.games if "alice" in (g.white, g.black))
    lines = {x.player: x for x in st.standings()}
    assert lines["alice"].struck and lines[other].points == 0 and lines[other].played == 0
    note = mails(site.db, "alice@example.org")[-1]
    assert "fewer than half" in note.body and "struck" in note.body
    assert "You may join a new event from" in note.body
    # The 30-day bar: alice cannot join a new event.
    second = opened(site, 3)
    said = refused(lambda: join(site, second, "alice"))
    assert "you may join a new event from" in said
    site.clock.advance(days=31)  # type: ignore[attr-defined]
    join(site, second, "alice")


def test_leaving_with_half_played_scores_the_rest_as_losses(site: Site) -> None:
    number = opened(site, 3)
    for uid in PLAYERS[:3]:
        join(site, number, uid)
    st = state(site, number)
    g = next(g for g in st.games if "alice" in (g.white, g.black))
    unit.run(site, Resign(g.board), who("alice"))  # 1 of 2 played: half
    unit.run(site, LeaveEvent(number, "alice@example.org"), who("alice"))
    st = state(site, number)
    assert not st.entry("alice").struck  # type: ignore[union-attr]
    lines = {x.player: x for x in st.standings()}
    assert lines["alice"].points == 0 and lines["alice"].played == 2
    assert sum(x.points for x in lines.values()) == 2  # alice's two losses count
    assert "the resigned games count as losses" in flat(
        mails(site.db, "alice@example.org")[-1].body
    )


def test_two_losses_on_time_withdraw_a_player(site: Site, clock: Clock) -> None:
    number = opened(site, 4)
    for uid in PLAYERS[:4]:
        join(site, number, uid)
    st = state(site, number)
    seed1 = next(e.userid for e in st.entries if e.seed == 1)
    clock.advance(days=4)  # every White runs out of time ("classic 2/3")
    from pbm.runners.timer_runner import tick

    tick(site.db, site.config, clock.now)
    st = state(site, number)

    # seed 1 had White in rounds 1 and 2: two losses on time withdraw him.
    assert st.entry(seed1).withdrawn_at is not None and st.entry(seed1).reason == "time"  # type: ignore[union-attr]
    told = [m for m in mails(site.db, f"{seed1}@example.org") if m.subject.endswith("withdrawn")]
    assert "lost 2 games on time" in flat(told[0].body)
    # Every game over (the others on time too): the event ended, with the standings.
    assert st.event.status == "finished"
    final = mails(site.db, "bob@example.org")[-1]
    assert final.subject.endswith("final standings") and "Pts" in final.body


def test_bad_input_gets_a_sentence(site: Site) -> None:
    assert "3 to 14 players, not 2" in refused(lambda: unit.run(site, CreateEvent("accasta", 2)))
    assert "not 40" in refused(lambda: unit.run(site, CreateEvent("accasta", 40)))
    number = opened(site, 3)
    join(site, number, "alice")
    assert "already" in refused(lambda: join(site, number, "alice"))
    assert "You are not in" in refused(
        lambda: unit.run(site, LeaveEvent(number, "bob@example.org"), who("bob"))
    )
    join(site, number, "bob")
    join(site, number, "carol")  # full: it starts
    assert "takes no more players" in refused(lambda: join(site, number, "dave"))
    other = opened(site, 5)
    unit.run(site, CancelEvent(other))
    assert "was cancelled" in refused(lambda: join(site, other, "dave"))
    assert "There is no tournament 99" in refused(lambda: join(site, 99, "dave"))
    assert "needs 3" in refused(lambda: unit.run(site, StartEvent(opened(site, 5))))


def test_list_and_show_by_mail(site: Site) -> None:
    number = opened(site, 3, name="Spring cup")
    (listed,) = unit.run(site, ListEvents("erin@example.org"))
    assert "Spring cup" in listed.body and "open: 0 of 3 players" in listed.body
    for uid in PLAYERS[:3]:
        join(site, number, uid)
    (shown,) = unit.run(site, ShowEvent(number, "erin@example.org"))
    assert "Pts  W     SB   DE" in shown.body and max(map(len, shown.body.splitlines())) <= 78


def test_two_joins_decided_at_once_cannot_leave_a_full_event_unstarted(site: Site) -> None:
    """bob and carol take an event's last two places, decided on one snapshot (two server
    instances) and written one after the other: the second is decided again and starts it."""
    number = opened(site, 3)
    join(site, number, "alice")
    requests = [
        unit.Request(JoinEvent(number, f"{uid}@example.org"), who(uid)) for uid in ("bob", "carol")
    ]
    with site.db.read() as s:
        decided = unit.decide_all(site, s, requests)
    for one in decided:
        with site.db.transaction() as s:
            (outcome,) = unit.write(site, s, [one])
            assert outcome.refused is None
    after = state(site, number)
    assert after.event.status == "playing" and len(after.entries) == 3 and len(after.games) == 3


def test_league_entries_by_mail(site: Site) -> None:
    from pbm import commands
    from pbm.commands.grammar import Context
    from pbm.usecases.events.leagues import JoinLeague, LeaveLeague

    parsed = commands.parse("league join accasta/pari alice pw")
    assert parsed is not None
    action, _ = parsed.build(Context("alice@example.org"))
    assert action == JoinLeague("accasta", "alice@example.org", "pari")
    unit.run(site, action, who("alice"))
    assert "already" in refused(lambda: unit.run(site, action, who("alice")))
    assert "has no variant 'x'" in refused(
        lambda: unit.run(site, JoinLeague("accasta", "bob@example.org", "x"), who("bob"))
    )
    assert "You are not in" in refused(
        lambda: unit.run(site, LeaveLeague("accasta", "bob@example.org", "pari"), who("bob"))
    )
    assert "no league of Accasta here yet" in refused(
        lambda: unit.run(site, LeaveLeague("accasta", "bob@example.org"), who("bob"))
    )
    (left,) = unit.run(site, LeaveLeague("accasta", "alice@example.org", "pari"), who("alice"))
    assert "You left the Accasta league (pari)" in left.body  # no season yet: at once
