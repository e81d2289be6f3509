"""End to end: chess by mail against a real ``pbm serve`` over real SMTP.

Players sign up, challenge and accept as for any game, then move in every
way a mail allows (a command in the subject or the body, a bare move as the
first line of a reply) and in every notation (SAN, long algebraic,
coordinates). The games end by checkmate, stalemate, agreement, a claim and
resignation; the admin archives them as PGN, python-chess reads them back
and ``pbm rules replay`` replays them. A second game uses what
correspondence play adds: followers, queued and conditional moves, undo,
chat, a vacation, the clocks and ratings. Nothing sleeps: every wait is for
a mail, time moves with ``pbm tick --now``.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import chess
import chess.pgn
import pytest
from mailserver import (
    PbmServer,
    Sink,
    about,
    board_number,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
)

from pbm.usecases.records.replay import parse_record, replay

pytestmark = pytest.mark.e2e

ALICE, BOB, CAROL = "alice@example.org", "bob@example.net", "carol@example.com"
PLAYERS = {ALICE: ("alice", "pw-a"), BOB: ("bob", "pw-b")}
LOYD_STALEMATE = (
    *("e3", "a5", "Qh5", "Ra6", "Qxa5", "h5", "h4", "Rah6", "Qxc7", "f6"),
    *("Qxd7+", "Kf7", "Qxb7", "Qd3", "Qxb8", "Qh7", "Qxc8", "Kg6", "Qe6"),
)
ENDED = re.compile(r"- (White wins|Black wins|Draw)$")


def flat(text: str) -> str:
    return " ".join(text.split())


class Table:
    """One board seen from both players' mailboxes: moving by mail and waiting for the answer."""

    def __init__(self, server: PbmServer, sink: Sink, command: str) -> None:
        self.server, self.sink = server, sink
        first = challenge_accepted(server, sink, ALICE, command, BOB)
        self.board = board_number(first)
        self.last = {ALICE: first, BOB: sink.wait_for(BOB, self.status("alice to move"))}

    def status(self, what: str) -> re.Pattern[str]:
        return re.compile(rf"Board {self.board} - {re.escape(what)}$")

    def reply(self, addr: str, text: str) -> None:
        """``text`` as the first line of a reply to ``addr``'s last board mail."""
        mail = self.last[addr]
        self.server.send(addr, f"Re: {mail['Subject']}", f"{text}\n", to=reply_to(mail))

    def command(self, addr: str, words: str, *, subject: bool = True) -> None:
        """``chess WORDS`` for this board with the sender's userid and password."""
        uid, pw = PLAYERS[addr]
        verb, _, rest = words.partition(" ")
        line = f"chess {verb} {self.board} {uid} {pw} {rest}".rstrip()
        if subject:
            self.server.send(addr, line, "Good luck!\n")
        else:
            self.server.send(addr, "my move", f"Hello,\n{line}\nThanks.\n")

    def answered(self) -> dict[str, EmailMessage]:
        """Both players' board mails after a move (or the end)."""
        pattern = re.compile(rf"Board {self.board} - (\w+ to move|White wins|Black wins|Draw)$")
        for addr in (ALICE, BOB):
            self.last[addr] = self.sink.wait_for(addr, pattern)
        return self.last

    def play_by_reply(self, moves: tuple[str, ...], first: str = ALICE) -> dict[str, EmailMessage]:
        mover, other = first, (BOB if first == ALICE else ALICE)
        for move in moves:
            self.reply(mover, move)
            self.answered()
            mover, other = other, mover
        return self.last


def pbm_cli(server: PbmServer, *args: str) -> tuple[str, str]:
    """``pbm ARGS`` against the server's site: (stdout, stderr); it must succeed."""
    res = subprocess.run(
        [sys.executable, "-m", "pbm", *args],
        env=server.env(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=server.root,
    )
    assert res.returncode == 0, res.stderr + res.stdout
    return res.stdout, res.stderr


def ranks(body: str) -> list[str]:
    """The rank numbers of the diagram's rows, top to bottom."""
    rows = (re.fullmatch(r"  ([1-8]) .* \1", line) for line in body.splitlines())
    return [m.group(1) for m in rows if m]


def test_chess_games_by_mail_to_the_pgn_archive(
    server: PbmServer, sink: Sink, tmp_path: Path
) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    server.send(ALICE, "help chess")
    assert "CHESS - by correspondence" in body_of(sink.wait_for(ALICE, "Chess - help"))

    # Scholar's mate: subject, body and reply mode; coordinates, long algebraic and SAN.
    mate = Table(server, sink, "chess challenge alice bob")
    mate.command(ALICE, "move e2e4")
    mate.answered()
    mate.reply(BOB, "e7-e5")
    mate.answered()
    mate.command(ALICE, "move Bc4#2", subject=False)  # White's move 2
    mate.answered()
    mate.play_by_reply(("Nb8-c6", "d1h5", "Nf6", "Qxf7#"), first=BOB)
    assert all(ENDED.search(about(m)) for m in mate.last.values())
    assert about(mate.last[BOB]).endswith(f" | Chess Board {mate.board} - White wins")
    white, black = body_of(mate.last[ALICE]), body_of(mate.last[BOB])
    assert "alice (White) wins (checkmate). Result 1-0." in white
    assert re.search(r"1\. e4 +e5\s+2\. Bc4 +Nc6\s+3\. Qh5 +Nf6\s+4\. Qxf7#", white)
    assert ranks(white)[0] == "8" and ranks(black)[0] == "1"  # each from his own side
    assert "FEN: r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4" in black

    stalemate = Table(server, sink, "chess challenge alice bob")
    stalemate.play_by_reply(LOYD_STALEMATE)
    assert "Draw (stalemate). Result 1/2-1/2." in body_of(stalemate.last[BOB])

    agreed = Table(server, sink, "chess challenge alice bob")
    agreed.play_by_reply(("Nf3", "d5"))
    agreed.reply(ALICE, "draw")
    offer = sink.wait_for(BOB, agreed.status("draw offered"))
    assert "alice offers a draw" in flat(body_of(offer))
    server.send(BOB, f"Re: {offer['Subject']}", "accept\n", to=reply_to(offer))
    agreed.answered()
    assert "Draw (agreement). Result 1/2-1/2." in body_of(agreed.last[ALICE])

    claimed = Table(server, sink, "chess challenge alice bob")
    claimed.play_by_reply(("Nf3", "Nf6", "Ng1", "Ng8"))
    claimed.reply(ALICE, "claim")
    refusal = flat(body_of(sink.wait_for(ALICE, claimed.status("error"))))
    assert "there is no draw to claim: this position has occurred twice, not three" in refusal
    claimed.play_by_reply(("Nf3", "Nf6", "Ng1"))
    claimed.reply(BOB, "Ng8 claim")
    claimed.answered()
    assert "bob claimed a draw (threefold repetition)." in flat(body_of(claimed.last[ALICE]))

    # Both castlings (0-0 and Ke8-c8), a promotion (b7a8q), and resignations.
    castled = Table(server, sink, "chess challenge alice bob")
    castled.play_by_reply(("e4", "d5", "exd5", "Qxd5", "Nf3", "Bg4", "Be2", "Nc6", "0-0", "Ke8-c8"))
    castled.reply(ALICE, "resign")
    castled.answered()
    assert "bob (Black) wins (resign). Result 0-1." in body_of(castled.last[ALICE])
    assert re.search(r"5\. O-O +O-O-O", body_of(castled.last[ALICE]))
    promoted = Table(server, sink, "chess challenge alice bob")
    promoted.play_by_reply(("e4", "d5", "exd5", "c6", "dxc6", "Qb6", "cxb7", "Qxb2", "b7a8q"))
    assert "Move 5, alice (White): bxa8=Q" in body_of(promoted.last[BOB])
    promoted.reply(BOB, "resign")
    promoted.answered()

    accasta = challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    server.send(BOB, f"accasta resign {board_number(accasta)} bob pw-b")
    sink.wait_for(ALICE, f"Accasta Board {board_number(accasta)} - White wins")

    out = tmp_path / "archive"
    listed, said = pbm_cli(server, "archive", "--format", "pgn", "--out", str(out))
    lacking = f"not archived as pgn: Accasta has no pgn records (board {board_number(accasta)})"
    assert lacking in said.splitlines()
    finished = {
        mate: ("1-0", "checkmate"),
        stalemate: ("1/2-1/2", "stalemate"),
        agreed: ("1/2-1/2", "agreement"),
        claimed: ("1/2-1/2", "threefold repetition"),
        castled: ("0-1", "resign"),
        promoted: ("1-0", "resign"),
    }
    paths = {table: out / f"chess-board-{table.board}.pgn" for table in finished}
    assert sorted(listed.split()) == sorted(str(path) for path in paths.values())
    for table, (result, how) in finished.items():
        game = chess.pgn.read_game(io.StringIO(paths[table].read_text(encoding="utf-8")))
        assert game is not None and not game.errors
        assert game.headers["Result"] == result and game.headers["TerminationDetails"] == how
        assert (game.headers["White"], game.headers["Black"]) == ("alice", "bob")
        assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", game.headers["Date"])
        assert game.headers["TimeControl"] == "1/1814400"  # a move within 21 days
        # The same final position as the last board mail's.
        assert f"FEN: {game.end().board().fen()}" in body_of(table.last[BOB])
        # What pbm rules replay reads and prints (the command itself: below, once).
        replayed = replay(parse_record(paths[table].read_text(encoding="utf-8")))
        assert (replayed.result, replayed.termination) == (result, how)
        assert replayed.canonical == [node.san() for node in game.mainline()]
    replayed_text = server.pbm("rules", "replay", str(paths[claimed]))
    assert "Result: 1/2-1/2 (threefold repetition) after 8 turns" in replayed_text
    assert "White to move (move 5)" in replayed_text
    first = chess.pgn.read_game(io.StringIO(paths[mate].read_text(encoding="utf-8")))
    assert first is not None and first.next() is not None
    assert first.next().comment == "Good luck!"  # the mail's text beside the command
    # Accasta's own record is still to be had (and the chess games as text beside PGN).
    listed, _ = pbm_cli(server, "archive", "--out", str(out))
    assert str(out / f"accasta-board-{board_number(accasta)}.txt") in listed.split()
    assert str(out / f"chess-board-{mate.board}.txt") in listed.split()
    ratings = server.pbm("ratings", "--game", "chess").splitlines()
    rows = {line.split()[3]: line.split() for line in ratings[1:]}
    assert rows["alice"][5] == rows["bob"][5] == "6"  # every chess game rated, draws too


def iso(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def test_correspondence_extras_for_chess(server: PbmServer, sink: Sink) -> None:
    """Followers, conditional queued moves, undo, chat, a vacation, reminders, forfeit, ratings."""
    for uid, addr in (("alice", ALICE), ("bob", BOB), ("carol", CAROL)):
        sign_up(server, sink, uid, addr, f"pw-{uid[0]}")
    started = datetime.now(UTC)
    table = Table(server, sink, "chess challenge alice bob --nagtime=2 --forfeittime=5")
    board = table.board
    server.send(CAROL, f"chess subscribe {board} carol pw-c")
    sink.wait_for(CAROL, table.status("alice to move"))

    # bob answers in advance, with conditions, in coordinates and long algebraic.
    for line in ("queue d7d5 if d4", "queue e7-e5 if e2e4"):
        table.reply(BOB, line)
        sink.wait_for(BOB, table.status("queued moves"))
    table.reply(ALICE, "e4")  # bob's answer is played at once: one board mail each
    table.answered()
    assert "Move 1, bob (Black): e5 (queued)" in body_of(table.last[ALICE])
    note = flat(body_of(table.last[BOB]))
    assert "Your conditional tree answered alice's e4 with e5: played at once" in note
    assert "The rest of your tree:" not in note  # the d4 line went with the other reply

    table.play_by_reply(("Nf3",))
    table.reply(ALICE, "undo")
    asked = sink.wait_for(BOB, table.status("undo asked"))
    assert "alice asks to take back move 2 (Nf3)" in flat(body_of(asked))
    server.send(BOB, f"Re: {asked['Subject']}", "accept\n", to=reply_to(asked))
    table.answered()
    assert "move 2 (Nf3) by alice was taken back" in flat(body_of(table.last[ALICE]))
    table.play_by_reply(("Bc4",))
    table.reply(BOB, "chat Careful with that bishop!")
    chat = sink.wait_for(ALICE, table.status("chat from bob"))
    assert "Careful with that bishop!" in body_of(chat)
    follower = ""  # carol's board mails, one a move, until the one after Bc4
    while "Move 2, alice (White): Bc4" not in follower:
        follower = body_of(sink.wait_for(CAROL, re.compile(rf"Board {board} - \w+ to move$")))
    assert ranks(follower)[0] == "8"  # a follower sees White's side

    # bob goes on vacation: his clock stands still for 3 days, then runs again.
    server.send(BOB, "vacation bob pw-b 3")
    sink.wait_for(BOB, "pbm - vacation")
    assert server.pbm("tick", "--now", iso(started + timedelta(days=4))).startswith("0 board")
    assert server.pbm("tick", "--now", iso(started + timedelta(days=5, hours=1))).startswith(
        "1 board"
    )
    nag = sink.wait_for(BOB, f"Nag: Chess Board {board} - bob to move")
    assert "you have not moved for 2 days" in flat(body_of(nag))
    assert server.pbm("tick", "--now", iso(started + timedelta(days=9))).startswith("1 board")
    for addr in (ALICE, BOB, CAROL):
        final = flat(body_of(sink.wait_for(addr, table.status("White wins"))))
        assert "bob did not move for 5 days" in final
        assert "alice (White) wins (forfeit). Result 1-0." in final
    assert "alice 1500 -> 1516 (+16), bob 1500 -> 1484 (-16)" in final
