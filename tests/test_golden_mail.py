"""Golden transcript: every reply the mail pipeline writes, compared with a stored copy.

A real ``pbm serve`` receives a scripted correspondence over SMTP: sign-ups,
help, both published sample games (standard and Pari) moved in subject, body
and reply mode with comments, subscribers, chat, undo asked and accepted or
refused, queued and conditional moves, errors of every kind, vacations,
ratings and a cancelled board. After each mail the test waits until the
server has acted on it and reads the replies it queued (outbox rows: to,
subject, body) from the server's own database. The transcript, with times
and Message-IDs masked, must equal ``tests/golden/mail_pipeline.txt``.

The transcript was first written by the server as it was before the inside
was rebuilt (issue 11); a change to what players receive shows here as a
diff. To accept an intended change: ``PBM_GOLDEN_UPDATE=1 pytest
tests/test_golden_mail.py`` and read the diff of the golden file.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mailserver import SERVER_ADDRESS, PbmServer, maildir_mail

pytestmark = pytest.mark.e2e

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden" / "mail_pipeline.txt"
SECRET = "golden-secret"
ALICE, BOB, CAROL = "alice@example.org", "bob@example.net", "carol@example.com"
PASSWORDS = {"alice": "pw-a", "bob": "pw-b", "carol": "pw-c"}
ADDRESSES = {"alice": ALICE, "bob": BOB, "carol": CAROL}

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]|\s*\n\s*)\d{2}:\d{2}(:\d{2})?")  # may wrap
_MSGID = re.compile(r"<[^<>@\s]+@[^<>@\s]+>")
_DAY = re.compile(r"\b(19|20)\d{2}\b")


def sample_moves(name: str) -> list[str]:
    """The moves of a published record, as written (comments and result words dropped)."""
    text = (DATA / name).read_text(encoding="utf-8")
    text = re.sub(r"\[[^\]]*\]", " ", text)  # tags, and brackets inside comments
    text = re.sub(r"\([^)]*\)", " ", text)  # comments
    moves = []
    for token in text.split():
        token = re.sub(r"^\d+\.", "", token)
        if re.match(r"^[a-g][1-7]", token):
            moves.append(token)
    return moves


def token_address(board: int, userid: str) -> str:
    """The reply address of ``userid`` on ``board``: its form is a contract with old mail."""
    digest = hmac.new(SECRET.encode(), f"{board}.{userid}".encode(), hashlib.sha256)
    local, _, domain = SERVER_ADDRESS.partition("@")
    return f"{local}+{board}.{userid}.{digest.hexdigest()[:10]}@{domain}"


def mask(text: str) -> str:
    text = _TIME.sub("YYYY-MM-DD HH:MM", text)
    text = _MSGID.sub("<MESSAGE-ID>", text)
    return _DAY.sub("YYYY", text)


@dataclass
class Correspondence:
    """Sends mail to the server and writes down what each mail brought back."""

    server: PbmServer
    lines: list[str] = field(default_factory=list)
    sent: int = 0
    seen_outbox: int = 0
    last: dict[str, tuple[str, str]] = field(default_factory=dict)  # address -> (subject, body)

    def query(self, sql: str) -> list[tuple[object, ...]]:
        db = self.server.root / "data" / "pbm.sqlite3"
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return list(con.execute(sql))

    def mail(
        self,
        frm: str,
        subject: str,
        body: str = "",
        *,
        to: str = SERVER_ADDRESS,
        note: str = "",
    ) -> list[tuple[str, str, str]]:
        """Send one mail and wait until the server has acted on it; its replies."""
        self.sent += 1
        self.server.send(frm, subject, body, to=to)
        deadline = time.monotonic() + 60
        while True:
            ((received,),) = self.query("SELECT count(*) FROM inbox")
            ((waiting,),) = self.query("SELECT count(*) FROM inbox WHERE status = 'new'")
            if received == self.sent and waiting == 0:
                break
            assert time.monotonic() < deadline, f"mail {self.sent} was not acted on"
            time.sleep(0.02)
        rows = self.query(
            f"SELECT id, to_addr, subject, body FROM outbox WHERE id > {self.seen_outbox} "
            "ORDER BY id"
        )
        if rows:
            self.seen_outbox = max(int(str(r[0])) for r in rows)
        replies = sorted((str(r[1]), str(r[2]), str(r[3])) for r in rows)
        local, _, domain = to.partition("@")
        shown_to = "" if to == SERVER_ADDRESS else f" To {local.rpartition('.')[0]}.TOKEN@{domain}"
        self.lines.append(f"=== {self.sent}. From {frm}{shown_to}: {subject}")
        if note:
            self.lines.append(f"    ({note})")
        for line in body.strip("\n").splitlines()[:3] if to == SERVER_ADDRESS else []:
            self.lines.append(f"    | {line}")
        for addr, subj, text in replies:
            self.lines.append(f"--- to {addr}: {mask(subj)}")
            self.lines.extend(mask(text).rstrip("\n").splitlines())
            self.last[addr] = (subj, text)
        if not replies:
            self.lines.append("--- (no reply)")
        return replies

    def answer(self, frm: str, first_line: str) -> None:
        """Answer the last mail ``frm`` got by its Reply-To, as a mail client does."""
        subject, _ = self.last[frm]
        self._reply(frm, first_line, str(maildir_mail(self.server.root, frm, subject)["Reply-To"]))

    def reply(self, frm: str, board: int, userid: str, first_line: str) -> None:
        """Answer the last mail ``frm`` got by its reply address, computed (a contract)."""
        self._reply(frm, first_line, token_address(board, userid))

    def _reply(self, frm: str, first_line: str, to: str) -> None:
        """``first_line`` to ``to``, quoting the last mail ``frm`` got as clients do."""
        subject, body = self.last[frm]
        quoted = "\n".join("> " + ln for ln in body.splitlines())
        self.mail(
            frm,
            f"Re: {subject}",
            f"{first_line}\n\nOn Sunday, PBM Server wrote:\n{quoted}\n",
            to=to,
            note=f"reply: {first_line}",
        )


def play_standard(c: Correspondence) -> None:
    board = 1
    c.mail(ALICE, "accasta challenge alice bob", "Fancy a game?")
    c.answer(BOB, "accept")
    c.mail(CAROL, f"accasta subscribe {board} carol pw-c")
    moves = sample_moves("sample_standard.txt")
    players = [("alice", ALICE), ("bob", BOB)]
    for i, move in enumerate(moves):
        uid, addr = players[i % 2]
        pw = PASSWORDS[uid]
        if i == 2:  # errors first: an illegal move, a wrong password, a bad form, a stale #N
            c.mail(ALICE, f"accasta move {board} alice pw-a a1:C-d4")
            c.mail(ALICE, f"accasta move {board} alice wrong {move}")
            c.mail(ALICE, f"accasta move {board} alice")
            c.mail(ALICE, f"accasta move {board} alice pw-a {move}#9")
            c.mail(BOB, f"accasta move {board} bob pw-b {moves[3]}")
        if i == 4:  # alice asks to take back, bob agrees, alice plays it again
            c.mail(ALICE, f"accasta move {board} alice pw-a {moves[4]}")
            c.reply(ALICE, board, "alice", "undo")
            c.reply(BOB, board, "bob", "accept")
        if i == 6:  # bob queues his answer to alice's move, as a conditional reply
            c.reply(BOB, board, "bob", f"queue {moves[7]} if {move}")
        if i == 7:
            continue  # played from bob's queue
        if i == 9:
            c.reply(BOB, board, "bob", "chat Nice move, I did not see that one.")
            c.mail(CAROL, f"accasta chat {board} carol pw-c", "Exciting game!")
            c.mail(BOB, f"accasta show {board}")
            c.mail(BOB, f"accasta history {board}")
            c.mail(ALICE, f"accasta moves {board}")
        mode = i % 3
        if mode == 0:
            c.mail(addr, f"accasta move {board} {uid} {pw} {move}#{i + 1}", f"Move {i + 1}.")
        elif mode == 1:
            c.mail(addr, "my move", f"Hello!\naccasta move {board} {uid} {pw} {move}\nBye.")
        else:
            c.reply(addr, board, uid, move)
    # The record ends "Black resigns": bob resigns by reply.
    c.reply(BOB, board, "bob", "resign")


def play_pari(c: Correspondence) -> None:
    board = 2
    c.mail(ALICE, "accasta challenge alice bob --variant=pari --nagtime=3 --forfeittime=10")
    c.mail(BOB, f"accasta accept {board} bob pw-b")
    moves = sample_moves("sample_pari.txt")
    players = [("alice", ALICE), ("bob", BOB)]
    for i, move in enumerate(moves):
        uid, addr = players[i % 2]
        if i == 3:  # bob asks to undo, alice refuses
            c.reply(BOB, board, "bob", "undo")
            c.reply(ALICE, board, "alice", "reject")
        if i == 5:  # bob queues two alternatives, then forgets them
            c.reply(BOB, board, "bob", f"queue {moves[6]} if {moves[4]}")
            c.mail(BOB, f"accasta queue {board} bob pw-b {moves[6]}")
            c.reply(BOB, board, "bob", "queue clear")
        if i % 2 == 0:
            c.mail(addr, f"accasta move {board} {uid} {PASSWORDS[uid]} {move}")
        else:
            c.reply(addr, board, uid, move)
    # "Weiß gibt auf": White resigns.
    c.mail(ALICE, f"accasta resign {board} alice pw-a", "Well played.")


def correspondence(c: Correspondence) -> None:
    for uid, addr in ADDRESSES.items():
        c.mail(addr, f"signup {uid} {PASSWORDS[uid]}")
        c.answer(addr, "Yes, that was me.")
    c.mail(ALICE, "signup alice other-pw")
    c.mail("dave@example.com", "Hello", "What is this?")
    c.mail("dave@example.com", "help accasta")  # a stranger: his one answer today is spent
    c.mail(ALICE, "help accasta")
    play_standard(c)
    c.mail(ALICE, "vacation alice pw-a 3")
    play_pari(c)
    c.mail(ALICE, "vacation alice pw-a off")
    c.mail(CAROL, "accasta challenge carol alice --castle_win=next_turn")
    c.mail(CAROL, "games carol")
    c.mail(CAROL, "accasta cancel 3 carol pw-c")
    c.mail(BOB, "accasta ratings")
    c.mail(BOB, "password bob pw-b pw-b2")
    c.mail(BOB, "address bob pw-b2 bob@example.com")
    c.answer("bob@example.com", "Yes, my new address.")
    c.mail(ALICE, "shogi move 4 alice pw-a e4")


def test_golden_transcript(tmp_path: Path) -> None:
    server = PbmServer(tmp_path, transport="maildir", extra_env={"PBM_MAIL_SECRET": SECRET})
    server.start()
    try:
        c = Correspondence(server)
        correspondence(c)
    finally:
        server.stop()
    transcript = "\n".join(c.lines) + "\n"
    if os.environ.get("PBM_GOLDEN_UPDATE"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(transcript, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    assert transcript == expected
