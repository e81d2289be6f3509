"""End to end: Hex by mail against a real ``pbm serve`` over real SMTP.

Two players sign up; challenges the rules refuse (a board of 40 cells a
side, of ``x``) are answered with Hex's own sentence; then a 13x13 board
is played to a win by replies to the board mails: the swap on move 2, a
``swap`` refused on move 3, a move written in two words (``g 7``), one by
a command in the subject, ``moves`` (the empty cells by row). The board
mail says who won; ``record`` brings the text record and the SGF, which
``pbm rules replay`` and the SGF reader take back. Nothing sleeps: every
wait is for a mail.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path

import pytest
from mailserver import PbmServer, Sink, about, body_of, challenge_accepted, reply_to, sign_up

from pbm.games.hex.sgf import read_sgf

pytestmark = pytest.mark.e2e

ALICE, BOB = "alice@example.org", "bob@example.net"
ENDED = r"- (\w+ to move|Red wins|Blue wins)$"


class Table:
    """One Hex board seen from both players' mailboxes."""

    def __init__(self, server: PbmServer, sink: Sink, command: str) -> None:
        self.server, self.sink = server, sink
        first = challenge_accepted(server, sink, ALICE, command, BOB)
        found = re.search(r"Board (\d+)", str(first["Subject"]))
        assert found is not None
        self.board = int(found.group(1))
        self.last = {ALICE: first, BOB: sink.wait_for(BOB, self.status("alice to move"))}

    def status(self, what: str) -> re.Pattern[str]:
        return re.compile(rf"Board {self.board} - {re.escape(what)}$")

    def reply(self, addr: str, text: str) -> None:
        """``text`` as the first line of a reply to ``addr``'s last board mail."""
        mail = self.last[addr]
        self.server.send(addr, f"Re: {mail['Subject']}", f"{text}\n", to=reply_to(mail))

    def answered(self) -> dict[str, EmailMessage]:
        """Both players' board mails after a move."""
        for addr in (ALICE, BOB):
            self.last[addr] = self.sink.wait_for(addr, re.compile(rf"Board {self.board} {ENDED}"))
        return self.last

    def refused(self, addr: str) -> str:
        """The error mail a refused reply of ``addr`` brings: its text."""
        return body_of(self.sink.wait_for(addr, self.status("error")))


def text_of(part: EmailMessage) -> str:
    """An attachment's text (a type other than text/* comes as bytes: UTF-8 here)."""
    content = part.get_content()
    return content.decode("utf-8") if isinstance(content, bytes) else str(content)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_hex_game_by_mail_from_the_challenge_to_the_records(
    server: PbmServer, sink: Sink, tmp_path: Path
) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")

    # Challenges the rules refuse: Hex's sentence, and nobody is challenged.
    for size in ("40", "x"):
        server.send(ALICE, f"hex challenge alice bob --size={size}")
        error = flat(body_of(sink.wait_for(ALICE, "error")))
        assert f"size cannot be '{size}': a Hex board is 5 to 19 cells a side" in error

    table = Table(server, sink, "hex challenge alice bob")  # 13x13, the swap rule on
    assert "Variant: standard (size=13, swap=on)" in body_of(table.last[ALICE])
    table.reply(ALICE, "c2")
    table.answered()
    table.reply(BOB, "swap")  # Red's c2 becomes Blue's b3, and Red moves again
    mails = table.answered()
    assert "2. swap (Red's c2 became Blue's b3)" in body_of(mails[BOB])

    # A second swap is no move 3: refused in Hex's words, nothing changes.
    table.reply(ALICE, "swap")
    assert "swap is only allowed as Blue's first move (move 2)" in table.refused(ALICE)
    table.reply(ALICE, "moves")
    listed = body_of(table.sink.wait_for(ALICE, table.status("legal moves"))).replace("\r", "")
    assert "Legal moves for alice (move 3):" in listed
    assert "168 empty cells, any of them a legal move" in listed
    assert re.search(r"^ 3: a3 c3-m3$", listed, re.MULTILINE)

    # Red runs a chain down column g; Blue answers on column a, which connects nothing.
    for row in range(1, 13):
        red = "g 7" if row == 7 else f"g{row}"  # a move in two words, as a reply may split it
        table.reply(ALICE, red)
        table.answered()
        if row == 5:  # a command in the subject, guarded by the move number
            server.send(BOB, f"hex move {table.board} bob pw-b a5#{2 * row + 2}", "Hm.\n")
        else:
            table.reply(BOB, f"a{row}")
        table.answered()
    table.reply(ALICE, "g13")
    mails = table.answered()
    for addr in (ALICE, BOB):
        assert about(mails[addr]).endswith(f"Hex Board {table.board} - Red wins")
        text = body_of(mails[addr])
        assert "alice (Red) wins (connection). Result 1-0." in text
        assert "Red wins: Red has connected top and bottom." in text
    assert re.search(r"\b15\. g7\b", body_of(mails[BOB]))  # the move written "g 7"

    # The records: the text record and the SGF, attached; both replay to the same end.
    table.reply(BOB, "record")
    record = table.sink.wait_for(BOB, table.status("record"))
    files = {
        str(part.get_filename()): (part.get_content_type(), text_of(part))
        for part in record.iter_attachments()
    }
    name = f"hex-board-{table.board}"
    assert files[f"{name}.sgf"][0] == "application/x-hex-sgf"
    assert files[f"{name}.txt"][0] == "text/plain"
    text = files[f"{name}.txt"][1]
    assert '[Red "alice"]' in text and '[Blue "bob"]' in text
    assert "1. c2 2. swap" in flat(text) and "27. g13" in flat(text)
    sgf = read_sgf(files[f"{name}.sgf"][1])
    assert (sgf.result, len(sgf.moves)) == ("1-0", 27)
    assert sgf.moves[1].notation == "swap" and sgf.moves[14].notation == "g7"
    path = tmp_path / f"{name}.txt"
    path.write_text(text, encoding="utf-8")
    replayed = server.pbm("rules", "replay", "--game", "hex", "--size", "13", str(path))
    assert "Red wins: Red has connected top and bottom." in replayed
    assert replayed.endswith("Result: 1-0 (connection) after 27 turns\n")
    sgf_path = tmp_path / f"{name}.sgf"
    sgf_path.write_text(files[f"{name}.sgf"][1], encoding="utf-8")
    # An SGF names its game by GM[11]: no --game needed.
    assert server.pbm("rules", "replay", str(sgf_path)).endswith(
        "Result: 1-0 (connection) after 27 turns\n"
    )
