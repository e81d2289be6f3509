"""Time controls on real boards (issue 24), driven by a settable clock and the timers.

Each control from a challenge to its end: days per move, a Fischer bank that
grows and is capped, ICCF's periods, weekends off across a change to summer
time, reminders at a day and an hour left (once each), a loss on time, the
chess draw on time against a lone king, vacation days spent by themselves
until they run out, a site pause, an undo that gives the time back; and the
timers' one indexed query.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from conftest import Clock, accepted
from sqlmodel import col, select

from pbm.config import Config
from pbm.refusals import BadRequest, Refused
from pbm.runners.timer_runner import tick
from pbm.store.engine import Database
from pbm.store.tables import Game, OutboxMessage, Vacation
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.proposals import Accept, Undo
from pbm.usecases.site import Site
from pbm.usecases.timers import PauseClocks, ResumeClocks, boards_due
from pbm.usecases.vacations import GrantVacation, VacationStatus
from pbm.usecases.vacations import Vacation as GoAway
from pbm.usecases.world import World

PW = Password("pw")
DAY, HOUR = timedelta(days=1), timedelta(hours=1)
ALICE = "alice@example.org"
MONDAY = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def start(site: Site, clock: Clock, time: str, game: str = "accasta", at: datetime = MONDAY) -> int:
    clock.now = at
    return accepted(site, Challenge(game, "alice", "bob", sender=ALICE, time=time))


def move(site: Site, clock: Clock, board: int, userid: str, at: datetime, text: str = "") -> None:
    clock.now = at
    played = text or queries.view(site, board).state.legal_moves()[0]
    unit.run(site, Move(board, played), Who(userid, PW))


def mails(db: Database) -> list[OutboxMessage]:
    with db.transaction() as s:
        return list(s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all())


def game(db: Database, board: int) -> Game:
    with db.transaction() as s:
        found = s.get(Game, board)
        assert found is not None
        return found


def flat(text: str) -> str:
    return " ".join(text.split())


def last_mail(db: Database, to: str) -> str:
    return flat([m for m in mails(db) if m.to_addr == to][-1].body)


def run(db: Database, config: Config, clock: Clock, at: datetime, *, spend: bool = False) -> int:
    """The timers at ``at`` (``spend``: a player out of time spends his vacation days)."""
    clock.now = at
    return tick(db, replace(config, clock=replace(config.clock, spend_vacation=spend)), at)


def test_a_challenge_names_its_time_control_and_the_board_mail_prints_it_back(
    db: Database, site: Site, clock: Clock
) -> None:
    board = start(site, clock, "days 3")
    assert game(db, board).time_control == "days 3"
    text = last_mail(db, ALICE)
    assert "Time: days 3 (3 days for each move)" in text
    assert "alice: 3 days left (to move); your move gives you 3 days again" in text
    assert "Time out: 2025-03-06 09:00 UTC" in text


def test_a_bad_time_control_is_refused_with_the_valid_forms(site: Site) -> None:
    with pytest.raises(BadRequest) as refused:
        unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE, time="blitz 5+3"))
    assert "'blitz' is not a kind of time control" in refused.value.message
    assert "fischer 10d+36h max 10d" in refused.value.message


def test_days_per_move_reset_with_each_move_and_the_late_player_loses_on_time(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    board = start(site, clock, "days 3")
    move(site, clock, board, "alice", MONDAY + 2 * DAY + 20 * HOUR)  # 4 hours to spare
    # bob's 3 days run from alice's move, not from the start.
    run(db, config, clock, MONDAY + 5 * DAY + 20 * HOUR - timedelta(minutes=1))
    assert game(db, board).status == "active"
    assert run(db, config, clock, MONDAY + 5 * DAY + 20 * HOUR) == 1
    done = game(db, board)
    assert (done.status, done.result, done.termination) == ("finished", "1-0", "forfeit")
    assert "bob ran out of time on board" in last_mail(db, ALICE)
    assert "alice wins on time" in last_mail(db, ALICE)


def test_a_fischer_bank_grows_with_each_move_and_is_capped(
    db: Database, site: Site, clock: Clock
) -> None:
    board = start(site, clock, "fischer 2d+12h max 3d")
    move(site, clock, board, "alice", MONDAY + 6 * HOUR)  # 2d - 6h + 12h
    move(site, clock, board, "bob", MONDAY + 6 * HOUR + 1 * DAY)  # 2d - 1d + 12h
    text = last_mail(db, ALICE)
    assert "White alice: 2 days 6 hours left (to move)" in text
    assert "the bank grows by 12 hours with your move, to at most 3 days" in text
    assert "Black bob: 1 day 12 hours left" in text
    move(site, clock, board, "alice", MONDAY + 7 * HOUR + 1 * DAY)  # 2d6h - 1h + 12h
    move(site, clock, board, "bob", MONDAY + 8 * HOUR + 1 * DAY)
    move(site, clock, board, "alice", MONDAY + 9 * HOUR + 1 * DAY)  # capped at 3 days
    assert "White alice: 3 days left" in last_mail(db, ALICE)


def test_iccf_gives_its_period_again_after_the_moves_and_time_carries_over(
    db: Database, site: Site, clock: Clock
) -> None:
    board = start(site, clock, "ICCF 2/5d")
    now = MONDAY
    for _ in range(2):
        now += DAY
        move(site, clock, board, "alice", now)
        now += 2 * DAY
        move(site, clock, board, "bob", now)
    # alice used 2 days of her 5, then got 5 more; bob used 4 days of 5 and got 5 more.
    text = last_mail(db, ALICE)
    assert "White alice: 8 days left (to move)" in text
    assert "Black bob: 6 days left" in text


def test_weekends_off_stand_still_across_the_change_to_summer_time(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    """Berlin went to summer time on Sunday 30 March 2025; a 2-day clock started on
    Friday noon there runs out on Tuesday noon, local time."""
    berlin = ZoneInfo("Europe/Berlin")
    friday_noon = datetime(2025, 3, 28, 12, 0, tzinfo=berlin)
    board = start(site, clock, "days 2 weekends off Europe/Berlin", at=friday_noon)
    out = datetime(2025, 4, 1, 12, 0, tzinfo=berlin)
    assert "Time out: 2025-04-01 10:00 UTC (2025-04-01 12:00 Europe/Berlin)" in last_mail(db, ALICE)
    run(db, config, clock, out - timedelta(minutes=1))  # her reminders, late
    assert game(db, board).status == "active"
    assert run(db, config, clock, out) == 1
    assert game(db, board).result == "0-1"


def test_reminders_at_a_day_and_at_an_hour_left_once_each(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    board = start(site, clock, "days 3")
    assert run(db, config, clock, MONDAY + 2 * DAY - HOUR) == 0
    assert run(db, config, clock, MONDAY + 2 * DAY) == 1
    [day] = [m for m in mails(db) if m.subject.startswith("Nag:")]
    assert day.to_addr == ALICE
    assert "you have 1 day left. Unless you move, you lose on time on 2025-03-06 09:00" in flat(
        day.body
    )
    assert run(db, config, clock, MONDAY + 2 * DAY + 12 * HOUR) == 0  # not again
    assert run(db, config, clock, MONDAY + 3 * DAY - HOUR) == 1
    assert "you have 1 hour left" in flat([m for m in mails(db) if "Nag:" in m.subject][-1].body)
    assert run(db, config, clock, MONDAY + 3 * DAY - timedelta(minutes=30)) == 0
    assert len([m for m in mails(db) if m.subject.startswith("Nag:")]) == 2
    assert game(db, board).status == "active"


def test_the_chess_player_who_runs_out_against_a_lone_king_draws(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    """A loss on time is a loss while the opponent has material to mate; against a lone
    king (FIDE Laws 6.9) it is a draw."""
    board = start(site, clock, "days 1", game="chess")
    moves = ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qxa2", "Rxa2"]
    now = MONDAY
    for i, text in enumerate(moves):
        now += HOUR
        move(site, clock, board, ("alice", "bob")[i % 2], now, text)
    # Not a lone king yet: Black has pieces, so a loss on time is a loss.
    assert run(db, config, clock, now + DAY) == 1
    assert game(db, board).result == "1-0"

    lone = start(site, clock, "days 1", game="chess", at=now + 2 * DAY)
    # White to move with king and queen, Black with a lone king (set in the table).
    with db.transaction() as s:
        row = s.get(Game, lone)
        assert row is not None
        row.position = '{"variant":"standard","start":"4k3/8/8/8/8/8/8/Q3K3 w - - 0 1","moves":""}'
        s.add(row)
    assert run(db, config, clock, now + 3 * DAY + HOUR) == 1
    drawn = game(db, lone)
    assert (drawn.result, drawn.termination) == ("1/2-1/2", "forfeit")
    assert "the game is drawn" in last_mail(db, ALICE)


def test_vacation_days_are_spent_by_themselves_day_by_day_until_none_is_left(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    two = replace(config, clock=replace(config.clock, vacation_days_per_year=2))
    board = start(site, clock, "days 1")
    out = MONDAY + DAY
    assert run(db, two, clock, out, spend=True) == 1
    assert game(db, board).status == "active"
    text = last_mail(db, ALICE)
    assert "alice's time ran out on board" in text
    assert "a vacation day of his is spent" in text and "Vacation days left in 2025: 1 of 2" in text
    assert run(db, two, clock, out + DAY - HOUR, spend=True) == 0
    assert run(db, two, clock, out + DAY, spend=True) == 1
    assert "Vacation days left in 2025: 0 of 2" in last_mail(db, ALICE)
    assert run(db, two, clock, out + 2 * DAY, spend=True) == 1
    assert game(db, board).result == "0-1"  # no day left: the time is up
    with db.transaction() as s:
        spent = s.exec(select(Vacation).where(Vacation.kind == "spent")).all()
    assert len(spent) == 2


def test_a_site_pause_stops_a_time_bank(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    board = start(site, clock, "days 2")
    clock.now = MONDAY + DAY
    unit.run(site, PauseClocks())
    assert run(db, config, clock, MONDAY + 5 * DAY) == 0
    clock.now = MONDAY + 4 * DAY
    unit.run(site, ResumeClocks())
    run(db, config, clock, MONDAY + 5 * DAY - timedelta(minutes=1))
    assert game(db, board).status == "active"
    assert run(db, config, clock, MONDAY + 5 * DAY) == 1
    assert game(db, board).result == "0-1"


def test_an_undo_gives_the_time_back(db: Database, site: Site, clock: Clock) -> None:
    board = start(site, clock, "fischer 2d+12h max 3d")
    move(site, clock, board, "alice", MONDAY + DAY)  # 2d - 1d + 12h = 1d12h
    assert "White alice: 1 day 12 hours left" in last_mail(db, ALICE)
    clock.now = MONDAY + DAY + HOUR
    unit.run(site, Undo(board), Who("alice", PW))
    clock.now = MONDAY + DAY + 2 * HOUR
    unit.run(site, Accept(board), Who("bob", PW))
    # Her move is taken back, and the day it took with it: her 2 days run again.
    assert "White alice: 2 days left (to move)" in last_mail(db, ALICE)


def test_the_timers_read_only_the_boards_whose_moment_has_come(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    early = start(site, clock, "days 1")
    late = start(site, clock, "days 5")
    classic = start(site, clock, "classic 7/21")
    with db.read() as s:
        assert boards_due(World(s, config, MONDAY + DAY - HOUR)) == [early]  # its 1-hour one
        assert boards_due(World(s, config, MONDAY + 4 * DAY)) == [early, late]
        assert set(boards_due(World(s, config, MONDAY + 7 * DAY))) == {early, late, classic}
    timers = {n: game(db, n).timer_at for n in (early, late, classic)}
    assert timers == {
        early: MONDAY + 23 * HOUR,  # a day to start with: only the hour's reminder
        late: MONDAY + 4 * DAY,
        classic: MONDAY + 7 * DAY,
    }


def test_a_challenge_refused_for_its_time_control_changes_nothing(site: Site, db: Database) -> None:
    before = mails(db)
    with pytest.raises(Refused):
        unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE, time="days 31"))
    assert mails(db) == before


def test_vacation_status_tells_the_days_left_and_an_admin_can_grant_more(
    db: Database, config: Config, site: Site, clock: Clock
) -> None:
    clock.now = MONDAY
    unit.run(site, GoAway(3), Who("alice", PW))
    [status] = unit.run(site, VacationStatus(), Who("alice", PW))
    text = flat(status.body)
    assert "alice: 27 of your 30 vacation days for 2025 are left" in text
    assert "Taken so far: 3 days on vacation." in text
    assert "Your clocks stand still until 2025-03-06 09:00 UTC" in text
    [granted] = unit.run(site, GrantVacation("alice", 5), Who("alice", ADMIN))
    assert granted.to == ALICE and "Vacation days left in 2025: 32" in flat(granted.body)
    [status] = unit.run(site, VacationStatus(), Who("alice", PW))
    assert "32 of your 35 vacation days for 2025 are left" in flat(status.body)
    assert "The site gives 30 a year; 5 more were granted to you." in flat(status.body)


def test_a_board_that_cannot_be_decided_does_not_hold_up_the_others(
    db: Database, config: Config, site: Site, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    broken = start(site, clock, "days 1")
    fine = start(site, clock, "days 1")
    with db.transaction() as s:
        row = s.get(Game, broken)
        assert row is not None
        row.position = "not a position"  # a bug's work: loading it raises
        s.add(row)
    assert run(db, config, clock, MONDAY + DAY) == 1
    assert game(db, fine).result == "0-1"
    assert game(db, broken).status == "active"
    assert f"board {broken} could not be decided" in caplog.text
