"""No single mail stops the queue: control characters are cleaned where mail enters, and a
mail whose working out fails is set aside after ``server.mail_attempts``.

On SQLite and PostgreSQL (where a NUL in a text field once stopped every
runner), through the real inbox runner; the fault of the last tests is a real
one of the database (a trigger that refuses a row), not a mock of our code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import Clock, accepted
from test_cli_admin import Cli, empty_config
from test_inbox_runner import deliver, first_moves, inbox, mails_to, make_runner, moves_on, run

from pbm.config import Config
from pbm.mail.controls import strip_controls
from pbm.store.engine import Database
from pbm.store.tables import OutboxMessage
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

# Every C0 control, DEL, every C1 control, and the bidi embeddings, overrides and isolates.
CONTROLS = [
    *(chr(c) for c in range(0x20)),
    "\x7f",
    *(chr(c) for c in range(0x80, 0xA0)),
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
]
ALLOWED = {"\n"}  # what may stay in a body we write


def hostile(c: str, n: int) -> bytes:
    """A mail with ``c`` in every field a sender fills, written as raw bytes: the From name,
    the subject (a command), the Message-ID, In-Reply-To, References, another header and
    the body (a command line and text)."""
    text = (
        f'From: "Zed{c}Name" <zed{n}@example.org>\r\n'
        "To: pbm@example.org\r\n"
        f"Subject: signup zed{n}{c} pw{c}x\r\n"
        f"Message-ID: <m{n}{c}@example.org>\r\n"
        f"In-Reply-To: <r{n}{c}@example.org>\r\n"
        f"References: <a{c}@x> <b{n}@x>\r\n"
        f"X-Note: a{c}b\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n"
        "\r\n"
        f"Hello{c} there\r\nhelp accasta{c}\r\n"
    )
    return text.encode("utf-8")


def waiting(db: Database) -> int:
    return sum(1 for status, _ in inbox(db) if status == "new")


def all_outbox(db: Database) -> list[OutboxMessage]:
    with db.read() as s:
        rows = list(s.exec(sa.select(OutboxMessage)).scalars())  # type: ignore[call-overload]
        s.expunge_all()
        return rows


def test_strip_controls_keeps_line_breaks_and_text() -> None:
    assert strip_controls("a\x00b\r\nc\u202ed\te\x07") == "ab\ncd e"
    assert strip_controls("ünïcödé ♞ 棋") == "ünïcödé ♞ 棋"


def test_every_control_in_every_field_is_answered_and_blocks_nothing(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    """One mail per control character, then a plain move: every mail is acted on, no reply
    carries a control, and the move after them is played."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender="alice@example.org"))
    for n, c in enumerate(CONTROLS):
        deliver(db, clock, f"zed{n}@example.org", hostile(c, n))
    [move] = first_moves(1)
    msg = EmailMessage()
    msg["From"] = "alice@example.org"
    msg["To"] = "pbm@example.org"
    msg["Subject"] = f"accasta move {board} alice pw {move}"
    msg["Message-ID"] = "<move@x>"
    msg.set_content("after the controls\n")
    deliver(db, clock, "alice@example.org", msg.as_bytes(policy=SMTP))
    run(make_runner(db, config, clock))
    statuses = [status for status, _ in inbox(db)]
    assert "new" not in statuses and "failed" not in statuses, inbox(db)
    assert moves_on(db, board) == 1
    rows = all_outbox(db)
    answered = {row.to_addr for row in rows}
    # A bare CR or LF ends the From line inside its quoted name: what is left of it does
    # not parse cleanly, so that mail gets no answer (issue 35, case 15), and says why.
    breaks = {n for n, c in enumerate(CONTROLS) if c in "\r\n"}
    assert all(f"zed{n}@example.org" in answered for n in range(len(CONTROLS)) if n not in breaks)
    assert not any(f"zed{n}@example.org" in answered for n in breaks)
    notes = [note or "" for status, note in inbox(db) if status == "ignored"]
    assert len(notes) == 2 and all("the From header does not parse cleanly" in n for n in notes)
    for row in rows:
        for text in (row.subject, row.body, row.to_addr, row.in_reply_to or ""):
            bad = {c for c in text if c in CONTROLS and c not in ALLOWED}
            assert not bad, (row.subject, text)


def test_a_chat_with_controls_reaches_the_opponent_clean(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender="alice@example.org"))
    msg = EmailMessage()
    msg["From"] = "alice@example.org"
    msg["To"] = "pbm@example.org"
    msg["Subject"] = "chat"
    msg["Message-ID"] = "<chat@x>"
    msg.set_content(f"accasta chat {board} alice pw\nhi\x00 \u202egnp.exe\u202c bob\x07 \x1b[31m\n")
    deliver(db, clock, "alice@example.org", msg.as_bytes(policy=SMTP))
    run(make_runner(db, config, clock))
    [chat] = [m for m in mails_to(db, "bob@example.org") if "gnp.exe" in m.body]
    assert "hi gnp.exe bob [31m" in chat.body
    assert not any(c in chat.body for c in CONTROLS if c not in ALLOWED)


# --- a mail whose working out fails --------------------------------------------------------


def refuse_outbox_rows_saying(db: Database, word: str) -> None:
    """A real database fault that one mail causes: its reply cannot be written."""
    with db.transaction() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(
                sa.text(
                    "CREATE OR REPLACE FUNCTION refuse_poison() RETURNS trigger AS $$ BEGIN "
                    f"IF NEW.body LIKE '%{word}%' THEN RAISE EXCEPTION 'refused: {word}'; END IF; "
                    "RETURN NEW; END $$ LANGUAGE plpgsql"
                )
            )
            s.execute(sa.text("DROP TRIGGER IF EXISTS poison ON outbox"))
            s.execute(
                sa.text(
                    "CREATE TRIGGER poison BEFORE INSERT ON outbox FOR EACH ROW "
                    "EXECUTE FUNCTION refuse_poison()"
                )
            )
        else:
            s.execute(
                sa.text(
                    "CREATE TRIGGER poison BEFORE INSERT ON outbox "
                    f"WHEN NEW.body LIKE '%{word}%' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )


@pytest.fixture
def no_trigger(db: Database) -> Iterator[None]:
    yield None
    with db.transaction() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(sa.text("DROP TRIGGER IF EXISTS poison ON outbox"))


def plain(sender: str, subject: str, mid: str, body: str = "hello") -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "pbm@example.org"
    msg["Subject"] = subject
    msg["Message-ID"] = mid
    msg.set_content(body + "\n")
    return msg.as_bytes(policy=SMTP)


def test_a_mail_that_always_fails_is_set_aside_and_the_rest_goes_on(
    db: Database,
    db_url: str,
    config: Config,
    clock: Clock,
    site: Site,
    no_trigger: None,
    tmp_path: Path,
) -> None:
    refuse_outbox_rows_saying(db, "POISONWORD")
    deliver(db, clock, "a@example.org", plain("a@example.org", "help", "<1@x>"))
    deliver(db, clock, "p@example.org", plain("p@example.org", "signup POISONWORD pw", "<2@x>"))
    deliver(db, clock, "b@example.org", plain("b@example.org", "help", "<3@x>"))
    run(make_runner(db, config, clock))
    statuses = inbox(db)
    assert [s for s, _ in statuses] == ["done", "failed", "done"], statuses
    assert "set aside after 3 failed attempts" in (statuses[1][1] or "")
    assert mails_to(db, "a@example.org") and mails_to(db, "b@example.org")
    # The admin sees it: pbm status says so and fails; pbm inbox list shows it.
    cli = Cli(empty_config(tmp_path), db_url)
    result = cli("status", "--json", "--now", clock().isoformat(), ok=False)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["set_aside_recently"] == 1
    assert any("set aside" in p for p in data["problems"])
    assert "p@example.org" in cli("inbox", "list", "--status", "failed").output
    # Taken back once the fault is mended, it is acted on.
    with db.transaction() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(sa.text("DROP TRIGGER poison ON outbox"))
        else:
            s.execute(sa.text("DROP TRIGGER poison"))
    cli("inbox", "retry", "2")
    run(make_runner(db, config, clock))
    assert inbox(db)[1][0] == "done"


def test_two_instances_answer_nul_mails_and_block_nothing(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    """Two server instances on one database (PostgreSQL's case): a NUL in a signup's
    subject and in a chat once stopped every worker on every instance."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender="alice@example.org"))
    deliver(db, clock, "zed@example.org", plain("zed@example.org", "signup zed\x00 pw", "<n1@x>"))
    chat = f"accasta chat {board} alice pw\nhi\x00 there"
    deliver(db, clock, "alice@example.org", plain("alice@example.org", "chat", "<n2@x>", chat))
    [move] = first_moves(1)
    line = f"accasta move {board} alice pw {move}"
    deliver(db, clock, "alice@example.org", plain("alice@example.org", line, "<n3@x>"))
    other = Database.open(config.database.url)
    try:
        runners = [make_runner(db, config, clock), make_runner(other, config, clock, "other")]

        async def side_by_side() -> None:
            await asyncio.gather(*(r.run_once() for r in runners))

        asyncio.run(side_by_side())
    finally:
        other.close()
    assert [status for status, _ in inbox(db)] == ["done", "done", "done"]
    assert moves_on(db, board) == 1
    assert any("hi there" in m.body for m in mails_to(db, "bob@example.org"))
