"""End to end: the passwords players mail in leave no byte in the database once pruned.

A real ``pbm serve`` (replies to a Maildir) receives two sign-ups (confirmed
by reply), a challenge (accepted by reply), two moves and two refused moves,
each with a real password in it; a refusal quotes the command with the
password masked. Once every mail is acted
on and every reply sent, the server stops and ``pbm prune --now`` runs as if
8 days had passed. Then every file of the database (``pbm.sqlite3`` and its
``-wal`` and ``-shm``) is read as bytes: neither password may occur in it.
The same holds when ``pbm prune`` runs beside the running server.

"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import string
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mailserver import SERVER_ADDRESS, WAIT, PbmServer, maildir_mail, until

pytestmark = pytest.mark.e2e

ALICE, BOB = "alice@example.org", "bob@example.net"
OPENING = ("a4:C+b4,H-c6,S-b5", "f4:H-e5,S+f3")


def new_password() -> str:
    """16 random letters and digits: found in the files only if stored there."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(16))


def database_files(root: Path) -> dict[str, bytes]:
    """Every file of the SQLite database, by name."""
    data = root / "data"
    return {
        p.name: p.read_bytes()
        for p in (data / "pbm.sqlite3", data / "pbm.sqlite3-wal", data / "pbm.sqlite3-shm")
        if p.exists()
    }


def holding(files: dict[str, bytes], password: str) -> list[str]:
    return [name for name, content in files.items() if password.encode() in content]


class Site:
    """Mail to a running server, and its database looked at read-only."""

    def __init__(self, server: PbmServer) -> None:
        self.server = server
        self.sent = 0

    def query(self, sql: str) -> list[tuple[object, ...]]:
        db = self.server.root / "data" / "pbm.sqlite3"
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return list(con.execute(sql))

    def reply(self, frm: str, words: str, first_line: str) -> None:
        """Answer the newest mail to ``frm`` about ``words`` by its Reply-To."""
        msg = maildir_mail(self.server.root, frm, words)
        self.mail(frm, f"Re: {msg['Subject']}", str(msg["Reply-To"]), body=first_line)

    def count(self, sql: str) -> int:
        ((n,),) = self.query(sql)
        return int(str(n))

    def mail(self, frm: str, subject: str, to: str = SERVER_ADDRESS, body: str = "") -> None:
        """Send one mail and wait until the server has acted on it and sent every reply."""
        self.sent += 1
        self.server.send(frm, subject, body, to=to)
        until(
            lambda: (
                self.count("SELECT count(*) FROM inbox") == self.sent
                and self.count("SELECT count(*) FROM inbox WHERE status = 'new'") == 0
                and self.count("SELECT count(*) FROM outbox WHERE status != 'sent'") == 0
            ),
            timeout=2 * WAIT,
        )


def correspond(site: Site, pw_alice: str, pw_bob: str) -> None:
    """Sign-ups, a challenge, two moves and two refused ones, every password written out."""
    site.mail(ALICE, f"signup alice {pw_alice}")
    site.reply(ALICE, "confirm your account", "yes")
    site.mail(BOB, f"signup bob {pw_bob}")
    site.reply(BOB, "confirm your account", "yes")
    site.mail(ALICE, "accasta challenge alice bob")
    site.reply(BOB, "challenge from alice", "accept")
    ((board,),) = site.query("SELECT board FROM games")
    site.mail(ALICE, f"accasta move {board} alice {pw_alice} {OPENING[0]}")
    site.mail(BOB, f"accasta move {board} bob {pw_bob} {OPENING[1]}")
    site.mail(BOB, f"accasta move {board} bob {pw_bob} a1:C-d1")  # not his turn
    site.mail(ALICE, f"accasta move {board} alice {pw_alice}x a1:C-d1")  # a typo: nearly hers
    assert site.count("SELECT count(*) FROM moves") == 2
    # The refusals quote the command with its password masked.
    refusals = " ".join(str(r[0]) for r in site.query("SELECT body FROM outbox WHERE is_error"))
    assert f"> accasta move {board} bob ****** a1:C-d1" in refusals
    assert f"> accasta move {board} alice ****** a1:C-d1" in refusals
    assert site.count("SELECT count(*) FROM inbox WHERE status != 'done'") == 0


def test_no_password_is_left_in_the_database_files_after_pbm_prune(tmp_path: Path) -> None:
    pw_alice, pw_bob = new_password(), new_password()
    server = PbmServer(tmp_path, transport="maildir")
    server.start()
    try:
        correspond(Site(server), pw_alice, pw_bob)
        acted_on = datetime.now(UTC)
    finally:
        assert server.stop() == 0
    before = database_files(tmp_path)
    # A mail carried out is kept without its passwords (issue 35, case 7): only the
    # masked command is in the files, before any pruning.
    assert holding(before, "signup bob ******")  # the test reads the files
    assert holding(before, pw_alice) == holding(before, pw_bob) == []

    # A week later nothing is erased yet; 8 days later everything is.
    week = (acted_on + timedelta(days=7) - timedelta(minutes=5)).isoformat()
    assert server.pbm("prune", "--now", week).startswith("erased 0 raw mails, 0 sent reply")
    later = (acted_on + timedelta(days=8)).isoformat()
    out = server.pbm("prune", "--now", later)
    assert out.startswith("erased 10 raw mails, "), out
    after = database_files(tmp_path)
    assert holding(after, pw_alice) == []
    assert holding(after, pw_bob) == []
    # What stays: who sent what when, and what became of it; the moves played.
    site = Site(server)
    assert site.count("SELECT count(*) FROM inbox WHERE length(raw) = 0") == 10
    assert site.count("SELECT count(*) FROM outbox WHERE body = ''") == site.count(
        "SELECT count(*) FROM outbox"
    )
    assert site.count("SELECT count(*) FROM moves") == 2
    assert server.pbm("prune", "--now", later).startswith("erased 0 raw mails, 0 sent reply")


def test_pbm_prune_beside_a_running_server_empties_its_wal_file(tmp_path: Path) -> None:
    pw_alice, pw_bob = new_password(), new_password()
    server = PbmServer(tmp_path, transport="maildir")
    server.start()
    try:
        correspond(Site(server), pw_alice, pw_bob)
        assert holding(database_files(tmp_path), pw_alice)
        later = (datetime.now(UTC) + timedelta(days=8)).isoformat()
        assert server.pbm("prune", "--now", later).startswith("erased 10 raw mails, ")
        files = database_files(tmp_path)  # the server still has the database open
        assert holding(files, pw_alice) == holding(files, pw_bob) == []
        assert len(files.get("pbm.sqlite3-wal", b"")) == 0
    finally:
        assert server.stop() == 0
