"""The listener (pbm.smtp) over real loopback connections.

The listener runs in this process, on an event loop of its own (a thread), as
``pbm serve`` starts it (``listen``), over a real SQLite file; the tests are
its clients, with smtplib. Client rates run on a clock the test moves by hand:
nothing sleeps to let time pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import shutil
import smtplib
import socket
import sqlite3
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from pbm.config import Config, DatabaseConfig, MailConfig, SmtpConfig
from pbm.mail.addresses import CHAT, FOLLOW, bounce_address, context_address, token_address
from pbm.smtp import codes
from pbm.smtp.handler import InboxHandler
from pbm.smtp.lifecycle import Listener, listen
from pbm.smtp.rates import ClientRates, SlidingWindow
from pbm.store.engine import Database

WAIT = 30.0  # seconds: a deadline for what should happen at once
ADDRESS = "pbm@example.org"
SECRET = "test-secret"
STRANGER = "someone@elsewhere.example"


@dataclass
class RateClock:
    """The monotonic clock of the client rates, moved by the test."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Running:
    """A listener started by ``listen`` on an event loop in a thread of its own."""

    config: Config
    rate_clock: RateClock = field(default_factory=RateClock)
    listener: Listener | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _error: BaseException | None = None
    _thread: threading.Thread | None = None

    def start(self) -> Running:
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()
        assert self._ready.wait(WAIT), "the listener did not start"
        if self._error is not None:
            self._thread.join(WAIT)
            raise self._error
        return self

    async def _main(self) -> None:
        db = Database.open(self.config)
        try:
            handler = InboxHandler(db, self.config, asyncio.Event(), rate_clock=self.rate_clock)
            self.listener = await listen(self.config, handler)
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        except BaseException as exc:
            self._error = exc
            db.close()
            self._ready.set()
            return
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.listener.close()
            db.close()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(WAIT)
            assert not self._thread.is_alive()

    @property
    def port(self) -> int:
        assert self.listener is not None
        return self.listener.address[1]

    def smtp(self, source: str = "127.0.0.1") -> smtplib.SMTP:
        return smtplib.SMTP("127.0.0.1", self.port, timeout=WAIT, source_address=(source, 0))

    def lmtp(self) -> smtplib.LMTP:
        assert self.listener is not None and self.listener.unix_path is not None
        return smtplib.LMTP(str(self.listener.unix_path), timeout=WAIT)


@pytest.fixture
def db_file(tmp_path: Path, sqlite_template: Path) -> Path:
    path = tmp_path / "pbm.sqlite3"
    shutil.copyfile(sqlite_template, path)
    return path


def site_config(db_file: Path, **smtp: object) -> Config:
    return Config(
        database=DatabaseConfig(url=f"sqlite:///{db_file}"),
        mail=MailConfig(address=ADDRESS, secret=SECRET),
        smtp=replace(SmtpConfig(listen="127.0.0.1:0"), **smtp),  # type: ignore[arg-type]
    )


@pytest.fixture
def smtp_listener(db_file: Path) -> Iterator[Running]:
    running = Running(site_config(db_file)).start()
    yield running
    running.stop()


@pytest.fixture
def socket_path(tmp_path: Path) -> Path:
    return tmp_path / "pbm.sock"


@pytest.fixture
def lmtp_listener(db_file: Path, socket_path: Path) -> Iterator[Running]:
    running = Running(site_config(db_file, protocol="lmtp", listen=f"unix:{socket_path}")).start()
    yield running
    running.stop()


def sql(db_file: Path, statement: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(db_file)) as conn, conn:
        return conn.execute(statement).fetchall()


def inbox_recipients(db_file: Path) -> list[list[str]]:
    """The envelope recipients of each inbox row, in order."""
    rows = sql(db_file, "SELECT rcpt_to FROM inbox ORDER BY id")
    return [str(r[0]).split("\n") for r in rows]


def mail(n: int = 1) -> bytes:
    return (
        f"From: alice@example.org\r\nTo: {ADDRESS}\r\nSubject: help\r\n"
        f"Message-ID: <{n}@client.test>\r\n\r\nhelp\r\n"
    ).encode()


def reply(code_and_text: tuple[int, bytes]) -> str:
    code, text = code_and_text
    return f"{code} {text.decode()}"


def bob(board: int) -> str:
    """bob's reply-token address for ``board``."""
    return token_address(ADDRESS, SECRET, board, "bob")


# -- recipients ---------------------------------------------------------------------------


def test_recipients_past_the_limit_get_452_and_the_mail_goes_to_the_first_100(
    smtp_listener: Running, db_file: Path
) -> None:
    """RFC 5321 4.5.3.1.8/.10: RCPT 101..150 get 452; the mail is stored once, for the 100."""
    recipients = [bob(board) for board in range(1, 151)]
    with smtp_listener.smtp() as s:
        s.ehlo("client.test")
        assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
        answers = [s.docmd(f"RCPT TO:<{rcpt}>") for rcpt in recipients]
        # Someone else's address is still refused as such (we relay nothing).
        assert s.docmd(f"RCPT TO:<{STRANGER}>")[0] == 550
        assert [a[0] for a in answers[:100]] == [250] * 100
        assert {reply(a) for a in answers[100:]} == {codes.TOO_MANY_RECIPIENTS}
        assert len(answers[100:]) == 50
        code, text = s.data(mail())
        assert code == 250, text
    assert inbox_recipients(db_file) == [recipients[:100]]


def test_smtplib_sendmail_over_the_limit_delivers_to_the_first(
    smtp_listener: Running, db_file: Path
) -> None:
    """A client's ordinary sendmail: the refused recipients come back to it, the rest is kept."""
    recipients = [bob(board) for board in range(1, 103)]
    with smtp_listener.smtp() as s:
        refused = s.sendmail("alice@example.org", recipients, mail())
    assert {r: code for r, (code, _) in refused.items()} == {
        recipients[100]: 452,
        recipients[101]: 452,
    }
    assert inbox_recipients(db_file) == [recipients[:100]]


@pytest.mark.parametrize("protocol", ["smtp", "lmtp"])
def test_unknown_reply_addresses_pass_rcpt_no_more(
    db_file: Path, socket_path: Path, protocol: str
) -> None:
    """Issue 35, case 16: ``RCPT TO:<pbm+1.bob.0000000000@...>`` got 250, and so did a
    bounce address with a wrong signature. What ``mail.secret`` alone signs (board, chat,
    follow and bounce addresses) is checked at RCPT: 550, nothing stored. Account and
    reset addresses need the account's nonce (the database): they pass by their form and
    the worker checks them."""
    listen = f"unix:{socket_path}" if protocol == "lmtp" else "127.0.0.1:0"
    running = Running(site_config(db_file, protocol=protocol, listen=listen)).start()
    forged = [
        "pbm+1.bob.0000000000@example.org",  # the attack as written
        bob(1).replace(".bob.", ".eve."),  # bob's token under another name
        bob(2).replace("+2.", "+3."),  # on another board
        context_address(ADDRESS, "another-secret", CHAT, "bob", board=1),
        context_address(ADDRESS, "another-secret", FOLLOW, "bob", board=1),
        bounce_address(ADDRESS, "another-secret", 7),  # a bounce address, wrongly signed
        "pbm+bounce-7.0000000000@example.org",
    ]
    good = [
        bob(1),
        context_address(ADDRESS, SECRET, CHAT, "bob", board=1),
        context_address(ADDRESS, SECRET, FOLLOW, "bob", board=1),
        bounce_address(ADDRESS, SECRET, 7),
        # Checked by the worker, which knows the account's nonce:
        "pbm+a.bob.0000000000@example.org",
        "pbm+r.bob.0000000000@example.org",
    ]
    try:
        with running.lmtp() if protocol == "lmtp" else running.smtp() as s:
            s.ehlo("client.test")
            assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
            for address in forged:
                assert reply(s.docmd(f"RCPT TO:<{address}>")) == (
                    codes.NO_SUCH_ADDRESS.format(address=address)
                ), address
            for address in good:
                assert s.docmd(f"RCPT TO:<{address}>")[0] == 250, address
            assert s.docmd(f"RCPT TO:<{STRANGER}>")[0] == 550  # not ours at all: as before
            assert s.docmd("RSET")[0] == 250
            assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
            for address in forged:
                assert s.docmd(f"RCPT TO:<{address}>")[0] == 550
            assert s.docmd("DATA")[0] == 503  # no recipient was taken: nothing to send
    finally:
        running.stop()
    assert inbox_recipients(db_file) == []


# -- per-client rates (SMTP) --------------------------------------------------------------


def test_the_61st_mail_in_a_minute_gets_451_and_is_taken_when_the_minute_has_passed(
    smtp_listener: Running, db_file: Path
) -> None:
    clock = smtp_listener.rate_clock
    with smtp_listener.smtp() as s:
        for n in range(30):
            s.sendmail("alice@example.org", [ADDRESS], mail(n))
        clock.advance(30)
        for n in range(30, 60):
            s.sendmail("alice@example.org", [ADDRESS], mail(n))
        # The 61st MAIL within the minute.
        assert reply(s.docmd("MAIL FROM:<alice@example.org>")) == codes.TOO_MANY_MAILS
        assert s.docmd(f"RCPT TO:<{ADDRESS}>")[0] == 503  # no transaction was begun
        s.rset()
        # From another address: its own minute.
        with smtp_listener.smtp(source="127.0.0.2") as other:
            other.sendmail("carol@example.org", [ADDRESS], mail(100))
        # A sliding window: 30 seconds on, the first 30 have left it, the second 30 not.
        clock.advance(30)
        for n in range(60, 90):
            s.sendmail("alice@example.org", [ADDRESS], mail(n))
        assert reply(s.docmd("MAIL FROM:<alice@example.org>")) == codes.TOO_MANY_MAILS
        s.rset()
        clock.advance(30)
        s.sendmail("alice@example.org", [ADDRESS], mail(90))
    assert len(inbox_recipients(db_file)) == 60 + 1 + 30 + 1


def greeting(port: int, source: str = "127.0.0.1") -> bytes:
    """Everything the listener says to a connection that says nothing, until it closes.

    A connection that is served gets its 220 and stays open: only the greeting is read.
    """
    with socket.create_connection(("127.0.0.1", port), WAIT, (source, 0)) as sock:
        got = b""
        while not got.endswith(b"\r\n"):
            chunk = sock.recv(4096)
            if not chunk:
                return got
            got += chunk
        if got.startswith(b"220"):
            return got
        sock.settimeout(WAIT)
        rest = sock.recv(4096)  # b"": closed by the server
        return got + rest + (b"<closed>" if rest == b"" else b"")


def test_the_61st_connection_in_a_minute_is_greeted_with_421_and_closed(
    smtp_listener: Running,
) -> None:
    clock = smtp_listener.rate_clock
    for _ in range(60):
        with smtp_listener.smtp() as s:
            assert s.noop()[0] == 250
    refused = (codes.TOO_MANY_CONNECTIONS + "\r\n").encode() + b"<closed>"
    assert greeting(smtp_listener.port) == refused  # RFC 5321 3.8
    with pytest.raises(smtplib.SMTPConnectError) as exc:
        smtp_listener.smtp()
    assert exc.value.smtp_code == 421
    # Refusals are not counted; another address has its own minute.
    assert greeting(smtp_listener.port, source="127.0.0.2").startswith(b"220 ")
    clock.advance(59)
    assert greeting(smtp_listener.port) == refused
    clock.advance(1)
    with smtp_listener.smtp() as s:
        s.sendmail("alice@example.org", [ADDRESS], mail())


# -- LMTP (RFC 2033) ----------------------------------------------------------------------


def lmtp_data(s: smtplib.LMTP, raw: bytes, replies: int) -> list[str]:
    """DATA, then the per-recipient replies (smtplib would read only the first)."""
    assert s.docmd("DATA")[0] == 354
    s.send(raw + b".\r\n")
    return [reply(s.getreply()) for _ in range(replies)]


def test_lmtp_answers_once_per_accepted_recipient(lmtp_listener: Running, db_file: Path) -> None:
    """RFC 2033 4.2: one reply per successful RCPT, in order, a refused one left out."""
    with lmtp_listener.lmtp() as s:
        code, text = s.ehlo("mx.example.org")  # smtplib's LMTP says LHLO
        assert code == 250, text
        assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
        assert s.docmd(f"RCPT TO:<{ADDRESS}>")[0] == 250
        assert reply(s.docmd(f"RCPT TO:<{STRANGER}>")) == codes.NO_SUCH_USER.format(
            address=STRANGER
        )
        assert s.docmd(f"RCPT TO:<{bob(1)}>")[0] == 250
        answers = lmtp_data(s, mail(), 2)
        assert answers == [
            codes.LMTP_QUEUED.format(address=ADDRESS, id=1),
            codes.LMTP_QUEUED.format(address=bob(1), id=1),
        ]
        assert s.noop()[0] == 250  # nothing more was said: client and server agree
        # One recipient, the way a mail server mostly hands mail over: smtplib reads it.
        assert s.sendmail("alice@example.org", [bob(2)], mail(2)) == {}
    assert inbox_recipients(db_file) == [[ADDRESS, bob(1)], [bob(2)]]


def test_lmtp_a_failed_commit_answers_451_for_every_recipient(
    lmtp_listener: Running, db_file: Path
) -> None:
    """The inbox cannot take the mail: each recipient gets its 451, and the retry goes in."""
    sql(
        db_file,
        "CREATE TRIGGER inbox_full BEFORE INSERT ON inbox "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    )
    with lmtp_listener.lmtp() as s:
        s.ehlo("mx.example.org")
        assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
        assert s.docmd(f"RCPT TO:<{ADDRESS}>")[0] == 250
        assert s.docmd(f"RCPT TO:<{bob(1)}>")[0] == 250
        answers = lmtp_data(s, mail(), 2)
        assert answers == [
            codes.LMTP_TRY_AGAIN.format(address=ADDRESS),
            codes.LMTP_TRY_AGAIN.format(address=bob(1)),
        ]
        assert "database" not in " ".join(answers)  # nothing of our internals on the wire
        assert s.noop()[0] == 250
        assert inbox_recipients(db_file) == []
        sql(db_file, "DROP TRIGGER inbox_full")
        # The mail server's retry.
        assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
        assert s.docmd(f"RCPT TO:<{ADDRESS}>")[0] == 250
        assert s.docmd(f"RCPT TO:<{bob(1)}>")[0] == 250
        assert [a[:3] for a in lmtp_data(s, mail(), 2)] == ["250", "250"]
    assert inbox_recipients(db_file) == [[ADDRESS, bob(1)]]


def test_lmtp_has_no_client_rates(lmtp_listener: Running) -> None:
    """Behind a mail server every mail comes from one client, which keeps its own rates."""
    for _ in range(61):
        with lmtp_listener.lmtp() as s:
            s.ehlo("mx.example.org")
    with lmtp_listener.lmtp() as s:
        s.ehlo("mx.example.org")
        for _ in range(61):
            assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
            s.rset()


def test_lmtp_over_tcp_says_lhlo_not_ehlo(db_file: Path) -> None:
    running = Running(site_config(db_file, protocol="lmtp")).start()
    try:
        assert running.listener is not None
        assert str(running.listener) == f"LMTP on 127.0.0.1:{running.port}"
        with smtplib.LMTP("127.0.0.1", running.port, timeout=WAIT) as s:
            assert s.docmd("EHLO", "mx.example.org")[0] == 500
            assert s.ehlo("mx.example.org")[0] == 250
            assert s.sendmail("alice@example.org", [ADDRESS], mail()) == {}
    finally:
        running.stop()


# -- the unix socket ----------------------------------------------------------------------


def stale_socket(path: Path) -> None:
    """A socket file like the one a killed server leaves: nobody listens on it."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()


def test_unix_socket_stale_file_replaced_group_writable_removed_at_stop(
    db_file: Path, socket_path: Path
) -> None:
    stale_socket(socket_path)
    config = site_config(db_file, protocol="lmtp", listen=f"unix:{socket_path}")
    running = Running(config).start()
    try:
        assert str(running.listener) == f"LMTP on unix:{socket_path}"
        mode = socket_path.stat().st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o660  # the mail server's user, in our group, may write
        # A second server on the same socket is refused; the first keeps it.
        with pytest.raises(OSError) as exc:
            Running(config).start()
        assert exc.value.errno == errno.EADDRINUSE
        with running.lmtp() as s:
            assert s.ehlo("mx.example.org")[0] == 250
    finally:
        running.stop()
    assert not socket_path.exists()


def test_unix_socket_never_replaces_a_file_that_is_no_socket(
    db_file: Path, socket_path: Path
) -> None:
    socket_path.write_text("not a socket")
    config = site_config(db_file, protocol="lmtp", listen=f"unix:{socket_path}")
    with pytest.raises(OSError) as exc:
        Running(config).start()
    assert exc.value.errno == errno.EEXIST
    assert socket_path.read_text() == "not a socket"


# -- the sliding window itself ------------------------------------------------------------


def test_sliding_window_forgets_quiet_clients_and_holds_at_most_max_keys() -> None:
    clock = RateClock()
    window = SlidingWindow(2, clock=clock, max_keys=100)
    assert window.admit("a") and window.admit("a") and not window.admit("a")
    for n in range(1000):  # a flood of addresses
        assert window.admit(f"10.0.{n // 256}.{n % 256}")
    assert len(window) == 100
    clock.advance(60)
    assert window.admit("b")
    assert len(window) == 1  # everyone quiet for a minute is forgotten
    assert window.admit("a")


def test_client_rates_count_addresses_not_ports_and_zero_is_no_limit() -> None:
    rates = ClientRates(1, 0, clock=RateClock())
    assert rates.admit_connection(("192.0.2.1", 4000))
    assert not rates.admit_connection(("192.0.2.1", 4001))
    assert rates.admit_connection(("2001:db8::1", 4000, 0, 0))
    assert all(rates.admit_mail(("192.0.2.1", 4000)) for _ in range(1000))
