"""Digest mail (issue 41), on a real database (SQLite and PostgreSQL) with the timers
run by hand (``tick``, as ``pbm tick --now`` does): twenty boards make one mail at
08:00 Europe/Berlin, summer time or not; the board mails that can wait are left to it,
those that cannot still come at once."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Clock, accepted
from sqlmodel import col, select

from pbm.cli import main
from pbm.config import WebConfig
from pbm.refusals import BadRequest
from pbm.replies import MailKind, pictures_of
from pbm.runners.timer_runner import tick
from pbm.store.engine import Database
from pbm.store.tables import DigestPlan, OutboxMessage
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.digests import SetNotify
from pbm.usecases.moves import Move, Resign
from pbm.usecases.proposals import Undo
from pbm.usecases.site import Site

PW = Password("pw")
ALICE, BOB = "alice@example.org", "bob@example.org"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def mails_to(db: Database, address: str) -> list[OutboxMessage]:
    with db.transaction() as s:
        stmt = select(OutboxMessage).where(OutboxMessage.to_addr == address)
        return list(s.exec(stmt.order_by(col(OutboxMessage.id))).all())


def boards_waiting_for_alice(site: Site, clock: Clock, count: int) -> list[int]:
    """``count`` boards, bob (White) has moved on each, an hour apart: alice to move. His
    moves send her nothing: she reads a digest."""
    numbers = []
    for _ in range(count):
        board = accepted(
            site,
            Challenge("accasta", "bob", "alice", sender=BOB, nag_days=300, forfeit_days=400),
        )
        numbers.append(board)
    before, bob = len(mails_to(site.db, ALICE)), len(mails_to(site.db, BOB))
    for board in numbers:
        first = queries.board(site, board).state.example_move()
        assert first is not None
        unit.run(site, Move(board, first), Who("bob", PW))
        clock.advance(hours=1)
    assert len(mails_to(site.db, ALICE)) == before
    assert len(mails_to(site.db, BOB)) == bob + count  # bob reads each mail as it comes
    return numbers


def test_notify_chooses_a_digest_and_each_goes_back(db: Database, site: Site) -> None:
    [told] = unit.run(site, SetNotify("digest 08:00 Europe/Berlin"), Who("alice", PW))
    assert told.to == ALICE and told.subject == "pbm - notify"
    text = " ".join(told.body.split())
    assert "alice gets a digest at 08:00 Europe/Berlin time" in text
    assert "(the first comes on 2025-03-02 07:00 UTC)" in text  # 08:00 CET
    with db.transaction() as s:
        plan = s.get(DigestPlan, "alice")
        assert plan is not None and (plan.times, plan.zone) == ("08:00", "Europe/Berlin")
    unit.run(site, SetNotify("each"), Who("alice", PW))
    with db.transaction() as s:
        assert s.get(DigestPlan, "alice") is None
    # The admin sets it too (pbm player notify), and the player is told it was him.
    [by_admin] = unit.run(site, SetNotify("digest 07:30,19:30"), Who("alice", ADMIN))
    assert by_admin.kind is MailKind.NOTICE and "The site admin set it" in by_admin.body
    for bad in ("digest 25:00", "digest 08:00 Europe/Nowhere", "weekly"):
        with pytest.raises(BadRequest):
            unit.run(site, SetNotify(bad), Who("alice", PW))


@pytest.fixture
def pbm_tick(db_url: str, tmp_path: Path) -> Callable[[datetime], str]:
    """``pbm tick --now WHEN`` on the test's database; what it says."""
    cfg = tmp_path / "pbm.toml"
    cfg.write_text(f'[database]\nurl = "{db_url}"\n')

    def run(when: datetime) -> str:
        out = CliRunner().invoke(main, ["--config", str(cfg), "tick", "--now", when.isoformat()])
        assert out.exit_code == 0, out.output
        return out.output

    return run


def test_twenty_boards_make_one_mail_at_eight_in_berlin(
    db: Database, site: Site, clock: Clock, pbm_tick: Callable[[datetime], str]
) -> None:
    clock.now = at("2025-03-27 10:00")
    unit.run(site, SetNotify("digest 08:00 Europe/Berlin"), Who("alice", PW))
    boards = boards_waiting_for_alice(site, clock, 20)  # bob's moves send alice nothing
    n = len(mails_to(db, ALICE))
    pbm_tick(at("2025-03-28 06:59"))
    assert len(mails_to(db, ALICE)) == n
    assert pbm_tick(at("2025-03-28 07:00")).startswith("1 board")  # 08:00 CET
    [digest] = mails_to(db, ALICE)[n:]
    assert digest.kind == MailKind.DIGEST and digest.board is None
    assert digest.subject == "pbm - digest: 20 boards wait for your move"
    assert digest.reply_as == "alice" and (digest.reply_key or "").startswith("digest:")
    # Every board, the least time left first (bob moved first on the first board).
    order = [int(n) for n in re.findall(r"^== Accasta Board (\d+),", digest.body, re.M)]
    assert order == boards
    assert "Reply: 1: YOUR-MOVE" in digest.body and "bob played" in digest.body
    assert "left, time out" in digest.body
    # The HTML part shows each board as a picture (alice reads HTML).
    assert len(pictures_of(digest.picture)) == 20
    pbm_tick(at("2025-03-28 07:40"))  # once
    assert len(mails_to(db, ALICE)) == n + 1
    # Summer time begins on 30 March 2025: 08:00 in Berlin is 06:00 UTC from then.
    pbm_tick(at("2025-03-29 06:59"))
    assert len(mails_to(db, ALICE)) == n + 1
    pbm_tick(at("2025-03-29 07:00"))
    assert len(mails_to(db, ALICE)) == n + 2
    pbm_tick(at("2025-03-30 05:59"))
    assert len(mails_to(db, ALICE)) == n + 2
    pbm_tick(at("2025-03-30 06:00"))
    assert len(mails_to(db, ALICE)) == n + 3
    pbm_tick(at("2025-03-30 06:30"))
    assert len(mails_to(db, ALICE)) == n + 3


def test_and_back_from_summer_time(db: Database, site: Site, clock: Clock) -> None:
    clock.now = at("2025-10-24 10:00")
    unit.run(site, SetNotify("digest 08:00 Europe/Berlin"), Who("alice", PW))
    boards_waiting_for_alice(site, clock, 2)
    n = len(mails_to(db, ALICE))
    config = site.config
    tick(db, config, at("2025-10-25 06:00"))  # 08:00 CEST
    assert len(mails_to(db, ALICE)) == n + 1
    # Summer time ends on 26 October: 08:00 is 07:00 UTC again.
    tick(db, config, at("2025-10-26 06:00"))
    assert len(mails_to(db, ALICE)) == n + 1
    tick(db, config, at("2025-10-26 07:00"))
    assert len(mails_to(db, ALICE)) == n + 2


def test_no_board_waiting_no_mail(db: Database, site: Site, clock: Clock) -> None:
    unit.run(site, SetNotify("digest 08:00"), Who("alice", PW))
    tick(db, site.config, at("2025-03-02 08:00"))
    assert mails_to(db, ALICE)[-1].subject == "pbm - notify"
    with db.transaction() as s:  # the next is due a day later all the same
        plan = s.get(DigestPlan, "alice")
        assert plan is not None and plan.next_at == at("2025-03-03 08:00")


def test_what_cannot_wait_still_comes_at_once(db: Database, site: Site, clock: Clock) -> None:
    unit.run(site, SetNotify("digest 08:00"), Who("alice", PW))
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    first = queries.board(site, board).state.example_move()
    assert first is not None
    unit.run(site, Move(board, first), Who("alice", PW))
    before = len(mails_to(db, ALICE))
    # A challenge to her comes at once.
    unit.run(site, Challenge("accasta", "bob", "alice", sender=BOB))
    assert mails_to(db, ALICE)[-1].kind == MailKind.CHALLENGE
    # bob's move waits for her digest; his undo request does not.
    reply = queries.board(site, board).state.example_move()
    assert reply is not None
    unit.run(site, Move(board, reply), Who("bob", PW))
    assert len(mails_to(db, ALICE)) == before + 1
    unit.run(site, Undo(board), Who("bob", PW))
    assert "undo asked" in mails_to(db, ALICE)[-1].subject
    # The end of the game comes at once.
    unit.run(site, Resign(board), Who("bob", PW))
    assert "White wins" in mails_to(db, ALICE)[-1].subject


def test_a_reminder_at_an_hour_left_comes_at_once(db: Database, site: Site, clock: Clock) -> None:
    unit.run(site, SetNotify("digest 08:00"), Who("alice", PW))
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE, time="fischer 2d+1d"))
    start = clock.now

    def nags() -> list[OutboxMessage]:
        return [m for m in mails_to(db, ALICE) if m.subject.startswith("Nag:")]

    tick(db, site.config, start + timedelta(days=1, hours=1))  # a day left: can wait
    assert nags() == []
    tick(db, site.config, start + timedelta(days=1, hours=23, minutes=1))  # an hour left
    [nag] = nags()
    assert nag.subject.startswith(f"Nag: Accasta Board {board}") and nag.kind == MailKind.BOARD


def test_board_mails_to_a_digest_reader_name_his_calendar(db: Database, site: Site) -> None:
    config = replace(site.config, web=WebConfig(base_url="https://games.example.org"))
    here = replace(site, config=config)
    unit.run(here, SetNotify("digest 08:00"), Who("alice", PW))
    board = accepted(here, Challenge("accasta", "alice", "bob", sender=ALICE))
    first = queries.board(here, board).state.example_move()
    assert first is not None
    unit.run(here, Move(board, first), Who("alice", PW))
    mine = mails_to(db, ALICE)[-1]
    assert (
        "Your deadlines in a calendar: https://games.example.org/players/alice/"
        "deadlines.ics" in mine.body
    )
    assert "deadlines.ics" not in mails_to(db, BOB)[-1].body  # bob reads each mail


def test_the_admin_sets_it_from_the_command_line(
    db: Database, site: Site, db_url: str, tmp_path: Path
) -> None:
    cfg = tmp_path / "pbm.toml"
    cfg.write_text(f'[database]\nurl = "{db_url}"\n')
    args = ["--config", str(cfg), "player", "notify", "alice", "digest", "07:30", "Asia/Tokyo"]
    out = CliRunner().invoke(main, [*args, "--now", "2025-03-01T12:00:00"])
    assert out.exit_code == 0 and out.output == "player alice: digest 07:30 Asia/Tokyo\n"
    with db.transaction() as s:
        plan = s.get(DigestPlan, "alice")
        assert plan is not None and plan.next_at == at("2025-03-01 22:30")  # 07:30 in Tokyo
    bad = CliRunner().invoke(main, ["--config", str(cfg), "player", "notify", "alice", "digest"])
    assert bad.exit_code == 1 and "A digest needs a time of day" in bad.output
    back = CliRunner().invoke(main, ["--config", str(cfg), "player", "notify", "alice", "each"])
    assert back.exit_code == 0
    with db.transaction() as s:
        assert s.get(DigestPlan, "alice") is None
