"""Board clocks: reminders, forfeits, vacations and the site pause, driven by a settable clock.

Time never passes by itself here: the ``clock`` fixture is moved by hand and
``pbm.runners.timers.tick`` (or ``pbm tick --now``) is run at chosen moments.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from conftest import T0, Clock, accepted
from sqlmodel import col, select

from pbm.cli import main
from pbm.config import Config
from pbm.refusals import BadRequest, NoVacationLeft, Refused, WrongPassword
from pbm.runners.timer_runner import tick as run_tick
from pbm.store.engine import Database
from pbm.store.tables import ClockPause, Game, OutboxMessage, Player, Vacation
from pbm.usecases import clocks, queries, unit
from pbm.usecases.auth import ADMIN, ByReply, Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.queries.reading import Show
from pbm.usecases.site import Site
from pbm.usecases.timers import PauseClocks, ResumeClocks, RunClock, boards_due
from pbm.usecases.vacations import Vacation as GoAway
from pbm.usecases.vacations import VacationStatus
from pbm.usecases.world import World

PW = Password("pw")
D = timedelta(days=1)
ALICE, BOB = "alice@example.org", "bob@example.org"


# ---------------------------------------------------------------- the arithmetic


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def test_running_time_leaves_out_the_stops() -> None:
    assert clocks.running_time(at(0), at(10), []) == 10 * D
    assert clocks.running_time(at(0), at(10), [(at(2), at(4))]) == 8 * D
    # Overlapping stops count once; parts outside [since, until] not at all.
    stops = [(at(-5), at(1)), (at(3), at(6)), (at(5), at(7)), (at(9), at(20))]
    assert clocks.running_time(at(0), at(10), stops) == (2 + 2) * D  # days 1-3 and 7-9
    assert clocks.running_time(at(10), at(0), []) == timedelta(0)


def test_due_at_skips_the_stops() -> None:
    assert clocks.due_at(at(0), 7 * D, []) == at(7)
    assert clocks.due_at(at(0), 7 * D, [(at(2), at(5))]) == at(10)
    assert clocks.due_at(at(0), 7 * D, [(at(-3), at(1)), (at(8), at(9))]) == at(8)
    assert clocks.due_at(at(0), 2 * D, [(at(1), at(3)), (at(2), at(4))]) == at(5)
    for stops in ([], [(at(2), at(5))], [(at(-1), at(1)), (at(6), at(6.5))]):
        due = clocks.due_at(at(0), 7 * D, stops)
        assert clocks.running_time(at(0), due, stops) == 7 * D


def test_nags_sent_counts_covered_periods() -> None:
    assert clocks.nags_sent(at(0), None, 7 * D, []) == 0
    assert clocks.nags_sent(at(0), at(-1), 7 * D, []) == 0  # before this clock started
    assert clocks.nags_sent(at(0), at(7), 7 * D, []) == 1
    assert clocks.nags_sent(at(0), at(15), 7 * D, []) == 2
    assert clocks.nags_sent(at(0), at(15), 7 * D, [(at(1), at(3))]) == 1


# ---------------------------------------------------------------- service fixtures


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


def tick(db: Database, config: Config, c: Clock, days: float) -> int:
    """Run the timer at T0 + ``days``."""
    c.now = at(days)
    return run_tick(db, config, c.now)


def outbox(db: Database, since_id: int = 0) -> list[OutboxMessage]:
    with db.transaction() as s:
        return list(
            s.exec(
                select(OutboxMessage)
                .where(col(OutboxMessage.id) > since_id)
                .order_by(col(OutboxMessage.id))
            ).all()
        )


def last_id(db: Database) -> int:
    rows = outbox(db)
    return rows[-1].id or 0 if rows else 0


def nags(db: Database) -> list[OutboxMessage]:
    return [o for o in outbox(db) if o.subject.startswith("Nag:")]


def flat(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces."""
    return " ".join(text.split())


def game(db: Database, board: int) -> Game:
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def move(site: Site, board: int, userid: str) -> None:
    legal = queries.view(site, board).state.legal_moves()
    unit.run(site, Move(board, legal[0]), Who(userid, PW))


def vacation(site: Site, userid: str, days: int | None, credentials: Any = PW) -> Any:
    """``userid`` goes on vacation for ``days`` (None: comes back); the replies."""
    return unit.run(site, GoAway(days), Who(userid, credentials))


def snapshot(db: Database) -> tuple[Any, ...]:
    with db.transaction() as s:
        return tuple(
            [r.model_dump() for r in s.exec(select(table)).all()]
            for table in (Game, Player, Vacation, ClockPause, OutboxMessage)
        )


def refused(db: Database, error: type[Refused], call: Any) -> str:
    before = snapshot(db)
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert snapshot(db) == before
    return info.value.message


# ---------------------------------------------------------------- reminders


def test_a_reminder_comes_after_the_nag_period_not_before_and_once(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    assert tick(db, config, clock, 7 - 1 / 1440) == 0  # a minute early
    assert nags(db) == []
    assert tick(db, config, clock, 7) == 1
    [nag] = nags(db)
    assert nag.to_addr == ALICE
    assert nag.subject == f"Nag: Accasta Board {board} - alice to move"
    assert nag.reply_as == "alice"  # she can answer with just her move
    assert "you have not moved for 7 days" in flat(nag.body)
    assert "forfeited on 2025-03-22 12:00 UTC" in flat(nag.body)
    assert "SHC SHC SHC SHC" in nag.body  # the board itself
    assert "Reminder:  2025-03-15 12:00 UTC (one every 7 days without a move)" in nag.body
    # Once per period: not again later in the same period ...
    assert tick(db, config, clock, 7) == 0
    assert tick(db, config, clock, 13.9) == 0
    assert len(nags(db)) == 1
    # ... and once in the next.
    assert tick(db, config, clock, 14) == 1
    assert tick(db, config, clock, 20.9) == 0
    assert len(nags(db)) == 2
    assert game(db, board).status == "active"


def test_boards_due_and_run_clock_act_once(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    """What ``tick`` does, step by step: find the due boards, run each board's clock."""

    def due() -> list[int]:
        with db.read() as s:
            return boards_due(World(s, config, clock.now))

    clock.now = at(7) - timedelta(seconds=1)
    assert due() == []
    assert unit.run(site, RunClock(board)) == ()  # nothing due: nothing done, no mail
    clock.now = at(7)
    assert due() == [board]
    (nag,) = unit.run(site, RunClock(board))
    assert nag.to == ALICE and nag.subject.startswith("Nag:")
    assert due() == []
    assert unit.run(site, RunClock(board)) == ()  # run twice, it reminds once
    assert len(nags(db)) == 1
    assert game(db, board).last_nag_at == at(7)


def test_a_late_tick_sends_one_reminder_for_the_periods_it_missed(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    assert tick(db, config, clock, 15) == 1
    assert tick(db, config, clock, 20.9) == 0
    assert len(nags(db)) == 1


def test_a_move_starts_the_opponents_clock(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    clock.now = at(3)
    move(site, board, "alice")
    assert "Reminder:  2025-03-11 12:00 UTC" in outbox(db)[-1].body
    assert tick(db, config, clock, 9.9) == 0
    assert tick(db, config, clock, 10) == 1
    [nag] = nags(db)
    assert nag.to_addr == BOB and nag.subject.endswith("bob to move")
    # bob moves: alice's clock starts afresh, and so do her reminders.
    clock.now = at(11)
    move(site, board, "bob")
    assert tick(db, config, clock, 17.9) == 0
    assert tick(db, config, clock, 18) == 1
    assert [n.to_addr for n in nags(db)] == [BOB, ALICE]


def test_per_board_periods(db: Database, config: Config, clock: Clock, site: Site) -> None:
    challenge = Challenge("accasta", "alice", "bob", admin=True, nag_days=2, forfeit_days=3)
    b = unit.run(site, challenge)
    assert "Forfeit:   2025-03-04 12:00 UTC (3 days without a move)" in b[0].body
    assert tick(db, config, clock, 1.9) == 0
    assert tick(db, config, clock, 2) == 1
    assert tick(db, config, clock, 3) == 1
    g = game(db, b[0].board or 0)
    assert (g.status, g.termination) == ("finished", "forfeit")


# ---------------------------------------------------------------- forfeits


def test_a_forfeit_ends_the_game_tells_both_and_rates_it(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    clock.now = at(1)
    move(site, board, "alice")
    start = last_id(db)
    assert tick(db, config, clock, 21.9) == 1  # the reminders of bob
    assert tick(db, config, clock, 22) == 1  # 21 days after alice's move
    g = game(db, board)
    assert (g.status, g.result, g.termination) == ("finished", "1-0", "forfeit")
    finals = [o for o in outbox(db, start) if not o.subject.startswith("Nag")]
    assert sorted(o.to_addr for o in finals) == [ALICE, BOB]
    for o in finals:
        assert o.subject == f"Accasta Board {board} - White wins"
        assert "bob did not move for 21 days" in o.body
        assert "alice (White) wins (forfeit). Result 1-0." in o.body
        assert "alice 1500 -> 1516 (+16), bob 1500 -> 1484 (-16)" in o.body
        assert o.reply_as == o.to_addr.partition("@")[0]  # a reply may still ask to show
    assert tick(db, config, clock, 40) == 0  # a finished board has no clock
    assert queries.standings(site)[0].player == "alice"


def test_a_forfeit_wins_over_a_reminder_due_at_the_same_tick(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    assert tick(db, config, clock, 30) == 1
    assert nags(db) == []
    assert game(db, board).result == "0-1"


# ---------------------------------------------------------------- vacations


def test_vacation_stops_the_reminder_and_the_forfeit(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    clock.now = at(1)
    [note] = vacation(site, "alice", 10)  # away from day 1 to day 11
    assert note.to == ALICE and "until 2025-03-12 12:00 UTC" in note.body
    assert "Vacation days left in 2025: 20 of 30" in flat(note.body)
    # Her clock ran 1 day before and runs again from day 11: 7 days at day 17.
    assert tick(db, config, clock, 16.9) == 0
    assert tick(db, config, clock, 17) == 1
    assert nags(db)[0].to_addr == ALICE
    assert tick(db, config, clock, 30.9) == 1  # the second reminder (14 days)
    assert game(db, board).status == "active"
    assert tick(db, config, clock, 31) == 1  # 21 days of running time
    assert game(db, board).termination == "forfeit"


def test_the_opponents_board_mail_says_who_is_away(
    db: Database, clock: Clock, site: Site, board: int
) -> None:
    clock.now = at(1)
    vacation(site, "bob", 5)
    move(site, board, "alice")  # bob to move, but away until day 6
    to_alice = outbox(db)[-2:]
    assert {o.to_addr for o in to_alice} == {ALICE, BOB}
    for o in to_alice:
        assert "bob is on vacation until 2025-03-07 12:00 UTC" in o.body
        # bob's 7 days run from day 6: the reminder is due on day 13.
        assert "Reminder:  2025-03-14 12:00 UTC" in o.body


def test_an_away_opponent_does_not_stop_the_players_clock(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    vacation(site, "bob", 20)
    assert tick(db, config, clock, 7) == 1
    assert nags(db)[0].to_addr == ALICE


def test_coming_back_early_restarts_the_clock_and_returns_days(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    clock.now = at(1)
    vacation(site, "alice", 10)
    clock.now = at(4.5)
    [note] = vacation(site, "alice", None)
    # 3.5 days away cost 3.5 days (84 hours): 26 days 12 hours of 30 are left.
    assert "It took 3 days 12 hours of your vacation days" in flat(note.body)
    assert "Vacation days left in 2025: 26 days 12 hours of 30" in flat(note.body)
    # Running time: 1 day, then from day 4.5: 7 days at day 10.5.
    assert tick(db, config, clock, 10.4) == 0
    assert tick(db, config, clock, 10.5) == 1
    assert "not on vacation" in refused(db, BadRequest, lambda: vacation(site, "alice", None))


def test_the_yearly_allowance_is_enforced_with_a_clear_refusal(
    db: Database, clock: Clock, site: Site
) -> None:
    vacation(site, "alice", 20)
    clock.now = at(5)
    vacation(site, "alice", None)  # 5 days used, 25 left
    clock.now = at(6)
    why = refused(db, NoVacationLeft, lambda: vacation(site, "alice", 26))
    assert why == (
        "You asked for 26 days of vacation, but only 25 of your 30 vacation days for 2025 "
        "are left. Ask for at most 25."
    )
    vacation(site, "alice", 25)
    clock.now = at(40)
    why = refused(db, NoVacationLeft, lambda: vacation(site, "alice", 1))
    assert why == (
        "You asked for 1 days of vacation, but only 0 of your 30 vacation days for 2025 are left."
    )
    # A new calendar year, a new allowance.
    clock.now = datetime(2026, 1, 1, 0, 0, tzinfo=UTC)
    assert "left in 2026: 0 of 30" in vacation(site, "alice", 30)[0].body


def test_a_vacation_called_off_costs_the_hours_it_lasted_not_a_day(
    db: Database, clock: Clock, site: Site
) -> None:
    """Issue 36, point 12: ``vacation alice PW 3``, then ``off`` a minute later, left "29 of
    30" days: a few minutes cost a whole day. Now a vacation costs the time it lasted,
    each hour begun counting whole; and the status says where the days went in words."""
    vacation(site, "alice", 3)
    clock.now = at(0) + timedelta(minutes=1)
    [back] = vacation(site, "alice", None)
    assert "It took 1 hour of your vacation days (each hour begun counts)" in flat(back.body)
    assert "Vacation days left in 2025: 29 days 23 hours of 30." in flat(back.body)
    # 29 whole days are still there to take; 30 are not.
    why = refused(db, NoVacationLeft, lambda: vacation(site, "alice", 30))
    assert why == (
        "You asked for 30 days of vacation, but only 29 days 23 hours of your 30 vacation "
        "days for 2025 are left. Ask for at most 29."
    )
    clock.now = at(1)
    [away] = vacation(site, "alice", 2)
    assert "Vacation days left in 2025: 27 days 23 hours of 30" in flat(away.body)
    [status] = unit.run(site, VacationStatus(), Who("alice", PW))
    assert flat(status.body).startswith(
        "alice: 27 days 23 hours of your 30 vacation days for 2025 are left. Taken so far: "
        "2 days 1 hour on vacation. Your clocks stand still until 2025-03-04 12:00 UTC. "
        "A vacation costs the hours it lasts, each hour begun counting whole."
    )
    assert "Of the others" not in status.body and " 0 " not in flat(status.body)


def test_a_new_vacation_while_away_replaces_the_current_one(
    db: Database, clock: Clock, site: Site
) -> None:
    vacation(site, "alice", 10)
    clock.now = at(2)
    note = vacation(site, "alice", 3)[0]
    assert "until 2025-03-06 12:00 UTC" in note.body and "left in 2025: 25 of 30" in note.body
    with db.transaction() as s:
        rows = s.exec(select(Vacation).order_by(col(Vacation.id))).all()
        assert [(v.starts_at, v.ends_at) for v in rows] == [(at(0), at(2)), (at(2), at(5))]


def test_vacation_refusals(db: Database, site: Site) -> None:
    refused(db, WrongPassword, lambda: vacation(site, "alice", 3, Password("nope")))
    # A reply address is good for its board's commands only, never for a vacation.
    refused(db, WrongPassword, lambda: vacation(site, "alice", 3, ByReply(1)))
    refused(db, BadRequest, lambda: vacation(site, "alice", 0))
    refused(db, NoVacationLeft, lambda: vacation(site, "alice", 31, ADMIN))


# ---------------------------------------------------------------- site pause


def test_paused_time_is_not_counted(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    clock.now = at(2)
    assert unit.run(site, PauseClocks()) == ()  # no mail: the players see it on their boards
    assert queries.clocks_paused_since(site) == at(2)
    shown = unit.run(site, Show(board, BOB), sender=BOB)[0].body
    assert "All clocks are stopped since 2025-03-03 12:00 UTC" in shown
    assert tick(db, config, clock, 30) == 0  # while paused, tick does nothing
    assert game(db, board).status == "active" and nags(db) == []
    clock.now = at(12)
    assert unit.run(site, ResumeClocks()) == ()
    assert queries.clocks_paused_since(site) is None
    with db.read() as s:
        (pause,) = s.exec(select(ClockPause)).all()
    assert pause.ended_at - pause.started_at == 10 * D
    # 2 days before the pause, then from day 12: 7 days at day 17, 21 at day 31.
    assert tick(db, config, clock, 16.9) == 0
    assert tick(db, config, clock, 17) == 1
    assert "Forfeit:   2025-04-01 12:00 UTC" in nags(db)[0].body
    assert tick(db, config, clock, 30.9) == 1
    assert tick(db, config, clock, 31) == 1
    assert game(db, board).termination == "forfeit"


def test_pause_and_resume_refusals(db: Database, clock: Clock, site: Site) -> None:
    assert "not stopped" in refused(db, BadRequest, lambda: unit.run(site, ResumeClocks()))
    unit.run(site, PauseClocks())
    why = refused(db, BadRequest, lambda: unit.run(site, PauseClocks()))
    assert why == "The clocks are already stopped since 2025-03-01 12:00 UTC."


# ---------------------------------------------------------------- the command line


@pytest.fixture
def cli(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    import os

    for name in list(os.environ):
        if name.startswith("PBM_"):
            monkeypatch.delenv(name)
    cfg = tmp_path / "pbm.toml"
    cfg.write_text(f'[database]\nurl = "{db_url}"\n[mail]\nsecret = "s"\n')
    assert "tick" in main.commands  # pbm.cli registers the clock commands itself
    group: click.Group = main

    def run(*args: str, ok: bool = True) -> Result:
        result = CliRunner().invoke(group, ["--config", str(cfg), *args])
        if ok:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    return run


def test_pbm_tick_with_now(db: Database, cli: Any, board: int) -> None:
    assert cli("tick", "--now", "2025-03-08T11:59").output.startswith("0 board(s) acted on")
    out = cli("tick", "--now", "2025-03-08T12:00:00+00:00").output
    assert out == "1 board(s) acted on at 2025-03-08 12:00 UTC\n"
    assert len(nags(db)) == 1
    bad = cli("tick", "--now", "next tuesday", ok=False)
    assert bad.exit_code == 2 and "ISO 8601" in bad.output


@pytest.mark.parametrize(
    "when", ["9999-12-20", "0001-01-01", "9999-12-31T23:59", "0001-01-01T00:00+01:00", "1999-12-31"]
)
def test_a_far_date_in_tick_logs_a_traceback_no_more(
    db: Database, cli: Any, board: int, when: str
) -> None:
    """Issue 35, case 14: ``pbm tick --now 0001-01-01`` ended in an OverflowError, and
    ``--now 9999-12-20`` took 76 s of CPU. A time outside the years pbm takes is refused
    as click refuses a bad parameter (exit status 2), in one line on stderr."""
    bad = cli("tick", "--now", when, ok=False)
    assert bad.exit_code == 2
    assert bad.stderr == (f"Error: --now {when!r}: pbm takes dates from 2000-01-01 to 2200-12-31\n")
    assert nags(db) == []
    # The edges are taken: the timers act once, whatever years lie between.
    assert cli("tick", "--now", "2200-12-31T23:59").output.startswith("1 board(s) acted on")
    assert cli("tick", "--now", "2000-01-01").output.startswith("0 board(s) acted on")


def test_pbm_clock_pause_resume(db: Database, config: Config, cli: Any, board: int) -> None:
    assert cli("clock", "pause", "--now", "2025-03-03T12:00").output == (
        "clocks stopped at 2025-03-03 12:00 UTC\n"
    )
    assert "stopped since 2025-03-03 12:00 UTC" in cli("clock", "status").output
    assert cli("tick", "--now", "2025-04-01T00:00").output.startswith("0 board(s)")
    again = cli("clock", "pause", ok=False)
    assert again.exit_code == 1 and "already stopped" in again.output
    out = cli("clock", "resume", "--now", "2025-03-13T12:00").output
    assert out == "clocks running again; 10 days, 0:00:00 not counted\n"
    assert cli("tick", "--now", "2025-03-18T11:00").output.startswith("0 board(s)")
    assert cli("tick", "--now", "2025-03-18T12:00").output.startswith("1 board(s)")


def test_pbm_player_vacation(db: Database, cli: Any, board: int) -> None:
    out = cli("player", "vacation", "alice", "10", "--now", "2025-03-01T12:00").output
    assert "alice is on vacation until 2025-03-11 12:00 UTC" in out
    assert cli("tick", "--now", "2025-03-08T12:00").output.startswith("0 board(s)")
    assert (
        "Welcome back"
        in cli("player", "vacation", "alice", "off", "--now", "2025-03-03T12:00").output
    )
    refusal = cli("player", "vacation", "alice", "29", "--now", "2025-03-04T12:00", ok=False)
    assert refusal.exit_code == 1 and "only 28 of your 30" in refusal.output
    assert cli("player", "vacation", "alice", "soon", ok=False).exit_code == 2


def test_mail_from_a_simulated_future_goes_out_at_once(
    db: Database, config: Config, board: int
) -> None:
    future = datetime(2999, 1, 1, tzinfo=UTC)
    before = datetime.now(UTC)
    assert run_tick(db, config, future) == 1
    finals = outbox(db)[-2:]
    assert all(o.created_at == future for o in finals)
    assert all(
        o.next_attempt_at is not None and before <= o.next_attempt_at < future for o in finals
    )


def test_pbm_game_create_with_a_time_control_then_pbm_tick_with_now(
    db: Database, cli: Any, site: Site
) -> None:
    """The admin's way to a board with a time bank, and ``pbm tick --now`` at its end: the
    player out of time spends a vacation day of his (the site's default) and plays on."""
    started = datetime.now(UTC)
    board = int(cli("game", "create", "accasta", "alice", "bob", "--time", "days 2").output)
    assert game(db, board).time_control == "days 2"
    bad = cli("game", "create", "accasta", "alice", "bob", "--time", "days 99", ok=False)
    assert bad.exit_code != 0 and "fischer 10d+36h max 10d" in bad.output
    late = (started + timedelta(days=2, minutes=1)).isoformat(timespec="seconds")
    assert cli("tick", "--now", late).output.startswith("1 board(s) acted on")
    assert game(db, board).status == "active"
    assert "a vacation day of his is spent" in flat(outbox(db)[-1].body)
    granted = cli("player", "vacation", "alice", "--grant", "3").output
    assert "3 vacation days more for" in granted and "were given to you" in granted
