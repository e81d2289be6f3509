"""Pruning: raw mail and sent bodies erased after ``server.keep_raw_days``, old bookkeeping gone.

Every rule runs on a SQLite file and on PostgreSQL; time is an argument
(``prune(session, now, ...)``, ``pbm prune --now``), nothing sleeps.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from conftest import T0

from pbm.cli import main
from pbm.config import Config, ServerConfig
from pbm.runners.timer_runner import PRUNE_EVERY_SECONDS, PRUNE_RETRY_SECONDS, PruneRunner
from pbm.store.engine import Database
from pbm.store.prune import KEEP_COUNTERS, REMEMBER_MESSAGE_IDS, Pruned, compact, prune
from pbm.store.tables import (
    AnswerCount,
    InboxMessage,
    OutboxMessage,
    PasswordFailure,
    ProcessedMessage,
    table,
)

INBOX, OUTBOX = table(InboxMessage), table(OutboxMessage)
SEEN, FAILURES, ANSWERS = table(ProcessedMessage), table(PasswordFailure), table(AnswerCount)
NOW = T0 + timedelta(days=30)
KEEP = 7
LIMIT = NOW - timedelta(days=KEEP)
SECOND = timedelta(seconds=1)
MAIL = b"Subject: move\r\n\r\naccasta move 1 alice SECRET a1:C-d1\r\n"


# ---------------------------------------------------------------- rows


def add_inbox(db: Database, status: str, processed_at: datetime | None, raw: bytes = MAIL) -> int:
    received = (processed_at or NOW) - timedelta(minutes=1)
    with db.transaction() as s:
        row = {
            "received_at": received,
            "mail_from": "alice@example.org",
            "rcpt_to": "pbm@example.org",
            "raw": raw,
            "status": status,
            "processed_at": processed_at,
            "note": "1 of 1 command(s) carried out" if status != "new" else None,
        }
        return int(s.execute(sa.insert(INBOX).values(row).returning(INBOX.c.id)).scalar_one())


def add_outbox(db: Database, status: str, sent_at: datetime | None, created: datetime) -> int:
    with db.transaction() as s:
        row = {
            "created_at": created,
            "to_addr": "alice@example.org",
            "subject": f"{status} reply",
            "body": "Your password is in here: SECRET\n",
            "message_id": f"<pbm.{secrets.token_hex(8)}@example.org>",
            "status": status,
            "sent_at": sent_at,
            "attempts": 1,
        }
        return int(s.execute(sa.insert(OUTBOX).values(row).returning(OUTBOX.c.id)).scalar_one())


def raws(db: Database) -> dict[int, bytes]:
    with db.read() as s:
        return {
            int(i): bytes(r)
            for i, r in s.execute(sa.select(INBOX.c.id, INBOX.c.raw).order_by(INBOX.c.id))
        }


def bodies(db: Database) -> dict[int, str]:
    with db.read() as s:
        return {
            int(i): str(b)
            for i, b in s.execute(sa.select(OUTBOX.c.id, OUTBOX.c.body).order_by(OUTBOX.c.id))
        }


def run(db: Database, now: datetime = NOW, keep: int = KEEP) -> Pruned:
    with db.transaction() as s:
        return prune(s, now, keep)


# ---------------------------------------------------------------- inbox


def test_raw_mail_is_erased_once_acted_on_longer_than_keep_raw_days(db: Database) -> None:
    old_done = add_inbox(db, "done", LIMIT - SECOND)
    old_ignored = add_inbox(db, "ignored", LIMIT - timedelta(days=100))
    old_failed = add_inbox(db, "failed", LIMIT - timedelta(days=1))
    at_limit = add_inbox(db, "done", LIMIT)  # exactly keep_raw_days ago: not yet
    recent = add_inbox(db, "done", NOW - timedelta(hours=1))
    waiting = add_inbox(db, "new", None)
    with db.transaction() as s:  # still new after 100 days (a stopped worker): kept
        s.execute(
            sa.update(INBOX)
            .where(INBOX.c.id == waiting)
            .values(received_at=NOW - timedelta(days=100))
        )
    assert run(db) == Pruned(raw_mails=3)
    got = raws(db)
    assert {i for i, raw in got.items() if raw == b""} == {old_done, old_ignored, old_failed}
    assert got[at_limit] == got[recent] == got[waiting] == MAIL
    # The rest of an erased row stays: what happened to it, and when.
    with db.read() as s:
        row = s.execute(sa.select(INBOX).where(INBOX.c.id == old_done)).one()
    assert (row.status, row.note, row.mail_from) == (
        "done",
        "1 of 1 command(s) carried out",
        "alice@example.org",
    )
    assert row.processed_at == LIMIT - SECOND
    # One second later the row at the limit is past it.
    assert run(db, NOW + SECOND) == Pruned(raw_mails=1)
    assert raws(db)[at_limit] == b""


def test_keep_raw_days_0_erases_every_row_acted_on_and_no_new_one(db: Database) -> None:
    done = add_inbox(db, "done", NOW)
    ahead = add_inbox(db, "ignored", NOW + timedelta(hours=2))  # a clock ahead of --now
    waiting = add_inbox(db, "new", None)
    sent = add_outbox(db, "sent", NOW, NOW)
    pending = add_outbox(db, "pending", None, NOW - timedelta(days=40))
    assert run(db, keep=0) == Pruned(raw_mails=2, sent_bodies=1)
    assert raws(db) == {done: b"", ahead: b"", waiting: MAIL}
    assert bodies(db)[sent] == ""
    assert bodies(db)[pending] != ""


def test_a_row_without_processed_at_counts_from_when_it_came(db: Database) -> None:
    old = add_inbox(db, "failed", None)
    with db.transaction() as s:
        s.execute(sa.update(INBOX).values(received_at=LIMIT - SECOND))
    assert run(db) == Pruned(raw_mails=1)
    assert raws(db) == {old: b""}


# ---------------------------------------------------------------- outbox


def test_sent_bodies_are_erased_pending_and_failed_ones_kept(db: Database) -> None:
    long_ago = NOW - timedelta(days=60)
    old_sent = add_outbox(db, "sent", LIMIT - SECOND, long_ago)
    at_limit = add_outbox(db, "sent", LIMIT, long_ago)
    recent = add_outbox(db, "sent", NOW - timedelta(days=1), long_ago)
    pending = add_outbox(db, "pending", None, long_ago)
    failed = add_outbox(db, "failed", None, long_ago)
    assert run(db) == Pruned(sent_bodies=1)
    got = bodies(db)
    assert got[old_sent] == ""
    for kept in (at_limit, recent, pending, failed):
        assert got[kept] == "Your password is in here: SECRET\n"
    with db.read() as s:
        row = s.execute(sa.select(OUTBOX).where(OUTBOX.c.id == old_sent)).one()
    assert (row.subject, row.to_addr, row.status) == ("sent reply", "alice@example.org", "sent")
    assert (row.created_at, row.sent_at) == (long_ago, LIMIT - SECOND)


# ---------------------------------------------------------------- bookkeeping


def test_message_ids_are_forgotten_after_30_days(db: Database) -> None:
    assert timedelta(days=30) == REMEMBER_MESSAGE_IDS
    with db.transaction() as s:
        for mid, at in (
            ("<old@x>", NOW - REMEMBER_MESSAGE_IDS - SECOND),
            ("<edge@x>", NOW - REMEMBER_MESSAGE_IDS),
            ("<new@x>", NOW - timedelta(days=5)),
        ):
            s.execute(sa.insert(SEEN).values(message_id=mid, processed_at=at))
    assert run(db) == Pruned(message_ids=1)
    with db.read() as s:
        left = set(s.execute(sa.select(SEEN.c.message_id)).scalars())
    assert left == {"<edge@x>", "<new@x>"}


def test_password_failures_and_answer_counts_go_after_a_day(db: Database) -> None:
    day = KEEP_COUNTERS
    with db.transaction() as s:
        for at in (NOW - day - SECOND, NOW - day, NOW - timedelta(minutes=5)):
            s.execute(sa.insert(FAILURES).values(userid="alice", failed_at=at))
        for hour in (NOW - timedelta(days=3), NOW - day - timedelta(hours=1), NOW - day, NOW):
            s.execute(sa.insert(ANSWERS).values(address="a@x.org", hour=hour, answers=3))
    assert run(db) == Pruned(password_failures=1, answer_counts=2)
    with db.read() as s:
        failed = sorted(s.execute(sa.select(FAILURES.c.failed_at)).scalars())
        hours = sorted(s.execute(sa.select(ANSWERS.c.hour)).scalars())
    assert failed == [NOW - day, NOW - timedelta(minutes=5)]
    assert hours == [NOW - day, NOW]


def test_pruning_twice_erases_nothing_more(db: Database) -> None:
    add_inbox(db, "done", LIMIT - timedelta(days=1))
    add_inbox(db, "new", None)
    add_outbox(db, "sent", LIMIT - timedelta(days=1), LIMIT - timedelta(days=1))
    with db.transaction() as s:
        s.execute(sa.insert(SEEN).values(message_id="<m@x>", processed_at=T0 - SECOND))
        s.execute(sa.insert(FAILURES).values(userid="bob", failed_at=T0))
        s.execute(sa.insert(ANSWERS).values(address="b@x.org", hour=T0, answers=1))
    assert run(db) == Pruned(1, 1, 1, 1, 1)
    assert run(db) == Pruned()
    assert run(db, keep=0) == Pruned()


def test_prune_refuses_a_negative_keep(db: Database) -> None:
    with pytest.raises(ValueError, match="0 or more"), db.transaction() as s:
        prune(s, NOW, -1)


# ---------------------------------------------------------------- the files


def db_files(url: str) -> bytes:
    path = Path(sa.make_url(url).database or "")
    return b"".join(
        p.read_bytes()
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
        if p.exists()
    )


@pytest.mark.parametrize("size", [1, 200])  # one page; or overflow pages of their own
def test_erased_mail_leaves_no_byte_in_the_sqlite_files(tmp_path: Path, size: int) -> None:
    from pbm.store.engine import init_db

    url = f"sqlite:///{tmp_path / 'pbm.sqlite3'}"
    db = init_db(url)
    password = secrets.token_urlsafe(12).encode()
    try:
        add_inbox(db, "done", LIMIT - timedelta(days=1), raw=b"move 1 alice " + password * size)
        assert password in db_files(url)
        assert run(db) == Pruned(raw_mails=1)
        assert compact(db)
        assert password not in db_files(url)
        wal = Path(str(sa.make_url(url).database) + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    finally:
        db.close()


def test_compact_does_nothing_on_postgresql(postgres_db: Database) -> None:
    assert compact(postgres_db)


# ---------------------------------------------------------------- pbm prune


@pytest.fixture
def cli(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    for name in list(os.environ):
        if name.startswith("PBM_"):
            monkeypatch.delenv(name)
    cfg = tmp_path / "pbm.toml"

    def invoke(*args: str, keep: int | None = None, ok: bool = True) -> Result:
        server = "" if keep is None else f"[server]\nkeep_raw_days = {keep}\n"
        cfg.write_text(f'[database]\nurl = "{db_url}"\n[mail]\nsecret = "s"\n{server}')
        result = CliRunner().invoke(main, ["--config", str(cfg), *args])
        if ok:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    return invoke


def test_pbm_prune_says_what_it_erased(db: Database, cli: Callable[..., Result]) -> None:
    for days in (9, 10, 30):
        add_inbox(db, "done", NOW - timedelta(days=days))
    add_inbox(db, "new", None)
    add_outbox(db, "sent", NOW - timedelta(days=8), NOW - timedelta(days=8))
    with db.transaction() as s:
        s.execute(sa.insert(SEEN).values(message_id="<m@x>", processed_at=T0 - timedelta(days=1)))
    at = NOW.isoformat()
    assert cli("prune", "--now", at).output == (
        "erased 3 raw mails, 1 sent reply body, 1 Message-ID, "
        "0 password failures, 0 answer counts\n"
    )
    assert cli("prune", "--now", at).output == (
        "erased 0 raw mails, 0 sent reply bodies, 0 Message-IDs, "
        "0 password failures, 0 answer counts\n"
    )
    assert all(raw == b"" for raw in list(raws(db).values())[:3])


def test_pbm_prune_takes_keep_raw_days_from_the_config(
    db: Database, cli: Callable[..., Result]
) -> None:
    one_day = add_inbox(db, "done", NOW - timedelta(days=1))
    week = add_inbox(db, "done", NOW - timedelta(days=6))
    assert cli("prune", "--now", "2025-03-31T12:00").output.startswith("erased 0 raw mails,")
    assert cli("prune", "--now", "2025-03-31T12:00", keep=3).output.startswith("erased 1 raw mail,")
    assert raws(db) == {one_day: MAIL, week: b""}
    assert cli("prune", "--now", "2025-03-31T12:00", keep=0).output.startswith("erased 1 raw mail,")
    assert raws(db) == {one_day: b"", week: b""}


def test_pbm_prune_refuses_a_bad_time(cli: Callable[..., Result]) -> None:
    bad = cli("prune", "--now", "next week", ok=False)
    assert bad.exit_code == 2 and "ISO 8601" in bad.output


def test_pbm_prune_without_a_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("PBM_"):
            monkeypatch.delenv(name)
    cfg = tmp_path / "pbm.toml"
    cfg.write_text('[mail]\nsecret = "s"\n')
    result = CliRunner().invoke(main, ["--config", str(cfg), "prune"])
    assert result.exit_code == 1 and "run `pbm init` first" in result.output


# ---------------------------------------------------------------- pbm serve's daily prune


class Ticks:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def full_disk(db: Database, full: bool) -> None:
    """The database refuses every change of the inbox while ``full``, as a full disk would."""
    if not full:
        with db.transaction() as s:
            on = " ON inbox" if s.get_bind().dialect.name == "postgresql" else ""
            s.execute(sa.text(f"DROP TRIGGER no_room{on}"))
        return
    with db.transaction() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(
                sa.text(
                    "CREATE OR REPLACE FUNCTION no_room() RETURNS trigger AS $$ BEGIN "
                    "RAISE EXCEPTION 'could not extend file: No space left on device'; "
                    "END $$ LANGUAGE plpgsql"
                )
            )
            s.execute(
                sa.text(
                    "CREATE TRIGGER no_room BEFORE UPDATE ON inbox FOR EACH ROW "
                    "EXECUTE FUNCTION no_room()"
                )
            )
        else:
            s.execute(
                sa.text(
                    "CREATE TRIGGER no_room BEFORE UPDATE ON inbox "
                    "BEGIN SELECT RAISE(ABORT, 'disk is full'); END"
                )
            )


def test_the_server_prunes_at_start_and_then_every_day(db: Database, config: Config) -> None:
    ticks = Ticks()
    old = add_inbox(db, "done", T0)  # real time: T0 is long past
    config = replace(config, server=ServerConfig(keep_raw_days=7))
    runner = PruneRunner(db, config, clock=ticks)
    assert asyncio.run(runner.run_once()) == 1  # at start
    assert raws(db) == {old: b""}
    ticks.now += PRUNE_EVERY_SECONDS - 1
    assert asyncio.run(runner.run_once()) == 0  # not before the day is up
    ticks.now += 1
    assert asyncio.run(runner.run_once()) == 1


def test_the_daily_prune_tries_again_an_hour_after_database_trouble(
    db: Database, config: Config
) -> None:
    ticks = Ticks()
    old = add_inbox(db, "done", T0)
    runner = PruneRunner(db, config, clock=ticks)
    full_disk(db, True)
    with pytest.raises(sa.exc.SQLAlchemyError):
        asyncio.run(runner.run_once())
    full_disk(db, False)
    assert raws(db)[old] != b""
    assert runner.pause() == PRUNE_RETRY_SECONDS  # an hour, not a day
    ticks.now += PRUNE_RETRY_SECONDS
    assert asyncio.run(runner.run_once()) == 1
    assert raws(db)[old] == b""
