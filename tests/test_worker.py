"""The inbox worker in this process: waiting mails, one batch, what each came to.

The end-to-end tests drive the worker through ``pbm serve``; here
``InboxWorker.run_batch`` is called by hand on a real database (SQLite and
PostgreSQL), so that what one batch holds is certain.
"""

from __future__ import annotations

import asyncio
import email
import threading
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from email.message import EmailMessage
from email.policy import SMTP, default
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import Clock, accepted
from sqlmodel import col, select

import pbm.games
import pbm.usecases.auth
from pbm.config import Config
from pbm.mail import pictures
from pbm.mail.message import build_message
from pbm.mail.transports import MaildirTransport
from pbm.replies import Picture
from pbm.runners import worker as worker_mod
from pbm.runners.sender import OutboxSender
from pbm.runners.worker import InboxWorker
from pbm.store import inbox as inbox_store
from pbm.store.engine import Database
from pbm.store.tables import InboxMessage, Move, OutboxMessage
from pbm.usecases import unit
from pbm.usecases.accounts import ChangePassword
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")
ALICE = "alice@example.org"
BOB = "bob@example.org"


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


@pytest.fixture(autouse=True)
def time_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """Time enough for every waiting mail to be in one batch, on a slow machine too: a
    pause of the test process (a garbage collection late in a long suite, say) must not
    split a batch whose writing is allowed 0.2 s."""
    monkeypatch.setattr(worker_mod, "PREPARE_SECONDS", 60.0)
    monkeypatch.setattr(worker_mod, "WRITE_SECONDS", 60.0)


def make_worker(db: Database, config: Config, clock: Clock) -> InboxWorker:
    return InboxWorker(db, config, "test-worker", clock=clock)


@pytest.fixture
def worker(db: Database, config: Config, clock: Clock, site: Site) -> InboxWorker:
    return make_worker(db, config, clock)


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


def test_one_mail_twice_in_one_batch_moves_once(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    [move] = first_moves(1)
    raw = command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m1@x>")
    deliver(db, clock, ALICE, raw)
    deliver(db, clock, ALICE, raw)
    assert worker.run_batch().done == 2
    assert moves_on(db, board) == 1
    assert inbox(db)[0] == ("done", "1 of 1 command(s) carried out")
    assert inbox(db)[1][0] != "new"  # finished too, acting no more


@pytest.mark.parametrize(
    "text",
    ["accasta move {board} alice pw {move}", "accasta move {board} alice pw a1-a9"],
    ids=["move", "refused"],
)
def test_a_copy_in_the_same_batch_is_marked_a_duplicate(
    db: Database, clock: Clock, board: int, worker: InboxWorker, text: str
) -> None:
    """As a copy in a later batch is: the inbox says it was a duplicate, not that it did nothing."""
    [move] = first_moves(1)
    raw = command_mail(ALICE, text.format(board=board, move=move), "<m1@x>")
    deliver(db, clock, ALICE, raw)
    deliver(db, clock, ALICE, raw)
    assert worker.run_batch().done == 2
    assert inbox(db)[1] == ("ignored", "duplicate of <m1@x>")


def test_one_mail_twice_in_one_batch_answers_once(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    raw = command_mail(BOB, f"accasta show {board}", "<show@x>")
    before = len(mails_to(db, BOB))
    deliver(db, clock, BOB, raw)
    deliver(db, clock, BOB, raw)
    assert worker.run_batch().done == 2
    assert len(mails_to(db, BOB)) == before + 1


def test_one_refused_mail_twice_in_one_batch_is_answered_once(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    raw = command_mail(ALICE, f"accasta move {board} alice pw a1-a9", "<bad@x>")
    deliver(db, clock, ALICE, raw)
    deliver(db, clock, ALICE, raw)
    assert worker.run_batch().done == 2
    assert errors_to(db, ALICE) == 1
    assert moves_on(db, board) == 0
    assert [status for status, _ in inbox(db)] in (["done", "done"], ["done", "ignored"])


def test_a_mail_acted_on_in_an_earlier_batch_is_ignored(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    [move] = first_moves(1)
    raw = command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m2@x>")
    deliver(db, clock, ALICE, raw)
    assert worker.run_batch().done == 1
    other = command_mail(BOB, f"accasta moves {board}", "<m3@x>")
    deliver(db, clock, BOB, other)  # not a copy: answered
    deliver(db, clock, ALICE, raw)
    assert worker.run_batch().done == 2
    assert inbox(db) == [
        ("done", "1 of 1 command(s) carried out"),
        ("done", "1 of 1 command(s) carried out"),
        ("ignored", "duplicate of <m2@x>"),
    ]
    assert moves_on(db, board) == 1


# --- what a batch does ----------------------------------------------------------------------


def test_a_batchs_mails_are_marked_with_the_worker(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<a@x>"))
    deliver(db, clock, BOB, command_mail(BOB, "Hello?", "<b@x>"))
    away = command_mail(BOB, "Out of office", "<c@x>", Auto_Submitted="auto-replied")
    deliver(db, clock, BOB, away)
    clock.advance(minutes=5)
    assert worker.run_batch().done == 3
    rows = inbox_rows(db)
    assert [r.status for r in rows] == ["done", "done", "ignored"]
    assert [r.note for r in rows] == [
        "1 of 1 command(s) carried out",
        "no command",
        "Auto-Submitted: auto-replied",
    ]
    assert [r.processed_by for r in rows] == ["test-worker"] * 3
    assert [r.processed_at for r in rows] == [clock.now] * 3
    assert [r.message_id for r in rows] == ["<a@x>", "<b@x>", "<c@x>"]
    assert worker.run_batch().done == 0  # nothing left


def test_moves_of_both_players_in_one_batch_are_carried_out_in_order(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    """Bob's move was decided before Alice's was written: it is decided again, and played."""
    first, second, third = first_moves(3)
    deliver(
        db, clock, ALICE, command_mail(ALICE, f"accasta move {board} alice pw {first}", "<1@x>")
    )
    deliver(db, clock, BOB, command_mail(BOB, f"accasta move {board} bob pw {second}", "<2@x>"))
    deliver(
        db, clock, ALICE, command_mail(ALICE, f"accasta move {board} alice pw {third}", "<3@x>")
    )
    assert worker.run_batch().done == 3
    assert moves_on(db, board) == 3
    assert [note for _, note in inbox(db)] == ["1 of 1 command(s) carried out"] * 3
    assert errors_to(db, ALICE) == errors_to(db, BOB) == 0


def test_a_mail_whose_password_is_still_being_checked_waits_with_the_mails_after_it(
    db: Database, clock: Clock, board: int, worker: InboxWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's password check has not ended: the batch carries out Alice's first move,
    holds Bob's and Alice's second (order is kept), and the next batch does both."""
    # Not long to wait for the checks after the first mail's (nor to decide: ample for two).
    monkeypatch.setattr(worker_mod, "PREPARE_SECONDS", 0.2)
    bobs_check = threading.Event()
    real = pbm.usecases.auth.verify_password

    def slow_for_bob(password: str, stored: str) -> bool:
        if password == "bobs-pw":
            bobs_check.wait(30)
        return real(password, stored)

    monkeypatch.setattr(pbm.usecases.auth, "verify_password", slow_for_bob)
    unit.run(worker.site, ChangePassword("bobs-pw"), Who("bob", Password("pw")))
    three_moves(db, clock, board, bobs_password="bobs-pw")
    assert worker.run_batch().done == 1
    assert moves_on(db, board) == 1
    assert [status for status, _ in inbox(db)] == ["done", "new", "new"]
    bobs_check.set()
    assert worker.run_batch().done == 2
    assert moves_on(db, board) == 3
    assert [note for _, note in inbox(db)] == ["1 of 1 command(s) carried out"] * 3
    assert errors_to(db, ALICE) == errors_to(db, BOB) == 0


def test_mail_that_comes_while_a_password_is_checked_has_its_check_begun_at_once(
    db: Database, clock: Clock, board: int, worker: InboxWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alice's password is being checked when Bob's mail comes: the batch looks in
    again meanwhile, so Bob's check begins before Alice's ends, and both go together."""
    unit.run(worker.site, ChangePassword("bobs-pw"), Who("bob", Password("pw")))
    alices_begun, alices_end, bobs_begun = threading.Event(), threading.Event(), threading.Event()
    real = pbm.usecases.auth.verify_password

    def watched(password: str, stored: str) -> bool:
        if password == "pw":
            alices_begun.set()
            alices_end.wait(30)
        else:
            bobs_begun.set()
        return real(password, stored)

    monkeypatch.setattr(pbm.usecases.auth, "verify_password", watched)
    alices, bobs = first_moves(2)
    deliver(
        db, clock, ALICE, command_mail(ALICE, f"accasta move {board} alice pw {alices}", "<a@x>")
    )
    batches: list[worker_mod.Batch] = []
    running = threading.Thread(target=lambda: batches.append(worker.run_batch()))
    running.start()
    try:
        assert alices_begun.wait(30)
        text = f"accasta move {board} bob bobs-pw {bobs}"
        deliver(db, clock, BOB, command_mail(BOB, text, "<b@x>"))
        assert bobs_begun.wait(30), "Bob's check waited for Alice's"
        assert not alices_end.is_set()
    finally:
        alices_end.set()
        running.join(30)
    assert [b.done for b in batches] == [2]
    assert moves_on(db, board) == 2
    assert errors_to(db, ALICE) == errors_to(db, BOB) == 0


def test_mails_left_over_by_the_time_budget_wait_for_the_next_batch(
    db: Database,
    clock: Clock,
    board: int,
    worker: InboxWorker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No time at all to work mails out: each batch takes the first mail only.
    monkeypatch.setattr(worker_mod, "PREPARE_SECONDS", -1.0)
    three_moves(db, clock, board)
    assert worker.run_batch().done == 1
    rows = inbox_rows(db)
    assert [r.status for r in rows] == ["done", "new", "new"]
    assert [r.processed_by for r in rows] == ["test-worker", None, None]
    assert [r.processed_at for r in rows][1:] == [None, None]
    assert moves_on(db, board) == 1
    assert worker.run_batch().done == 1
    assert [r.status for r in inbox_rows(db)] == ["done", "done", "new"]
    assert worker.run_batch().done == 1
    assert worker.run_batch().done == 0
    assert [r.status for r in inbox_rows(db)] == ["done"] * 3
    assert moves_on(db, board) == 3  # each in its turn
    assert errors_to(db, ALICE) == errors_to(db, BOB) == 0


def test_another_worker_does_not_take_a_finished_mail(
    db: Database, config: Config, clock: Clock, board: int, worker: InboxWorker
) -> None:
    [move] = first_moves(1)
    deliver(db, clock, ALICE, command_mail(ALICE, f"accasta move {board} alice pw {move}", "<m@x>"))
    other = InboxWorker(db, config, "other-worker", clock=clock)
    assert worker.run_batch().done == 1
    assert other.run_batch().done == 0
    assert [r.processed_by for r in inbox_rows(db)] == ["test-worker"]
    assert moves_on(db, board) == 1


# --- error replies per address and hour -------------------------------------------------------


def limited(db: Database, config: Config, clock: Clock, per_hour: int) -> InboxWorker:
    limits = replace(
        config.limits, error_replies_per_hour=per_hour, player_error_replies_per_hour=per_hour
    )
    config = replace(config, limits=limits)
    return make_worker(db, config, clock)


def bad_mails(db: Database, clock: Clock, sender: str, board: int, count: int, tag: str) -> None:
    """``count`` mistakes, each another (the same one again counts once)."""
    for n in range(count):
        text = f"accasta move {board} nobody{tag}{n} pw a1-b1"
        deliver(db, clock, sender, command_mail(sender, text, f"<{tag}{n}@x>"))


def test_error_replies_are_limited_per_address_and_hour(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    worker = limited(db, config, clock, per_hour=2)
    bad_mails(db, clock, ALICE, board, 4, "a")
    bad_mails(db, clock, BOB, board, 1, "b")
    assert worker.run_batch().done == 5
    assert errors_to(db, ALICE) == 2  # within one batch too
    assert errors_to(db, BOB) == 1  # every address has its own allowance
    assert [status for status, _ in inbox(db)] == ["done"] * 5  # answered or not, done

    clock.advance(minutes=59)
    bad_mails(db, clock, ALICE, board, 1, "c")
    assert worker.run_batch().done == 1
    assert errors_to(db, ALICE) == 2  # still within the hour

    # Answers that are no errors are never held back.
    before = len(mails_to(db, ALICE))
    deliver(db, clock, ALICE, command_mail(ALICE, f"accasta show {board}", "<show@x>"))
    assert worker.run_batch().done == 1
    assert len(mails_to(db, ALICE)) == before + 1

    # Half an hour into the next clock hour, half of the last one's two still weigh
    # (the limit holds over any hour): room for one more error, not two.
    clock.advance(minutes=31)
    bad_mails(db, clock, ALICE, board, 3, "d")
    assert worker.run_batch().done == 3
    assert errors_to(db, ALICE) == 3


def test_error_limit_counts_addresses_case_insensitively(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    worker = limited(db, config, clock, per_hour=1)
    bad_mails(db, clock, ALICE, board, 1, "a")
    bad_mails(db, clock, "Alice@Example.org", board, 1, "b")
    assert worker.run_batch().done == 2
    with db.read() as s:
        errors = s.exec(select(OutboxMessage).where(col(OutboxMessage.is_error).is_(True))).all()
    assert len(errors) == 1


# --- replies handed to this server's sender ---------------------------------------------------


def test_a_batchs_replies_are_claimed_for_this_servers_sender(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    before = {row.id for row in mails_to(db, BOB)}
    worker = InboxWorker(db, config, "server-1", clock=clock, hand_over_replies=True)
    deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<show@x>"))
    batch = worker.run_batch()
    assert batch.done == 1
    (handed,) = batch.replies
    assert not batch.unclaimed
    (row,) = [row for row in mails_to(db, BOB) if row.id not in before]
    assert handed.id == row.id
    assert (handed.to_addr, handed.in_reply_to) == (BOB, "<show@x>")
    assert row.claimed_by == "server-1"
    assert row.claimed_until == clock.now + worker_mod.HANDOVER_LEASE


def test_the_worker_draws_the_pictures_the_sender_puts_in_its_mails(
    db: Database, config: Config, clock: Clock, board: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board picture of a handed reply is drawn in the worker (beside the server's
    loop), and the sender's mail carries that drawing: it does not draw it again."""
    monkeypatch.setattr(pictures, "_GIVEN", {})  # this test's drawings, no other's
    worker = InboxWorker(db, config, "server-1", clock=clock, hand_over_replies=True)
    deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<show@x>"))
    batch = worker.run_batch()
    (handed,) = batch.replies
    assert handed.picture is not None and set(batch.pictures) == {handed.picture}
    drawn = batch.pictures[handed.picture]
    shown = Picture.from_json(handed.picture)
    assert drawn.startswith(b"\x89PNG") and drawn == pictures.png(shown)
    # What the server's sender is given is what goes out: another seat's drawing,
    # handed in its place, is the one the mail carries.
    other = pictures.png(replace(shown, seat=1 - shown.seat))
    pictures.keep({handed.picture: other})
    message = email.message_from_bytes(build_message(handed, config), policy=default)
    (image,) = [p for p in message.walk() if p.get_content_type() == "image/png"]
    assert image.get_payload(decode=True) == other != drawn


@pytest.mark.parametrize("comes", [True, False])
def test_a_mail_whose_picture_is_drawn_elsewhere_waits_for_it(
    db: Database,
    config: Config,
    clock: Clock,
    board: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    comes: bool,
) -> None:
    """A worker process hands its replies over before their pictures are drawn, and draws
    them next (``WorkerProcesses``): the sender sends a mail once its picture has come,
    with that drawing; one that never comes (the process died) it draws itself."""
    monkeypatch.setattr(pictures, "_GIVEN", {})
    worker = InboxWorker(
        db, config, "server-1", clock=clock, hand_over_replies=True, draws_pictures=False
    )
    deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<show@x>"))
    batch = worker.run_batch()
    (handed,) = batch.replies
    assert handed.picture is not None and not batch.pictures
    shown = Picture.from_json(handed.picture)
    other = pictures.png(replace(shown, seat=1 - shown.seat))  # told apart from its own
    maildir = tmp_path / "outbox"
    sender = OutboxSender(db, config, MaildirTransport(maildir), clock, worker="server-1")

    async def scenario() -> int:
        pngs: asyncio.Future[dict[str, bytes]] = asyncio.get_running_loop().create_future()
        sending = sender.hand_over(batch.replies, [((handed.picture,), pngs)])
        for _ in range(50):  # the loop goes round: the mail waits, nothing is sent
            await asyncio.sleep(0)
        assert not sending.done() and not list((maildir / "new").glob("*"))
        if comes:
            pngs.set_result({handed.picture: other})
        else:
            pngs.set_exception(BrokenProcessPool("the worker process died"))
        return await sending

    assert asyncio.run(scenario()) == 1
    (sent,) = (maildir / "new").glob("*")
    message = email.message_from_bytes(sent.read_bytes(), policy=default)
    (image,) = [p for p in message.walk() if p.get_content_type() == "image/png"]
    assert image.get_payload(decode=True) == (other if comes else pictures.png(shown))


def test_without_hand_over_the_sender_finds_the_replies_itself(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    deliver(db, clock, BOB, command_mail(BOB, f"accasta show {board}", "<show@x>"))
    batch = worker.run_batch()
    assert (batch.done, batch.replies, batch.unclaimed) == (1, [], True)
    assert all(row.claimed_by is None for row in mails_to(db, BOB))
