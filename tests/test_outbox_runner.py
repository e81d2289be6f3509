"""The outbox runner (pbm.runners.outbox_runner) over a real database and a real SMTP relay.

Rows are claimed one at a time under a lease (``pbm.store.outbox``), sent,
and each outcome recorded. A failure stays with its message: a 5xx fails it
alone, a 4xx retries it alone; a relay that is down (no connection, a 421)
defers the row without charging it an attempt. A row whose sender died
after its claim is sent again once the lease ends: at least once. Also
here: the outbox claims as the runner uses them, and ``pbm outbox list /
retry``, which hand rows back to the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from click.testing import CliRunner
from conftest import T0, Clock
from smtp_relay import Greeter, Relay, free_port, greeter, outbound_config, relay, run

from pbm.cli.outbox import outbox as outbox_cli
from pbm.config import Config, from_mapping
from pbm.mail.addresses import token_address
from pbm.mail.transports import MaildirTransport, SmtpTransport, Transport, transport_from_config
from pbm.replies import Reply
from pbm.runners.outbox_runner import LEASE, OutboxRunner, RelayDown, retry_delay
from pbm.store import outbox
from pbm.store.engine import Database
from pbm.store.tables import OutboxMessage


def enqueue(db: Database, *replies: Reply, now: datetime = T0) -> list[int]:
    """Write replies as the use cases do, due at once."""
    with db.transaction() as session:
        return outbox.enqueue(session, replies, "example.org", now, now)


def reply(n: int = 0, **kw: Any) -> Reply:
    fields: dict[str, Any] = {
        "to": f"player{n}@example.net",
        "subject": f"Accasta Board {n} - your move",
        "body": f"Board {n}\n",
    }
    fields.update(kw)
    return Reply(**fields)


def row_of(db: Database, row_id: int) -> OutboxMessage:
    with db.transaction() as session:
        row = session.get(OutboxMessage, row_id)
        assert row is not None
        return row


def smtp_runner(db: Database, config: Config, port: int, clock: Clock, **kw: Any) -> OutboxRunner:
    transport: Transport = SmtpTransport("127.0.0.1", port, timeout=5)
    return OutboxRunner(db, config, transport, clock, **kw)


def statuses(db: Database, ids: Sequence[int]) -> list[str]:
    return [row_of(db, i).status for i in ids]


async def through(runner: OutboxRunner) -> None:
    """Send what is due now; a relay that is down ends the round (its row deferred)."""
    with contextlib.suppress(RelayDown):
        await runner.run_once()


# --- sending ------------------------------------------------------------------------


def test_sends_due_rows_once(db: Database) -> None:
    config = outbound_config()
    ids = enqueue(
        db,
        reply(1, board=1, reply_as="bob", in_reply_to="<cmd@example.net>"),
        reply(2),
        reply(3, body="Grüße\n"),
    )
    handler = Relay()
    clock = Clock(T0)

    async def go() -> tuple[int, int]:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            return await runner.run_once(), await runner.run_once()

    assert run(go()) == (3, 0)
    assert handler.recipients() == [
        "player1@example.net",
        "player2@example.net",
        "player3@example.net",
    ]
    first = handler.messages()[0]
    assert first["In-Reply-To"] == "<cmd@example.net>"
    assert first["Reply-To"] == token_address("pbm@example.org", "s", 1, "bob")
    assert first["Message-ID"] == row_of(db, ids[0]).message_id
    assert handler.messages()[1]["Reply-To"] is None  # not about a board
    assert handler.messages()[2].get_content().replace("\r\n", "\n") == "Grüße\n"
    for row_id in ids:
        row = row_of(db, row_id)
        assert (row.status, row.attempts, row.sent_at) == ("sent", 1, T0)
        assert row.claimed_by is None and row.claimed_until is None


def test_a_board_mail_has_no_reply_to_without_a_secret(db: Database) -> None:
    config = from_mapping({"mail": {"address": "pbm@example.org"}}, env={})
    enqueue(db, reply(1, board=1, reply_as="bob"))
    handler = Relay()

    async def go() -> int:
        async with relay(handler) as port:
            return await smtp_runner(db, config, port, Clock(T0)).run_once()

    assert run(go()) == 1
    assert handler.messages()[0]["Reply-To"] is None


def test_temporary_failure_backs_off_then_sends(db: Database) -> None:
    config = outbound_config(retry_base_seconds=30)
    [row_id] = enqueue(db, reply())
    handler = Relay(data_script=["451 4.3.0 greylisted", "451 4.3.0 greylisted again"])
    clock = Clock(T0)

    async def go() -> None:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            await runner.run_once()
            row = row_of(db, row_id)
            assert (row.status, row.attempts) == ("pending", 1)
            assert row.next_attempt_at == T0 + timedelta(seconds=30)
            assert row.last_error is not None and "451" in row.last_error

            clock.advance(seconds=29)
            assert await runner.run_once() == 0  # not due yet: the relay is not asked
            assert handler.data_script == ["451 4.3.0 greylisted again"]

            clock.advance(seconds=1)
            await runner.run_once()
            row = row_of(db, row_id)
            assert (row.status, row.attempts) == ("pending", 2)
            assert row.next_attempt_at == clock.now + timedelta(seconds=60)  # doubled

            clock.advance(seconds=60)
            assert await runner.run_once() == 1

    run(go())
    row = row_of(db, row_id)
    assert (row.status, row.attempts, row.sent_at) == ("sent", 3, T0 + timedelta(seconds=90))
    assert len(handler.received) == 1


def test_permanent_failure_marks_failed(db: Database) -> None:
    config = outbound_config()
    bad, good = enqueue(db, reply(1), reply(2))
    handler = Relay(data_script=["550 5.1.1 no such user"])
    clock = Clock(T0)

    async def go() -> None:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            await runner.run_once()
            clock.advance(hours=1)
            assert await runner.run_once() == 0  # nothing more to try

    run(go())
    row = row_of(db, bad)
    assert (row.status, row.attempts) == ("failed", 1)
    assert row.last_error is not None and "550 5.1.1 no such user" in row.last_error
    assert row_of(db, good).status == "sent"
    assert handler.recipients() == ["player2@example.net"]


def test_gives_up_after_max_attempts(db: Database) -> None:
    config = outbound_config(max_attempts=3, retry_base_seconds=10)
    [row_id] = enqueue(db, reply())
    handler = Relay(data_script=["451 4.4.5 busy"] * 5)
    clock = Clock(T0)

    async def go() -> None:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            for _ in range(5):
                await runner.run_once()
                clock.advance(hours=1)

    run(go())
    row = row_of(db, row_id)
    assert (row.status, row.attempts) == ("failed", 3)
    assert len(handler.data_script) == 2  # asked three times, then left alone


# --- one bad message does not fail the good ones -------------------------------------


def five_rows(db: Database) -> list[int]:
    return enqueue(db, *(reply(n) for n in range(1, 6)))


def assert_delivered_once(handler: Relay, numbers: Sequence[int]) -> None:
    assert sorted(handler.recipients()) == sorted(f"player{n}@example.net" for n in numbers)


def sent_two_hours_apart(db: Database, config: Config, handler: Relay) -> None:
    """Two rounds of sending through ``handler``, two hours apart (every retry of the
    first round is due by the second)."""
    clock = Clock(T0)

    async def go() -> None:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            await runner.run_once()
            clock.advance(hours=2)
            await runner.run_once()

    run(go())


def test_a_refused_recipient_fails_alone(db: Database) -> None:
    config = outbound_config()
    ids = five_rows(db)
    handler = Relay(refuse_rcpt={"player3@example.net": ["550 5.1.1 no such user"] * 5})
    sent_two_hours_apart(db, config, handler)
    assert_delivered_once(handler, [1, 2, 4, 5])
    assert handler.asked.count("player3@example.net") == 1  # never asked again
    bad = row_of(db, ids[2])
    assert (bad.status, bad.attempts) == ("failed", 1)
    assert bad.last_error is not None and "550 5.1.1 no such user" in bad.last_error
    for row_id in ids[:2] + ids[3:]:
        row = row_of(db, row_id)
        assert (row.status, row.attempts, row.last_error) == ("sent", 1, None)


def test_a_refused_message_fails_alone(db: Database) -> None:
    config = outbound_config()
    ids = five_rows(db)
    handler = Relay(refuse_data={"player2@example.net": ["554 5.6.0 message refused"] * 5})
    sent_two_hours_apart(db, config, handler)
    assert_delivered_once(handler, [1, 3, 4, 5])
    bad = row_of(db, ids[1])
    assert (bad.status, bad.attempts) == ("failed", 1)
    assert bad.last_error is not None and "554 5.6.0 message refused" in bad.last_error
    assert statuses(db, ids) == ["sent", "failed", "sent", "sent", "sent"]


def test_an_address_the_relay_cannot_take_fails_alone(db: Database) -> None:
    """Without SMTPUTF8 a non-ASCII address can never go through this relay; the rest can."""
    config = outbound_config()
    ids = enqueue(db, reply(1), reply(2, to="jürgen@example.net"), reply(3))
    handler = Relay()

    async def go() -> None:
        async with relay(handler, smtputf8=False) as port:
            await smtp_runner(db, config, port, Clock(T0)).run_once()

    run(go())
    assert_delivered_once(handler, [1, 3])
    bad = row_of(db, ids[1])
    assert (bad.status, bad.attempts) == ("failed", 1)
    assert bad.last_error is not None and "SMTPUTF8" in bad.last_error
    assert statuses(db, [ids[0], ids[2]]) == ["sent", "sent"]


@pytest.mark.parametrize("where", ["RCPT", "DATA"])
def test_a_4xx_for_one_message_retries_it_alone(db: Database, where: str) -> None:
    config = outbound_config(retry_base_seconds=30)
    ids = five_rows(db)
    answers = {"player2@example.net": ["450 4.2.1 mailbox busy"]}
    handler = Relay(refuse_rcpt=answers) if where == "RCPT" else Relay(refuse_data=answers)
    clock = Clock(T0)

    async def go() -> tuple[int, int]:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            await runner.run_once()
            busy = row_of(db, ids[1])
            assert (busy.status, busy.attempts) == ("pending", 1)
            assert busy.next_attempt_at == T0 + timedelta(seconds=30)
            assert busy.last_error is not None and "450 4.2.1 mailbox busy" in busy.last_error
            assert statuses(db, ids) == ["sent", "pending"] + ["sent"] * 3
            clock.advance(seconds=29)
            early = await runner.run_once()
            clock.advance(seconds=1)
            return early, await runner.run_once()

    assert run(go()) == (0, 1)
    assert_delivered_once(handler, [1, 2, 3, 4, 5])
    assert [row_of(db, i).attempts for i in ids] == [1, 2, 1, 1, 1]
    assert all(s == "sent" for s in statuses(db, ids))


# --- the relay is down: the rows wait, uncharged ----------------------------------------


@pytest.mark.parametrize(
    "down",
    [
        "no connection",
        "421 greeting",
        "554 greeting",
        "421 to DATA",
        "421 to RCPT",
        "530 login required",
    ],
)
def test_a_relay_that_is_down_defers_its_rows_uncharged(db: Database, down: str) -> None:
    """Nothing is charged while nothing gets through: the rows wait, none is lost, and
    all go out once the relay is back."""
    config = outbound_config(retry_base_seconds=30, max_attempts=1)
    ids = five_rows(db)
    clock = Clock(T0)
    handler = Relay()
    if down == "421 to DATA":
        handler.data_script.extend(["421 4.3.2 shutting down"] * len(ids))
    elif down == "421 to RCPT":
        handler.rcpt_script.extend(["421 4.3.2 shutting down"] * len(ids))
    greeting = Greeter(down.split()[0] + " 4.3.2 not now")

    async def until_all_deferred() -> None:
        for _ in ids:  # the loop pauses after each refusal; here one more round each
            if down == "no connection":
                await through(smtp_runner(db, config, free_port(), clock))
            elif down.endswith("greeting"):
                async with greeter(greeting) as port:
                    await through(smtp_runner(db, config, port, clock))
            else:
                async with relay(handler, login_required=down.startswith("530")) as port:
                    await through(smtp_runner(db, config, port, clock))

    run(until_all_deferred())
    assert handler.received == []  # nothing got through
    for row_id in ids:
        row = row_of(db, row_id)
        assert (row.status, row.attempts, row.last_error) == ("pending", 0, None)
        assert row.next_attempt_at == T0 + timedelta(seconds=30)  # deferred
        assert row.claimed_by is None and row.claimed_until is None

    async def relay_back() -> tuple[int, int]:
        async with relay(Relay()) as port:
            runner = smtp_runner(db, config, port, clock)
            early = await runner.run_once()
            clock.advance(seconds=30)
            return early, await runner.run_once()

    assert run(relay_back()) == (0, 5)
    assert statuses(db, ids) == ["sent"] * 5


# --- several runners, leases, a runner that dies ------------------------------------------


def test_two_runners_never_send_one_row_twice(db: Database) -> None:
    config = outbound_config()
    enqueue(db, *(reply(n) for n in range(12)))
    handler = Relay()
    clock = Clock(T0)

    async def go() -> list[int]:
        async with relay(handler) as port:
            a = smtp_runner(db, config, port, clock, worker="a")
            b = smtp_runner(db, config, port, clock, worker="b")
            return list(await asyncio.gather(a.run_once(), b.run_once()))

    assert sum(run(go())) == 12
    assert_delivered_once(handler, range(12))


def test_a_row_whose_sender_died_is_sent_again_when_its_lease_ends(db: Database) -> None:
    """At least once: the claim is also the mark that a send was begun, so the row
    claimed again says it may have gone out already (``again``)."""
    config = outbound_config()
    [row_id] = enqueue(db, reply())
    with db.transaction() as session:
        first = outbox.claim_next(session, "dead", T0, LEASE)
    assert first is not None and not first.again
    handler = Relay()
    clock = Clock(T0)

    async def go() -> tuple[int, int]:
        async with relay(handler) as port:
            runner = smtp_runner(db, config, port, clock)
            before = await runner.run_once()
            clock.advance(seconds=LEASE.total_seconds() + 1)
            return before, await runner.run_once()

    assert run(go()) == (0, 1)
    assert row_of(db, row_id).status == "sent"
    assert handler.messages()[0]["Message-ID"] == row_of(db, row_id).message_id


class BrokenTransport:
    """A transport with a bug in it."""

    async def send(self, data: bytes, sender: str, recipients: Sequence[str], **kw: Any) -> None:
        raise RuntimeError("oops")


def test_an_unexpected_error_counts_as_a_failed_attempt(db: Database) -> None:
    config = outbound_config(max_attempts=2)
    [row_id] = enqueue(db, reply())
    clock = Clock(T0)
    runner = OutboxRunner(db, config, BrokenTransport(), clock)
    run(runner.run_once())
    row = row_of(db, row_id)
    assert (row.status, row.attempts) == ("pending", 1)
    assert row.last_error is not None and "oops" in row.last_error
    clock.advance(hours=1)
    run(runner.run_once())
    assert row_of(db, row_id).status == "failed"


def test_retry_delay_doubles_and_is_capped() -> None:
    assert [retry_delay(n, 30).total_seconds() for n in range(1, 6)] == [30, 60, 120, 240, 480]
    assert retry_delay(8, 30) == timedelta(hours=1)
    assert retry_delay(10_000, 30) == timedelta(hours=1)
    assert retry_delay(0, 30) == timedelta(seconds=30)


def test_list_and_retry(db: Database) -> None:
    config = outbound_config()
    failed, sent, pending = enqueue(db, reply(1), reply(2), reply(3))
    with db.transaction() as session:
        assert outbox.record_failure(session, failed, "550 nope", None) == "failed"
        assert outbox.mark_sent(session, [sent], T0) == {sent}

    def listed(status: str | None = None) -> list[int | None]:
        with db.read() as session:
            return [r.id for r in outbox.listing(session, status)]

    assert listed("failed") == [failed]
    assert listed("pending") == [pending]
    assert listed("all") == [failed, sent, pending]
    assert listed() == [failed, sent, pending]
    with pytest.raises(ValueError):
        listed("bogus")

    later = T0 + timedelta(hours=2)
    with db.transaction() as session:
        result = outbox.retry(session, [sent, 999], all_failed=False, now=later)
    assert result.requeued == []
    assert result.skipped == {sent: "already sent", 999: "no such outbox row"}

    with db.transaction() as session:
        result = outbox.retry(session, [], all_failed=True, now=later)
    assert result.requeued == [failed]
    row = row_of(db, failed)
    assert (row.status, row.attempts, row.next_attempt_at) == ("pending", 0, later)

    handler = Relay()

    async def go() -> int:
        async with relay(handler) as port:
            return await smtp_runner(db, config, port, Clock(later)).run_once()

    assert run(go()) == 2
    assert row_of(db, failed).status == "sent"
    assert_delivered_once(handler, [1, 3])


def test_maildir_through_the_runner(db: Database, tmp_path: Path) -> None:
    config = outbound_config(maildir=str(tmp_path / "box"))
    enqueue(db, reply(1), reply(2))
    runner = OutboxRunner(db, config, transport_from_config(config), Clock(T0))
    assert run(runner.run_once()) == 2
    assert len(list((tmp_path / "box" / "new").iterdir())) == 2


def test_the_loop_sends_when_woken_and_stops(db: Database) -> None:
    config = outbound_config(poll_seconds=3600)
    arrived = asyncio.Event()

    class Signalling(Relay):
        async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
            answer = await super().handle_DATA(server, session, envelope)
            if len(self.received) == 2:
                arrived.set()
            return answer

    handler = Signalling()

    async def go() -> None:
        async with relay(handler) as port:
            stop, wake = asyncio.Event(), asyncio.Event()
            runner = smtp_runner(db, config, port, Clock(T0), wake=wake, stop=stop)
            task = asyncio.create_task(runner.run(stop, at_once=3))
            await asyncio.sleep(0)  # let it look once (no time passes)
            await asyncio.to_thread(enqueue, db, reply(1), reply(2))
            wake.set()  # what the inbox runner does after a command
            await asyncio.wait_for(arrived.wait(), timeout=10)
            stop.set()
            await asyncio.wait_for(task, timeout=10)

    run(go())
    assert_delivered_once(handler, [1, 2])


class StoppingTransport:
    """Delivers to a Maildir and asks the runner to stop after the first mail."""

    def __init__(self, path: Path, stop: asyncio.Event) -> None:
        self.inner = MaildirTransport(path)
        self.stop = stop

    async def send(self, data: bytes, sender: str, recipients: Sequence[str], **kw: Any) -> None:
        await self.inner.send(data, sender, recipients, **kw)
        self.stop.set()


def test_a_stop_gives_back_the_rows_not_yet_sent(db: Database, tmp_path: Path) -> None:
    config = outbound_config(poll_seconds=3600)
    ids = enqueue(db, *(reply(n) for n in range(3)))

    async def go() -> None:
        stop = asyncio.Event()
        transport = StoppingTransport(tmp_path / "box", stop)
        runner = OutboxRunner(db, config, transport, Clock(T0), stop=stop)
        await asyncio.wait_for(runner.run(stop), timeout=10)

    run(go())
    assert statuses(db, ids) == ["sent", "pending", "pending"]
    assert all(row_of(db, i).claimed_by is None for i in ids)
    assert [row_of(db, i).attempts for i in ids] == [1, 0, 0]


def test_a_line_break_in_a_header_value_cannot_add_a_header(db: Database, tmp_path: Path) -> None:
    """A subject with a line break in it is sent, on one line: no header is added."""
    config = outbound_config(maildir=str(tmp_path / "box"))
    [odd, good] = enqueue(db, reply(1, subject="two\nX-Evil: lines"), reply(2))
    runner = OutboxRunner(db, config, transport_from_config(config), Clock(T0))
    assert run(runner.run_once()) == 2
    assert statuses(db, [odd, good]) == ["sent", "sent"]
    subjects = set()
    for path in (tmp_path / "box" / "new").iterdir():
        msg = email.message_from_bytes(path.read_bytes())
        assert msg["X-Evil"] is None
        subjects.add(msg["Subject"])
    assert "two X-Evil: lines" in subjects


def test_sends_side_by_side_each_row_once(db: Database, tmp_path: Path) -> None:
    """pbm serve runs several copies of the loop (a far relay answers slowly): each row
    lands once."""
    config = outbound_config(poll_seconds=3600)
    ids = enqueue(db, *(reply(n) for n in range(12)))
    box = tmp_path / "box"

    async def go() -> None:
        stop = asyncio.Event()
        runner = OutboxRunner(db, config, MaildirTransport(box), Clock(T0), stop=stop)
        task = asyncio.create_task(runner.run(stop, at_once=8))
        while sum(1 for _ in (box / "new").glob("*")) < 12:
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, timeout=10)

    run(go())
    assert statuses(db, ids) == ["sent"] * 12
    assert len(list((box / "new").iterdir())) == 12


# --- the outbox claims as the runner uses them -------------------------------------------


def test_a_claim_holds_its_row_until_its_lease_ends(db: Database) -> None:
    ids = enqueue(db, *(reply(n) for n in range(2)))
    lease = timedelta(minutes=5)
    with db.transaction() as session:
        first = outbox.claim_next(session, "a", T0, lease)
        second = outbox.claim_next(session, "b", T0, lease)
        third = outbox.claim_next(session, "c", T0, lease)
    assert first is not None and second is not None and third is None
    assert [first.id, second.id] == ids  # the oldest first
    assert first.claimed_until == T0 + lease
    assert (first.to_addr, first.attempts, first.again) == ("player0@example.net", 0, False)
    with db.transaction() as session:
        assert outbox.claim_next(session, "c", T0 + lease, lease) is None  # not yet over
        later = outbox.claim_next(session, "c", T0 + lease + timedelta(seconds=1), lease)
    assert later is not None and later.id == ids[0] and later.again


def test_rows_not_due_are_not_claimed(db: Database) -> None:
    [row_id] = enqueue(db, reply())
    with db.transaction() as session:
        outbox.record_failure(session, row_id, "451 later", T0 + timedelta(seconds=30))
        assert outbox.claim_next(session, "a", T0, timedelta(minutes=5)) is None
        due = outbox.claim_next(session, "a", T0 + timedelta(seconds=30), timedelta(minutes=5))
    assert due is not None and due.id == row_id and not due.again  # its failure was written


def test_release_and_defer_touch_only_the_claimers_rows(db: Database) -> None:
    ids = enqueue(db, *(reply(n) for n in range(4)))
    lease = timedelta(minutes=5)
    later = T0 + timedelta(minutes=1)
    with db.transaction() as session:
        for _ in ids:
            outbox.claim_next(session, "a", T0, lease)
        outbox.release(session, ids[:1], "b")  # not b's: left alone
        outbox.defer(session, ids[1:2], "b", later)
        outbox.release(session, ids[2:3], "a")
        outbox.defer(session, ids[3:], "a", later)
    rows = [row_of(db, i) for i in ids]
    assert [r.claimed_by for r in rows] == ["a", "a", None, None]
    assert [r.next_attempt_at for r in rows] == [T0, T0, T0, later]
    assert [r.attempts for r in rows] == [0, 0, 0, 0]  # neither charges an attempt
    with db.transaction() as session:
        taken = outbox.claim_next(session, "c", T0, lease)
        assert outbox.claim_next(session, "c", T0, lease) is None
    assert taken is not None and taken.id == ids[2]  # released: at once; deferred: later
    assert not taken.again  # given back untried: not a possible duplicate


def test_a_row_marked_sent_is_never_sent_again(db: Database) -> None:
    [row_id] = enqueue(db, reply())
    lease = timedelta(minutes=5)
    with db.transaction() as session:
        outbox.claim_next(session, "a", T0, lease)
        assert outbox.mark_sent(session, [row_id], T0) == {row_id}
        # A second sender that took the row after a's lease ran out, too late.
        assert outbox.mark_sent(session, [row_id], T0) == set()
        assert outbox.record_failure(session, row_id, "550 late", None) is None
        assert outbox.claim_next(session, "b", T0 + lease * 2, lease) is None
    row = row_of(db, row_id)
    assert (row.status, row.attempts, row.last_error) == ("sent", 1, None)


def test_release_dead_gives_back_the_rows_of_dead_claimers(db: Database) -> None:
    ids = enqueue(db, *(reply(n) for n in range(3)))
    lease = timedelta(minutes=5)
    with db.transaction() as session:
        outbox.claim_next(session, "host:1:dead", T0, lease)
        outbox.claim_next(session, "host:1:dead", T0, lease)
        outbox.claim_next(session, "host:2:alive", T0, lease)
        assert outbox.release_dead(session, lambda claimer: claimer.endswith("dead")) == 2
        taken = [outbox.claim_next(session, "host:3:new", T0, lease) for _ in range(3)]
    assert [t.id for t in taken if t is not None] == ids[:2]
    assert all(t.again for t in taken if t is not None)  # they may have gone out
    assert row_of(db, ids[2]).claimed_by == "host:2:alive"


# --- pbm outbox list / retry -----------------------------------------------------------


def write_config(tmp_path: Path, db: Database | None = None) -> Path:
    path = tmp_path / "pbm.toml"
    url = f"sqlite:///{tmp_path / 'pbm.sqlite3'}"
    if db is not None:
        url = db.engine.url.render_as_string(hide_password=False)
    path.write_text(f'[database]\nurl = "{url}"\n[mail]\naddress = "pbm@example.org"\n')
    return path


def test_cli_list_and_retry(db: Database, tmp_path: Path) -> None:
    failed, sent, pending = enqueue(
        db, reply(1, subject="S" * 60), reply(2), reply(3, subject="waiting")
    )
    with db.transaction() as session:
        outbox.record_failure(
            session, failed, "550 5.1.1 <player1@example.net>: no such user", None
        )
        outbox.mark_sent(session, [sent], T0)
    runner = CliRunner()
    obj = {"config_file": str(write_config(tmp_path, db))}

    result = runner.invoke(outbox_cli, ["list"], obj=obj)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "ATTEMPTS", "TO", "SUBJECT", "LAST", "ERROR"]
    assert len(lines) == 2
    assert lines[1].split()[:5] == [str(pending), "pending", "0", "player3@example.net", "waiting"]

    result = runner.invoke(outbox_cli, ["list", "--status", "all"], obj=obj)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 4
    # Aligned: every column starts at the same place on every line.
    start = lines[0].index("SUBJECT")
    assert all(line[start - 2 : start] == "  " for line in lines[1:])
    assert lines[1][start:].startswith("S" * 37 + "...")
    assert "550 5.1.1 <player1@example.net>: no such user" in lines[1]

    result = runner.invoke(outbox_cli, ["retry"], obj=obj)
    assert result.exit_code != 0 and "--all-failed" in result.output

    result = runner.invoke(outbox_cli, ["retry", str(sent)], obj=obj)
    assert result.exit_code == 1
    assert f"outbox {sent}: not requeued: already sent" in result.output

    result = runner.invoke(outbox_cli, ["retry", "--all-failed"], obj=obj)
    assert result.exit_code == 0, result.output
    assert f"requeued 1: {failed}" in result.output
    assert row_of(db, failed).status == "pending"
    assert row_of(db, failed).attempts == 0

    result = runner.invoke(outbox_cli, ["list", "--status", "failed"], obj=obj)
    assert result.output.strip() == "no failed mail in the outbox"


def test_cli_without_a_database(tmp_path: Path) -> None:
    obj = {"config_file": str(write_config(tmp_path))}
    result = CliRunner().invoke(outbox_cli, ["list"], obj=obj)
    assert result.exit_code == 1
    assert "pbm init" in result.output
    assert not (tmp_path / "pbm.sqlite3").exists()


def test_cli_with_an_uninitialised_database(tmp_path: Path) -> None:
    Database.open(f"sqlite:///{tmp_path / 'pbm.sqlite3'}").close()
    with sqlite3.connect(tmp_path / "pbm.sqlite3") as conn:
        conn.execute("CREATE TABLE unrelated (x)")
    obj = {"config_file": str(write_config(tmp_path))}
    result = CliRunner().invoke(outbox_cli, ["list"], obj=obj)
    assert result.exit_code == 1
    assert "no pbm database" in result.output and "pbm init" in result.output
    with sqlite3.connect(tmp_path / "pbm.sqlite3") as conn:  # nothing created by a look
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    assert tables == {"unrelated"}
