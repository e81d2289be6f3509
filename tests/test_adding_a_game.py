"""A new game is a package and an entry point: tic-tac-toe, from outside pbm, played by mail.

``tests/games/tictactoe.py`` is a game pbm knows nothing of. The test
installs it the way any distribution would (a ``*.dist-info`` folder whose
``entry_points.txt`` names it in the ``pbm.games`` group) on the
``PYTHONPATH`` of a real ``pbm serve``, and nowhere else. Then players sign
up, challenge, play one board to a draw and one to a win by replying to the
board mails, look at a board, and the admin archives and rates the games:
nothing of pbm was changed for it (``docs/adding-a-game.md``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mailserver import (
    PbmServer,
    Sink,
    StartServer,
    about,
    board_number,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
)

pytestmark = pytest.mark.e2e

GAMES_DIR = Path(__file__).parent / "games"
ALICE, BOB = "alice@example.org", "bob@example.net"


def install(into: Path) -> str:
    """A folder that installs tic-tac-toe (a dist-info with its entry point); the PYTHONPATH."""
    dist = into / "pbm_tictactoe-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pbm-tictactoe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pbm.games]\ntictactoe = tictactoe:TICTACTOE\n")
    return f"{into}:{GAMES_DIR}"


@pytest.fixture
def server(tmp_path: Path, start_server: StartServer) -> PbmServer:
    path = install(tmp_path / "site-packages")
    (tmp_path / "site").mkdir()
    return start_server(tmp_path / "site", PYTHONPATH=path)


def play_by_reply(server: PbmServer, sink: Sink, board: int, moves: list[str]) -> str:
    """Play ``moves`` on ``board``, each as a reply to the mover's last board mail.

    The mover of the first move is the one whose mail says it is his move;
    returns the subject of the last board mail.
    """
    addresses = {ALICE: "alice", BOB: "bob"}
    last = {a: sink.wait_for(a, re.compile(rf"Board {board} - \w+ to move")) for a in addresses}
    subject = ""
    for move in moves:
        mover = next(a for a, m in last.items() if f"{addresses[a]} to move" in about(m))
        server.send(mover, f"Re: {last[mover]['Subject']}", f"{move}\n", to=reply_to(last[mover]))
        for a in addresses:
            last[a] = sink.wait_for(a, re.compile(rf"Board {board} - "))
        subject = about(last[mover]).split(" | ")[-1]
        assert "Move " in body_of(last[mover])
    return subject


def test_a_game_from_outside_pbm_played_by_mail(server: PbmServer, sink: Sink, tmp_path: Path):
    for uid, addr in (("alice", ALICE), ("bob", BOB)):
        sign_up(server, sink, uid, addr, f"pw-{uid}")
    server.send(ALICE, "help")
    assert "tictactoe" in body_of(sink.wait_for(ALICE, "pbm - help"))
    server.send(ALICE, "help tictactoe")
    assert "three marks in a row" in body_of(sink.wait_for(ALICE, "Tic-tac-toe - help"))

    # Board 1, alice plays X: a full board, a draw.
    first = challenge_accepted(server, sink, ALICE, "tictactoe challenge alice bob", BOB)
    board = board_number(first)
    sink.kept.append(first)
    draw = ["b2", "a1", "a3", "c1", "b1", "b3", "a2", "c2", "c3"]
    assert play_by_reply(server, sink, board, draw) == f"Tic-tac-toe Board {board} - Draw"
    server.send(BOB, f"tictactoe show {board}")
    shown = body_of(sink.wait_for(BOB, f"Tic-tac-toe Board {board} - Draw"))
    assert "Draw (full board). Result 1/2-1/2." in shown
    assert "X X O" in shown  # row 2: a2 b2 c2

    # Board 2, bob plays X and wins down column a.
    first = challenge_accepted(server, sink, BOB, "tictactoe challenge bob alice", ALICE)
    board2 = board_number(first)
    sink.kept.append(first)
    win = ["a1", "b1", "a2", "b2", "a3"]
    assert play_by_reply(server, sink, board2, win) == f"Tic-tac-toe Board {board2} - X wins"

    # A move on a finished board is refused in the game's own words.
    server.send(BOB, f"tictactoe move {board2} bob pw-bob c3")
    assert "is over" in body_of(sink.wait_for(BOB, f"Board {board2} - error"))

    # The admin archives and rates them like any game.
    out = tmp_path / "archive"
    listed = server.pbm("archive", "--out", str(out))
    assert f"tictactoe-board-{board}.txt" in listed
    record = (out / f"tictactoe-board-{board}.txt").read_text()
    assert '[Game "Tic-tac-toe"]' in record and '[Result "1/2-1/2"]' in record
    assert "1. b2 2. a1" in record  # a game with no move_number numbers every turn
    replayed = server.pbm("rules", "replay", str(out / f"tictactoe-board-{board2}.txt"))
    assert "Result: 1-0 (three in a row) after 5 turns" in replayed
    ratings = server.pbm("ratings", "--game", "tictactoe")
    rows = {line.split()[3]: line.split() for line in ratings.splitlines()[1:]}
    # A draw between equals changes nothing; then bob (X) beat alice.
    assert rows["bob"][4:6] == ["1516", "2"]
    assert rows["alice"][4:6] == ["1484", "2"]
