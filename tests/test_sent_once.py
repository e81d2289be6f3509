"""A reply whose outcome cannot be written (a full disk) is sent again once the disk has room
(at least once), and the Maildir, which can tell, does not get it twice; a fault that
repeats is logged once a minute.

The fault is a real one of the database: a trigger refuses to mark the row
sent, as a full disk refuses every write after the Maildir file was written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import T0, Clock
from smtp_relay import outbound_config
from test_outbox_runner import enqueue, reply, row_of

from pbm.logs import Throttled
from pbm.mail.transports import MaildirTransport
from pbm.runners.outbox_runner import LEASE, OutboxRunner
from pbm.store.engine import Database


def refuse_marking_sent(db: Database, on: bool) -> None:
    with db.transaction() as s:
        postgres = s.get_bind().dialect.name == "postgresql"
        if postgres:
            s.execute(sa.text("DROP TRIGGER IF EXISTS full_disk ON outbox"))
        else:
            s.execute(sa.text("DROP TRIGGER IF EXISTS full_disk"))
        if not on:
            return
        if postgres:
            s.execute(
                sa.text(
                    "CREATE OR REPLACE FUNCTION full_disk() RETURNS trigger AS $$ BEGIN "
                    "RAISE EXCEPTION 'could not extend file: No space left on device'; "
                    "END $$ LANGUAGE plpgsql"
                )
            )
            s.execute(
                sa.text(
                    "CREATE TRIGGER full_disk BEFORE UPDATE ON outbox FOR EACH ROW "
                    "WHEN (NEW.status = 'sent') EXECUTE FUNCTION full_disk()"
                )
            )
        else:
            s.execute(
                sa.text(
                    "CREATE TRIGGER full_disk BEFORE UPDATE ON outbox "
                    "WHEN NEW.status = 'sent' BEGIN SELECT RAISE(ABORT, 'disk is full'); END"
                )
            )


def test_a_reply_whose_outcome_cannot_be_written_is_delivered_once(
    db: Database, tmp_path: Path
) -> None:
    box = tmp_path / "outbox"
    clock = Clock(T0)
    runner = OutboxRunner(db, outbound_config(), MaildirTransport(box), clock)
    [row] = enqueue(db, reply(1))
    refuse_marking_sent(db, True)
    try:
        with contextlib.suppress(Exception):
            asyncio.run(runner.run_once())
        assert len(list((box / "new").iterdir())) == 1  # the hand-over worked
        assert row_of(db, row).status == "pending"  # ... its outcome was not written
    finally:
        refuse_marking_sent(db, False)
    # A reader takes the mail (new/ -> cur/, flagged seen) meanwhile.
    (delivered,) = (box / "new").iterdir()
    (box / "cur").mkdir(exist_ok=True)
    delivered.rename(box / "cur" / f"{delivered.name}:2,S")
    # The disk has room again; the claim runs out; the row is sent again, at least once,
    # and the Maildir finds that mail delivered already.
    clock.advance(seconds=LEASE.total_seconds() + 1)
    assert asyncio.run(runner.run_once()) == 1
    assert not list((box / "new").iterdir()) and len(list((box / "cur").iterdir())) == 1
    done = row_of(db, row)
    assert (done.status, done.last_error) == ("sent", None)


def test_a_fault_that_repeats_is_logged_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    trouble = Throttled(logging.getLogger("pbm.test"), "disk trouble", clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="pbm.test"):
        for second in range(180):  # a loop that retries every second for three minutes
            now[0] = float(second)
            trouble.fault(OSError(28, "No space left on device"))
    records = [r for r in caplog.records if r.name == "pbm.test"]
    assert len(records) == 3  # the first, with its traceback, then one line a minute
    assert records[0].exc_info is not None
    assert all(r.exc_info is None for r in records[1:])
    assert "60 times" in records[1].getMessage() or "59 times" in records[1].getMessage()
    with caplog.at_level(logging.INFO, logger="pbm.test"):
        trouble.cleared()  # "working again"
        trouble.fault(OSError(28, "No space left on device"))  # after a recovery: told at once
    records = [r for r in caplog.records if r.name == "pbm.test"]
    assert len(records) == 5 and records[-1].exc_info is not None
