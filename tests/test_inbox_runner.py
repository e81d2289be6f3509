"""The inbox runner in this process: waiting mails, one at a time, what each came to.

The end-to-end tests drive the runner through ``pbm serve``; here
``InboxRunner.run_once`` is called by hand on a real database (SQLite and
PostgreSQL), so that what it finds waiting is certain.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from email.message import EmailMessage
from email.policy import SMTP

import pytest
import sqlalchemy as sa
from conftest import Clock, accepted
from sqlmodel import col, select

import pbm.games
from pbm.config import Config
from pbm.runners.inbox_runner import LEASE, InboxRunner
from pbm.store import inbox as inbox_store
from pbm.store.engine import Database
from pbm.store.tables import InboxMessage, Move, OutboxMessage
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")
ALICE = "alice@example.org"
BOB = "bob@example.org"


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


def make_runner(
    db: Database, config: Config, clock: Clock, name: str = "test-runner"
) -> InboxRunner:
    return InboxRunner(Site(db, config, clock), name)


@pytest.fixture
def runner(db: Database, config: Config, clock: Clock, site: Site) -> InboxRunner:
    return make_runner(db, config, clock)


def run(runner: InboxRunner) -> int:
    """Work out every mail that waits; how many."""
    return asyncio.run(runner.run_once())


def command_mail(sender: str, text: str, message_id: str, **headers: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "pbm@example.org"
    msg["Subject"] = "commands"
    msg["Message-ID"] = message_id
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(text + "\n")
    return msg.as_bytes(policy=SMTP)


def deliver(db: Database, clock: Clock, sender: str, raw: bytes) -> None:
    """What the listener does before it answers 250."""
    with db.transaction() as s:
        inbox_store.add(s, [inbox_store.Received(raw, sender, ["pbm@example.org"])], clock())


def inbox(db: Database) -> list[tuple[str, str | None]]:
    with db.read() as s:
        rows = s.exec(select(InboxMessage).order_by(col(InboxMessage.id))).all()
        return [(r.status, r.note) for r in rows]


def inbox_rows(db: Database) -> list[InboxMessage]:
    with db.read() as s:
        rows = list(s.exec(select(InboxMessage).order_by(col(InboxMessage.id))).all())
        s.expunge_all()
        return rows


def errors_to(db: Database, address: str) -> int:
    with db.read() as s:
        return len(
            s.exec(
                select(OutboxMessage).where(
                    OutboxMessage.to_addr == address, col(OutboxMessage.is_error).is_(True)
                )
            ).all()
        )


def mails_to(db: Database, address: str) -> list[OutboxMessage]:
    with db.read() as s:
        rows = list(
            s.exec(
                select(OutboxMessage)
                .where(OutboxMessage.to_addr == address)
                .order_by(col(OutboxMessage.id))
            ).all()
        )
        s.expunge_all()
        return rows


def moves_on(db: Database, board: int) -> int:
    with db.read() as s:
        return int(
            s.exec(select(sa.func.count()).select_from(Move).where(Move.board == board)).one()
        )


def first_moves(count: int) -> list[str]:
    """The first legal move of each turn, from the start, ``count`` turns."""
    state = ACCASTA.new()
    played = []
    for _ in range(count):
        move = state.legal_moves()[0]
        state, _ = state.play(move)
        played.append(move)
    return played


def three_moves(db: Database, clock: Clock, board: int, bobs_password: str = "pw") -> None:
    """Alice, Bob and Alice again each send a move of the game's first three turns."""
    for n, (uid, move) in enumerate(zip(("alice", "bob", "alice"), first_moves(3), strict=True)):
        sender = f"{uid}@example.org"
        password = bobs_password if uid == "bob" else "pw"
        text = f"accasta move {board} {uid} {password} {move}"
        deliver(db, clock, sender, command_mail(sender, text, f"<{n + 1}@x>"))


# --- copies of one mail ------------------------------------------------------------------


def test_one_mail_twice_moves_once(
    db: Database, clock: Clock, board: int, runner: InboxRunner
) -> None:
    [move] = first_moves(1)
    raw = command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m1@x>")
    deliver(db, clock, ALICE, raw)
    deliver(db, clock, ALICE, raw)
    assert run(runner) == 2
    assert moves_on(db, board) == 1
    assert inbox(db) == [
        ("done", "1 of 1 command(s) carried out"),
        ("ignored", "duplicate of <m1@x>"),
    ]


@pytest.mark.parametrize(
    "text",
    ["accasta move {board} alice pw {move}", "accasta move {board} alice pw a1-a9"],
    ids=["move", "refused"],
)
def test_a_copy_is_marked_a_duplicate(
    db: Database, clock: Clock, board: int, runner: InboxRunner, text: str
) -> None:
    """The inbox says it was a duplicate, not that it did nothing."""
    [move] = first_moves(1)
    raw = command_mail(ALICE, text.format(board=board, move=move), "<m1@x>")
    deliver(db, clock, ALICE, raw)
    deliver(db, clock, ALICE, raw)
    assert run(runner) == 2
    assert inbox(db)[1] == ("ignored", "duplicate of <m1@x>")


def test_one_mail_twice_answers_once(
    db: Database, clock: Clock, board: int, runner: InboxRunner
) -> None:
    raw = command_mail(BOB, f"accasta show {board}", "<show@x>")
    before = len(mails_to(db, BOB))
    deliver(db, clock, BOB, raw)
    deliver(db, clock, BOB, raw)
    assert run(runner) == 2
    assert len(mails_to(db, BOB)) == before + 1


def test_one_refused_mail_twice_is_answered_once(
    db: Database, clock: Clock, board: int, runner: InboxRunner
) -> None:
    raw = command_mail(ALICE, f"accasta move {board} alice pw a1-a9", "<bad@x>")
    deliver(db, clock, ALICE, raw)
    deliver(db, clock, ALICE, raw)
    assert run(runner) == 2
    assert errors_to(db, ALICE) == 1
    assert moves_on(db, board) == 0
    assert [status for status, _ in inbox(db)] == ["done", "ignored"]


def test_a_mail_acted_on_before_is_ignored(
    db: Database, clock: Clock, board: int, runner: InboxRunner
) -> None:
    [move] = first_moves(1)
    raw = command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m2@x>")
    deliver(db, clock, ALICE, raw)
    assert run(runner) == 1
    other = command_mail(BOB, f"accasta moves {board}", "<m3@x>")
    deliver(db, clock, BOB, other)  # not a copy: answered
    deliver(db, clock, ALICE, raw)
    assert run(runner) == 2
    assert inbox(db) == [
        ("done", "1 of 1 command(s) carried out"),
        ("done", "1 of 1 command(s) carried out"),
        ("ignored", "duplicate of <m2@x>"),
    ]
    assert moves_on(db, board) == 1


# --- what the runner does with each mail ---------------------------------------------------


def test_each_mail_is_marked_with_the_runner(
    db: Database, clock: Clock, board: int, runner: InboxRunner
) -> None:
    deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<a@x>"))
    deliver(db, clock, BOB, command_mail(BOB, "Hello?", "<b@x>"))
    away = command_mail(BOB, "Out of office", "<c@x>", Auto_Submitted="auto-replied")
    deliver(db, clock, BOB, away)
    clock.advance(minutes=5)
    assert run(runner) == 3
    rows = inbox_rows(db)
    assert [r.status for r in rows] == ["done", "done", "ignored"]
    assert [r.note for r in rows] == [
        "1 of 1 command(s) carried out",
        "no command",
        "Auto-Submitted: auto-replied",
    ]
    assert [r.processed_by for r in rows] == ["test-runner"] * 3
    assert [r.processed_at for r in rows] == [clock.now] * 3
    assert [r.message_id for r in rows] == ["<a@x>", "<b@x>", "<c@x>"]
    assert run(runner) == 0  # nothing left


def test_moves_of_both_players_are_carried_out_in_order(
    db: Database, clock: Clock, board: int, runner: InboxRunner
) -> None:
    three_moves(db, clock, board)
    assert run(runner) == 3
    assert moves_on(db, board) == 3
    assert [note for _, note in inbox(db)] == ["1 of 1 command(s) carried out"] * 3
    assert errors_to(db, ALICE) == errors_to(db, BOB) == 0


def test_another_runner_does_not_take_a_finished_mail(
    db: Database, config: Config, clock: Clock, board: int, runner: InboxRunner
) -> None:
    [move] = first_moves(1)
    deliver(db, clock, ALICE, command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m@x>"))
    other = make_runner(db, config, clock, "other-runner")
    assert run(runner) == 1
    assert run(other) == 0
    assert [r.processed_by for r in inbox_rows(db)] == ["test-runner"]
    assert moves_on(db, board) == 1


def test_a_mail_another_runner_claimed_is_its_until_the_lease_runs_out(
    db: Database, config: Config, clock: Clock, board: int, runner: InboxRunner
) -> None:
    """A runner that died mid-mail leaves it claimed: taken over when the lease ends."""
    [move] = first_moves(1)
    deliver(db, clock, ALICE, command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m@x>"))
    dead = make_runner(db, config, clock, "dead-runner")
    assert dead.claim() is not None  # ... and it dies before working the mail out
    assert runner.claim() is None
    clock.advance(seconds=LEASE.total_seconds() + 1)
    assert run(runner) == 1
    assert moves_on(db, board) == 1
    assert [r.processed_by for r in inbox_rows(db)] == ["test-runner"]


# --- error replies per address and hour -------------------------------------------------------


def limited(db: Database, config: Config, clock: Clock, per_hour: int) -> InboxRunner:
    limits = replace(
        config.limits, error_replies_per_hour=per_hour, player_error_replies_per_hour=per_hour
    )
    return make_runner(db, replace(config, limits=limits), clock)


def bad_mails(db: Database, clock: Clock, sender: str, board: int, count: int, tag: str) -> None:
    """``count`` mistakes, each another (the same one again counts once)."""
    for n in range(count):
        text = f"accasta move {board} nobody{tag}{n} pw a1-b1"
        deliver(db, clock, sender, command_mail(sender, text, f"<{tag}{n}@x>"))


def test_error_replies_are_limited_per_address_and_hour(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    runner = limited(db, config, clock, per_hour=2)
    bad_mails(db, clock, ALICE, board, 4, "a")
    bad_mails(db, clock, BOB, board, 1, "b")
    assert run(runner) == 5
    assert errors_to(db, ALICE) == 2
    assert errors_to(db, BOB) == 1  # every address has its own allowance
    assert [status for status, _ in inbox(db)] == ["done"] * 5  # answered or not, done

    clock.advance(minutes=59)
    bad_mails(db, clock, ALICE, board, 1, "c")
    assert run(runner) == 1
    assert errors_to(db, ALICE) == 2  # still within the hour

    # Answers that are no errors are never held back.
    before = len(mails_to(db, ALICE))
    deliver(db, clock, ALICE, command_mail(ALICE, f"accasta show {board}", "<show@x>"))
    assert run(runner) == 1
    assert len(mails_to(db, ALICE)) == before + 1

    # Half an hour into the next clock hour, half of the last one's two still weigh
    # (the limit holds over any hour): room for one more error, not two.
    clock.advance(minutes=31)
    bad_mails(db, clock, ALICE, board, 3, "d")
    assert run(runner) == 3
    assert errors_to(db, ALICE) == 3


def test_error_limit_counts_addresses_case_insensitively(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    runner = limited(db, config, clock, per_hour=1)
    bad_mails(db, clock, ALICE, board, 1, "a")
    bad_mails(db, clock, "Alice@Example.org", board, 1, "b")
    assert run(runner) == 2
    with db.read() as s:
        errors = s.exec(select(OutboxMessage).where(col(OutboxMessage.is_error).is_(True))).all()
    assert len(errors) == 1


def test_a_runner_wakes_whom_its_mail_concerns(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    """The outbox runner has replies to send (and the computer a move perhaps) at once."""

    async def scenario() -> bool:
        sent = asyncio.Event()
        runner = InboxRunner(Site(db, config, clock), "test-runner", written=(sent,))
        deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<show@x>"))
        assert await runner.run_once() == 1
        await asyncio.sleep(0)  # the event is set from the runner's thread, through the loop
        return sent.is_set()

    assert asyncio.run(scenario())
