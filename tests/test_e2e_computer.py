"""End to end: a whole game of Accasta against the computer over real SMTP, standard and
Pari, with a real ``pbm serve``: the challenge is accepted at once, the computer's moves
come in the usual board mails (legal, as the server plays them through the same use
case as a mailed move), and the finished game is rated, the computer too."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import pytest
from mailserver import PbmServer, Sink, answer, board_number, full_body_of, sign_up

import pbm.games
from pbm.games.accasta.engine import choose
from pbm.games.accasta.notation import turn_to_text

pytestmark = pytest.mark.e2e

ALICE = "alice@example.org"
ACCASTA = pbm.games.get("accasta")


def board_row(server: PbmServer, board: int) -> tuple[str, str, int]:
    """The board's status, position and ply, as the server stored them."""
    with sqlite3.connect(server.root / "data" / "pbm.sqlite3") as db:
        found = db.execute(
            "select status, position, ply from games where board = ?", (board,)
        ).fetchone()
    return str(found[0]), str(found[1]), int(found[2])


def thinking(server: PbmServer) -> bool:
    """Whether the computer's thinking process runs: the server's child at the lowest
    CPU priority (nice 19)."""
    assert server.proc is not None
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state, ppid, ... nice is the 19th field of the whole line.
        if int(fields[1]) == server.proc.pid and int(fields[16]) == 19:
            return True
    return False


@pytest.mark.parametrize("variant", ["standard", "pari"])
def test_a_whole_game_against_the_computer(server: PbmServer, sink: Sink, variant: str) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    server.send(ALICE, f"accasta challenge alice computer --level=1 --variant={variant}")
    sink.wait_for(ALICE, re.compile(r"Board \d+ - challenge sent"))
    mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - alice to move"))
    board = board_number(mail)
    assert "computer accepted alice's challenge" in full_body_of(mail)
    for turn in range(200):
        status, position, ply = board_row(server, board)
        if status != "active":
            break
        state = ACCASTA.load(position)
        pos = state.position  # type: ignore[attr-defined]
        mine = turn_to_text(pos, choose(pos, 3, seed=turn, nodes=3_000).turn)
        answer(server, ALICE, mail, mine)  # by Reply, the move alone
        mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - (alice to move|White wins)"))
        if "White wins" not in str(mail["Subject"]) + full_body_of(mail).split("\n", 1)[0]:
            # The computer answered in the board mail: its move, as Black.
            assert re.search(rf"Move {ply + 2}, computer \(Black\): \S+", full_body_of(mail))
    status, _, _ = board_row(server, board)
    assert status == "finished"
    text = full_body_of(mail)
    assert "alice (White) wins" in text
    assert re.search(r"computer 1500 -> 14\d\d", text)  # rated like anyone
    assert "computer" in server.pbm("ratings", "--game", "accasta")


def test_a_short_chess_game_against_the_computer(server: PbmServer, sink: Sink) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    server.send(ALICE, "chess challenge alice computer --level=1")
    mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - alice to move"))
    board = board_number(mail)
    chess_game = pbm.games.get("chess")
    for turn in range(3):
        _, position, ply = board_row(server, board)
        mine = chess_game.load(position).legal_moves()[0]
        answer(server, ALICE, mail, mine)
        mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - alice to move"))
        # Stockfish's answer, as the computer's, in the usual board mail.
        assert re.search(r"computer \(Black\): \S+", full_body_of(mail)), turn
        assert board_row(server, board)[2] == ply + 2
    answer(server, ALICE, mail, "resign")
    final = sink.wait_for(ALICE, re.compile(r"Board \d+ - Black wins"))
    text = full_body_of(final)
    assert "alice resigned" in text
    assert re.search(r"computer 1500 -> 15\d\d", text)


def test_pbm_serve_stops_at_once_while_the_computer_thinks(server: PbmServer, sink: Sink) -> None:
    """A think of up to a minute does not hold up a stop (systemd's, an admin's Ctrl-C):
    the thinking process is ended, and the board waits for the computer's move."""
    sign_up(server, sink, "alice", ALICE, "pw-a")
    server.send(ALICE, "accasta challenge computer alice --level=5")
    mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - computer to move"))
    board = board_number(mail)
    deadline = time.monotonic() + 20
    while not thinking(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert thinking(server)
    started = time.monotonic()
    assert server.stop() == 0
    assert time.monotonic() - started < 5  # not the minute level 5 may think
    assert board_row(server, board)[1:] == (ACCASTA.new("standard").dump(), 0)


def test_the_computer_grants_an_undo_asked_by_mail(server: PbmServer, sink: Sink) -> None:
    """A move and the request to take it back in one mail: the computer grants it instead
    of answering the move, and the board is as before the move."""
    sign_up(server, sink, "alice", ALICE, "pw-a")
    server.send(ALICE, "accasta challenge alice computer --level=1")
    mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - alice to move"))
    board = board_number(mail)
    _, start, _ = board_row(server, board)
    move = ACCASTA.load(start).legal_moves()[0]
    server.send(
        ALICE,
        "my move, and I take it back",
        f"accasta move {board} alice pw-a {move}\naccasta undo {board} alice pw-a\n",
    )
    mail = sink.wait_for(ALICE, re.compile(r"Board \d+ - alice to move"))
    assert re.search(r"computer agreed: move 1 \(\S+\) by alice was taken back", full_body_of(mail))
    assert board_row(server, board) == ("active", start, 0)
