"""End to end: Go by mail against a real ``pbm serve`` (GNU Go installed) over real SMTP,
with its web site.

Challenges the rules refuse (a board of 40 lines, of ``x``, 12 handicap
stones, a komi of ``abc``) are answered with Go's own sentences. A 9x9
game is played by replies to the board mails to two passes; the dead
stones GNU Go proposes are in both players' board mails; White accepts,
Black changes the marking (``dead E5``, a move of several words), White
accepts that: the score ends the game and the board mail says who won by
how much. On the way ``I9`` and ``accept`` before the scoring are refused
in Go's words. A second pair plays a handicap game: its positions are on
the web site from the handicap stones on, and its board mails number
White's first move 2. The records (SGF, text) replay. Nothing sleeps:
every wait is for a mail or an answer of the web site.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from email.message import EmailMessage
from pathlib import Path

import pytest
from mailserver import (
    PbmServer,
    Sink,
    StartServer,
    about,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
    status_of,
)

from pbm.games.go.sgf import read_sgf

pytestmark = pytest.mark.e2e

ALICE, BOB = "alice@example.org", "bob@example.net"
CAROL, DAVE = "carol@example.com", "dave@example.com"
STATUS = r"- (\w+ to move|\w+ to answer|Black wins|White wins|Draw)$"
# Black walls column D, White column G and leaves a stone on E5, between the walls; Black
# fills two points of his own, then White passes and Black passes.
BLACK = [*(f"D{n}" for n in range(1, 10)), "A1", "A2", "pass"]
WHITE = ["E5", *(f"G{n}" for n in range(1, 10)), "pass"]


def flat(text: str) -> str:
    return " ".join(text.replace("\r", "").split())


def text_of(part: EmailMessage) -> str:
    """An attachment's text (a type other than text/* comes as bytes: UTF-8 here)."""
    content = part.get_content()
    return content.decode("utf-8") if isinstance(content, bytes) else str(content)


class Table:
    """One Go board seen from both players' mailboxes."""

    def __init__(
        self, server: PbmServer, sink: Sink, players: tuple[str, str], command: str
    ) -> None:
        self.server, self.sink, self.players = server, sink, players
        first = challenge_accepted(server, sink, players[0], command, players[1])
        found = re.search(r"Board (\d+)", str(first["Subject"]))
        assert found is not None
        self.board = int(found.group(1))
        self.last = {players[0]: first}
        self.last[players[1]] = sink.wait_for(players[1], re.compile(rf"Board {self.board} "))

    def status(self, what: str) -> re.Pattern[str]:
        return re.compile(rf"Board {self.board} - {re.escape(what)}$")

    def reply(self, addr: str, text: str) -> None:
        """``text`` as the first line of a reply to ``addr``'s last board mail."""
        mail = self.last[addr]
        self.server.send(addr, f"Re: {mail['Subject']}", f"{text}\n", to=reply_to(mail))

    def answered(self) -> dict[str, EmailMessage]:
        """Both players' board mails after a move."""
        for addr in self.players:
            self.last[addr] = self.sink.wait_for(addr, re.compile(rf"Board {self.board} {STATUS}"))
        return self.last

    def refused(self, addr: str) -> str:
        return flat(body_of(self.sink.wait_for(addr, self.status("error"))))


@pytest.fixture
def site(tmp_path: Path, start_server: StartServer) -> tuple[PbmServer, str]:
    """``pbm serve`` with its web site on a port of its own, and the site's address."""
    server = start_server(tmp_path / "site", web=True)
    return server, server.web_base


def page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        text: str = answer.read().decode("utf-8")
        return text


def test_go_by_mail_to_the_score_and_a_handicap_game_on_the_web(
    site: tuple[PbmServer, str], sink: Sink, tmp_path: Path
) -> None:
    server, base = site
    for uid, addr in (("alice", ALICE), ("bob", BOB), ("carol", CAROL), ("dave", DAVE)):
        sign_up(server, sink, uid, addr, f"pw-{uid}")

    # Challenges the rules refuse, each in Go's words; nobody is challenged.
    for option, words in (
        ("--size=40", "size cannot be '40': choose 9 or 13 or 19"),
        ("--size=x", "size cannot be 'x': choose 9 or 13 or 19"),
        ("--handicap=12", "handicap cannot be '12': choose 0 or 2 or 3"),
        ("--komi=abc", "komi cannot be 'abc': choose a number of points from 0 to 9.5"),
    ):
        server.send(ALICE, f"go challenge alice bob {option}")
        assert words in flat(body_of(sink.wait_for(ALICE, "error")))

    game = Table(server, sink, (ALICE, BOB), "go challenge alice bob --size=9")
    assert "Variant: standard (handicap=0, komi=7.5, size=9)" in body_of(game.last[ALICE])
    game.reply(ALICE, "I9")
    assert "I9 is no point: Go columns skip I (H is followed by J)" in game.refused(ALICE)
    game.reply(ALICE, "accept")  # no challenge, undo or draw to answer, and no scoring yet
    assert "accept: the game is not being scored" in game.refused(ALICE)
    for black, white in zip(BLACK[:-1], WHITE, strict=True):
        game.reply(ALICE, black)
        game.answered()
        game.reply(BOB, white)
        game.answered()
    game.reply(ALICE, "pass")
    mails = game.answered()
    # Play has ended: GNU Go's proposal, the same in both players' mail; White answers.
    for addr in (ALICE, BOB):
        text = flat(body_of(mails[addr]))
        assert about(mails[addr]).endswith(f"Go Board {game.board} - bob to move"), about(
            mails[addr]
        )
        assert "No stones are marked dead (as first proposed by GNU Go)." in text
        assert "Score: Black 36, White 28 + komi 7.5 = 35.5: Black wins by 0.5." in text
        assert "White to answer: accept, dead POINTS or alive POINTS" in text

    game.reply(BOB, "dead C5")  # several words reach the game: there is no stone there
    assert "dead C5: there is no stone on C5" in game.refused(BOB)
    game.reply(BOB, "OK, accept")
    game.answered()
    game.reply(ALICE, "dead E5")  # Black marks White's stone between the walls dead
    mails = game.answered()
    for addr in (ALICE, BOB):
        text = flat(body_of(mails[addr]))
        assert "Score: Black 36, White 27 + komi 7.5 = 34.5: Black wins by 1.5." in text
    assert "Move 25, alice (Black): dead E5" in flat(body_of(mails[BOB]))
    game.reply(BOB, "accept")
    mails = game.answered()
    for addr in (ALICE, BOB):
        assert about(mails[addr]).endswith(f"Go Board {game.board} - Black wins")
        assert "alice (Black) wins (by 1.5 points). Result 1-0." in flat(body_of(mails[addr]))

    # The records: SGF (with the scoring phase's moves) and text, replayed.
    game.reply(BOB, "record")
    record = sink.wait_for(BOB, game.status("record"))
    files = {
        str(p.get_filename()): (p.get_content_type(), text_of(p)) for p in record.iter_attachments()
    }
    name = f"go-board-{game.board}"
    kind, sgf_text = files[f"{name}.sgf"]
    assert kind == "application/x-go-sgf"
    assert "RE[B+1.5]" in sgf_text and "PBM[dead E5]" in sgf_text
    read = read_sgf(sgf_text)
    assert (read.result, read.termination, len(read.moves)) == ("1-0", "by 1.5 points", 26)
    sgf_path = tmp_path / f"{name}.sgf"
    sgf_path.write_text(sgf_text, encoding="utf-8")
    replayed = server.pbm("rules", "replay", str(sgf_path))  # GM[1]: Go, without --game
    assert replayed.endswith("Result: 1-0 (by 1.5 points) after 26 turns\n")
    text_record = files[f"{name}.txt"][1]
    assert '[Black "alice"]' in text_record and '[White "bob"]' in text_record

    # The web page of the board: every position, from the empty board.
    assert status_of(f"{base}/boards/{game.board}") == 200
    assert status_of(f"{base}/boards/{game.board}/ply/0") == 200
    assert status_of(f"{base}/boards/{game.board}/ply/26") == 200
    assert status_of(f"{base}/boards/{game.board}/ply/27") == 404

    # A handicap game: Black's two stones are his first turn; White moves first, as move 2.
    handicap = Table(server, sink, (CAROL, DAVE), "go challenge carol dave --size=9 --handicap=2")
    first = body_of(handicap.last[CAROL])
    assert "dave (White) to move: move 2." in first
    handicap.reply(DAVE, "E5")
    mails = handicap.answered()
    assert "Move 2, dave (White): E5" in body_of(mails[CAROL])
    handicap.reply(CAROL, "E3")
    handicap.answered()
    number = handicap.board
    for ply, status in ((0, 404), (1, 200), (2, 200), (3, 200), (4, 404)):
        assert status_of(f"{base}/boards/{number}/ply/{ply}") == status, ply
    shown = page(f"{base}/boards/{number}")
    assert "After turn 3 of 3" in shown
    start = page(f"{base}/boards/{number}/ply/1")
    assert 'id="back"' not in start and 'id="forward"' in start  # the handicap stones: the start
    picture = re.search(r'src="(/boards/\d+/picture/[^"]+\.svg)"', start)
    assert picture is not None and status_of(base + picture.group(1)) == 200
    text = page(f"{base}/boards/{number}/record.txt")
    assert "2. E5\n3. E3\n*" in text
    path = tmp_path / "handicap.txt"
    path.write_text(text, encoding="utf-8")
    assert server.pbm("rules", "replay", str(path)).endswith(
        "Result: * (game goes on) after 2 turns\n"
    )
