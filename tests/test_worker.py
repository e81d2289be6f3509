"""The inbox worker in this process: waiting mails, one batch, what each came to.

The end-to-end tests drive the worker through ``pbm serve``; here the batch
is run by hand, so that what one batch holds is certain.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.policy import SMTP

import pytest
import sqlalchemy as sa
from conftest import Clock
from sqlmodel import col, select

import pbm.games
from pbm import store
from pbm.config import Config
from pbm.mail import worker as worker_mod
from pbm.mail.worker import InboxWorker
from pbm.service import Service
from pbm.store import Database, InboxMessage, Move, OutboxMessage

ACCASTA = pbm.games.get("accasta")


@pytest.fixture
def board(svc: Service) -> int:
    b = svc.challenge("accasta", "alice", "bob", sender="alice@example.org")[0].board
    assert b is not None
    return b


@pytest.fixture
def worker(
    db: Database, config: Config, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> InboxWorker:
    # Time enough for every waiting mail to be in one batch, on a slow machine too.
    monkeypatch.setattr(worker_mod, "PREPARE_SECONDS", 60.0)
    monkeypatch.setattr(worker_mod, "BATCH_SECONDS", 60.0)
    return InboxWorker(db, config, "test-worker", clock=clock)


def command_mail(sender: str, text: str, message_id: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "pbm@example.org"
    msg["Subject"] = "commands"
    msg["Message-ID"] = message_id
    msg.set_content(text + "\n")
    return msg.as_bytes(policy=SMTP)


def deliver(db: Database, clock: Clock, sender: str, raw: bytes) -> None:
    with db.transaction() as s:
        store.add_inbox(s, raw, sender, ["pbm@example.org"], None, clock())


def inbox(db: Database) -> list[tuple[str, str]]:
    with db.read() as s:
        rows = s.exec(select(InboxMessage).order_by(col(InboxMessage.id))).all()
        return [(r.status, r.note) for r in rows]


def errors_to(db: Database, address: str) -> int:
    with db.read() as s:
        return len(
            s.exec(
                select(OutboxMessage).where(
                    OutboxMessage.to_addr == address, col(OutboxMessage.is_error).is_(True)
                )
            ).all()
        )


def moves_on(db: Database, board: int) -> int:
    with db.read() as s:
        return int(
            s.exec(select(sa.func.count()).select_from(Move).where(Move.board == board)).one()
        )


def test_one_mail_twice_in_one_batch_moves_once(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    move = ACCASTA.new().legal_moves()[0]
    raw = command_mail("alice@example.org", f"accasta move {board} alice pw {move}", "<m1@x>")
    deliver(db, clock, "alice@example.org", raw)
    deliver(db, clock, "alice@example.org", raw)
    assert worker.run_batch().done == 2
    assert moves_on(db, board) == 1
    assert inbox(db) == [
        ("done", "1 of 1 command(s) carried out"),
        ("ignored", "duplicate of <m1@x>"),
    ]


def test_one_refused_mail_twice_in_one_batch_is_answered_once(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    raw = command_mail("alice@example.org", f"accasta move {board} alice pw a1-a9", "<bad@x>")
    deliver(db, clock, "alice@example.org", raw)
    deliver(db, clock, "alice@example.org", raw)
    assert worker.run_batch().done == 2
    assert errors_to(db, "alice@example.org") == 1
    assert inbox(db)[1] == ("ignored", "duplicate of <bad@x>")
    assert moves_on(db, board) == 0


def test_a_mail_acted_on_in_an_earlier_batch_is_ignored(
    db: Database, clock: Clock, board: int, worker: InboxWorker
) -> None:
    move = ACCASTA.new().legal_moves()[0]
    raw = command_mail("alice@example.org", f"accasta move {board} alice pw {move}", "<m2@x>")
    deliver(db, clock, "alice@example.org", raw)
    assert worker.run_batch().done == 1
    other = command_mail("bob@example.org", f"accasta moves {board}", "<m3@x>")
    deliver(db, clock, "bob@example.org", other)  # not a copy: answered
    deliver(db, clock, "alice@example.org", raw)
    assert worker.run_batch().done == 2
    assert [status for status, _ in inbox(db)] == ["done", "done", "ignored"]
    assert moves_on(db, board) == 1
