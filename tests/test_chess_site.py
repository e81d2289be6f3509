"""Chess on a real site (SQLite file and PostgreSQL): the use cases, the board mails, the archive.

Every game is played through the same use cases mail and the command line
use (``pbm.usecases``), stored in the database and read back from it; the
archive writes PGN through the game's own record format and python-chess
reads it back.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import chess
import chess.pgn
import pytest

from pbm.refusals import BoardChanged, IllegalMoveRefused
from pbm.replies import Reply
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Claim, Move, Resign
from pbm.usecases.proposals import Accept, OfferDraw
from pbm.usecases.queries.reading import Show
from pbm.usecases.records import archive, formats
from pbm.usecases.records.replay import parse_record, replay
from pbm.usecases.site import Site

PLAYERS = ("alice", "bob")
RANK_ROW = re.compile(r"  ([1-8]) .* \1")
# Scholar's mate in coordinates, long algebraic and SAN, mixed.
SCHOLARS_MATE = ("e2e4", "e7-e5", "Bc4", "b8c6", "Qd1-h5", "Nf6", "Qh5xf7#")
# Sam Loyd's stalemate in ten moves.
LOYD_STALEMATE = (
    *("e3", "a5", "Qh5", "Ra6", "Qxa5", "h5", "h4", "Rah6", "Qxc7", "f6"),
    *("Qxd7+", "Kf7", "Qxb7", "Qd3", "Qxb8", "Qh7", "Qxc8", "Kg6", "Qe6"),
)
KNIGHTS_OUT_AND_BACK = ("Nf3", "Nf6", "Ng1", "Ng8")
# White castles kingside, Black queenside; then the other way round.
CASTLE_SHORT_LONG = ("e4", "d5", "exd5", "Qxd5", "Nf3", "Bg4", "Be2", "Nc6")
CASTLE_LONG_SHORT = ("d4", "Nf6", "Nc3", "e6", "Bf4", "Be7", "Qd2")
PROMOTION = ("e4", "d5", "exd5", "c6", "dxc6", "Qb6", "cxb7", "Qxb2")
# Castling and promotion in every notation: (short, long) castling for White and Black,
# and the promotion b7xa8=Q, written so.
NOTATIONS = {
    "san": ("O-O", "O-O-O", "O-O-O", "O-O", "bxa8=Q"),
    "zeros": ("0-0", "0-0-0", "0-0-0", "0-0", "bxa8Q"),
    "long": ("Ke1-g1", "Ke8-c8", "Ke1-c1", "Ke8-g8", "b7xa8=Q"),
    "coordinates": ("e1g1", "e8c8", "e1c1", "e8g8", "b7a8q"),
}


def new_board(site: Site) -> int:
    board = unit.run(site, Challenge("chess", "alice", "bob", admin=True))[0].board
    assert board is not None
    return board


def as_player(site: Site, uid: str, action: unit.Action) -> tuple[Reply, ...]:
    return unit.run(site, action, Who(uid, ADMIN))


def play(site: Site, board: int, moves: tuple[str, ...], first: int = 0) -> tuple[Reply, ...]:
    """Play ``moves`` in turn, the first by seat ``first``; the last move's replies."""
    replies: tuple[Reply, ...] = ()
    for i, text in enumerate(moves):
        uid = PLAYERS[(first + i) % 2]
        replies = as_player(site, uid, Move(board, text, comment=f"{uid}'s move {i + 1}"))
    return replies


def mail_to(replies: tuple[Reply, ...], uid: str) -> Reply:
    return next(r for r in replies if r.to == f"{uid}@example.org")


def ranks(body: str) -> list[str]:
    """The rank numbers of the diagram's rows, top to bottom."""
    return [m.group(1) for m in map(RANK_ROW.fullmatch, body.splitlines()) if m]


def test_scholars_mate_in_three_notations_ends_1_0_by_checkmate(site: Site) -> None:
    board = new_board(site)
    replies = play(site, board, SCHOLARS_MATE)
    done = queries.board(site, board)
    assert (done.status, done.result, done.termination) == ("finished", "1-0", "checkmate")
    assert [m.notation for m in done.moves] == ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]
    mail = mail_to(replies, "bob")
    assert mail.subject == f"Chess Board {board} - White wins"
    assert "alice (White) wins (checkmate). Result 1-0." in mail.body
    assert "White wins: checkmate" in mail.body
    assert "4. Qxf7#" in mail.body  # the move list, numbered, in SAN


def test_loyds_stalemate_ends_drawn(site: Site) -> None:
    board = new_board(site)
    replies = play(site, board, LOYD_STALEMATE)
    done = queries.board(site, board)
    assert (done.result, done.termination) == ("1/2-1/2", "stalemate")
    assert mail_to(replies, "alice").subject == f"Chess Board {board} - Draw"
    assert "Draw (stalemate). Result 1/2-1/2." in mail_to(replies, "bob").body


def test_a_draw_offered_and_accepted(site: Site) -> None:
    board = new_board(site)
    play(site, board, ("d4", "d5"))
    as_player(site, "alice", OfferDraw(board))
    replies = as_player(site, "bob", Accept(board))
    done = queries.board(site, board)
    assert (done.result, done.termination) == ("1/2-1/2", "agreement")
    assert "bob accepted alice's draw offer" in mail_to(replies, "alice").body


def test_a_draw_offer_is_on_the_board_until_answered(site: Site) -> None:
    board = new_board(site)
    play(site, board, ("d4", "d5"))
    as_player(site, "alice", OfferDraw(board))
    shown = as_player(site, "bob", Show(board, "bob@example.org"))[0].body
    assert "alice offers a draw." in shown
    replies = play(site, board, ("c4",))  # the next move ends the offer
    assert "offers a draw" not in mail_to(replies, "bob").body


def test_moves_are_numbered_as_chess_numbers_them(site: Site) -> None:
    board = new_board(site)
    mail = mail_to(play(site, board, ("e4", "e5", "Nf3")), "bob").body
    assert "Move 2, alice (White): Nf3" in mail
    assert "bob (Black) to move: move 2." in mail
    assert f"chess move {board} bob PASSWORD" in mail and "#2\n" in mail
    assert "2. Nf3" in mail  # the move list agrees
    with pytest.raises(BoardChanged) as stale:
        as_player(site, "bob", Move(board, "Nc6", expect=3))
    assert f"meant as move 3, but board {board} is at move 2 now" in stale.value.message
    as_player(site, "bob", Move(board, "Nc6", expect=2))  # Black's move 2
    assert queries.board(site, board).ply == 4


def test_threefold_repetition_claimed_refused_then_granted(site: Site) -> None:
    board = new_board(site)
    play(site, board, KNIGHTS_OUT_AND_BACK)
    with pytest.raises(IllegalMoveRefused) as refused:
        as_player(site, "alice", Claim(board))
    assert "there is no draw to claim: this position has occurred twice" in refused.value.message
    play(site, board, KNIGHTS_OUT_AND_BACK[:3])
    # The move that makes the position stand for the third time, claimed with it.
    replies = as_player(site, "bob", Move(board, "Ng8", claim=True))
    done = queries.board(site, board)
    assert (done.result, done.termination) == ("1/2-1/2", "threefold repetition")
    assert "bob claimed a draw (threefold repetition)." in mail_to(replies, "alice").body

    # A claim by itself, by the player to move, on the position on the board.
    other = new_board(site)
    play(site, other, KNIGHTS_OUT_AND_BACK * 2)
    as_player(site, "alice", Claim(other))
    assert queries.board(site, other).termination == "threefold repetition"


@pytest.mark.parametrize("notation", NOTATIONS)
def test_castling_and_promotion_in_every_notation(site: Site, notation: str) -> None:
    white_short, black_long, white_long, black_short, promote = NOTATIONS[notation]
    first = new_board(site)
    play(site, first, (*CASTLE_SHORT_LONG, white_short, black_long))
    moves = [m.notation for m in queries.board(site, first).moves]
    assert moves[-2:] == ["O-O", "O-O-O"]
    second = new_board(site)
    play(site, second, (*CASTLE_LONG_SHORT, black_short, white_long))
    assert [m.notation for m in queries.board(site, second).moves][-2:] == ["O-O", "O-O-O"]
    third = new_board(site)
    play(site, third, (*PROMOTION, promote))
    assert queries.board(site, third).moves[-1].notation == "bxa8=Q"
    assert queries.board(site, third).state.fen.startswith("Qn")  # type: ignore[attr-defined]


def test_the_pgn_archive_reads_back_to_the_same_games(site: Site, tmp_path: Path) -> None:
    boards: dict[int, tuple[str, str]] = {}  # board -> (result, how it ended)
    for moves in (SCHOLARS_MATE, LOYD_STALEMATE):
        board = new_board(site)
        play(site, board, moves)
        boards[board] = (
            queries.board(site, board).result or "",
            queries.board(site, board).termination or "",
        )
    agreed = new_board(site)
    play(site, agreed, ("e4", "c5"))
    as_player(site, "bob", OfferDraw(agreed))
    as_player(site, "alice", Accept(agreed))
    claimed = new_board(site)
    play(site, claimed, (*KNIGHTS_OUT_AND_BACK, *KNIGHTS_OUT_AND_BACK[:3]))
    as_player(site, "bob", Move(claimed, "Ng8", claim=True))
    resigned = new_board(site)
    play(site, resigned, (*PROMOTION, "bxa8=N", "Qxa1"))  # and a knight, for once
    as_player(site, "alice", Resign(resigned))
    boards |= {agreed: ("1/2-1/2", "agreement"), claimed: ("1/2-1/2", "threefold repetition")}
    boards[resigned] = ("0-1", "resign")

    pending = archive.pending_boards(site)
    assert pending == sorted(boards)
    for number in pending:
        done = archive.archive_board(site, number, tmp_path, "pgn")
        assert done.path == tmp_path / f"chess-board-{number}.pgn"
        text = done.path.read_text(encoding="utf-8")
        stored = queries.board(site, number)
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None and not game.errors
        assert game.end().board().fen() == stored.state.fen  # type: ignore[attr-defined]
        assert game.headers["White"] == "alice" and game.headers["Board"] == str(number)
        assert game.headers["Result"] == boards[number][0]
        assert game.headers["TerminationDetails"] == boards[number][1]
        assert game.headers["TimeControl"] == f"1/{stored.forfeit_days * 86400}"
        assert next(n.comment for n in game.mainline()) == "alice's move 1"
        replayed = replay(parse_record(text))  # chess, known by the Seven Tag Roster
        assert (replayed.result, replayed.termination) == boards[number]
        assert replayed.state.dump() == stored.state.dump()
    assert archive.pending_boards(site) == []


def test_pgn_for_a_game_without_it_says_so(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "records"
    out.mkdir()
    board = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board
    assert board is not None
    as_player(site, "alice", Resign(board))
    with pytest.raises(formats.NoRecordFormat, match=r"^Accasta has no pgn record format$"):
        archive.archive_board(site, board, out, "pgn")
    assert archive.pending_boards(site) == [board] and list(out.iterdir()) == []
    assert archive.archive_board(site, board, out, "text").path.suffix == ".txt"
    assert formats.formats() == ("text", "json", "pgn", "sgf")


def test_each_player_reads_the_board_from_his_side(site: Site) -> None:
    board = new_board(site)
    replies = play(site, board, ("e4",))
    white, black = mail_to(replies, "alice").body, mail_to(replies, "bob").body
    assert ranks(white) == ["8", "7", "6", "5", "4", "3", "2", "1"]
    assert ranks(black) == ["1", "2", "3", "4", "5", "6", "7", "8"]
    assert "     h  g  f  e  d  c  b  a" in black
    fen = "FEN: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    assert fen in white and fen in black
    # show: a player asking by mail sees his side too, anyone else White's.
    (shown,) = unit.run(site, Show(board, "bob@example.org"))
    assert ranks(shown.body)[0] == "1" and "  1  R  N  B  K  Q  B  N  R  1" in shown.body
    (shown,) = unit.run(site, Show(board, "carol@example.org"))
    assert ranks(shown.body)[0] == "8" and "  1  R  N  B  Q  K  B  N  R  1" in shown.body


def test_the_text_record_of_a_chess_game_replays_too(site: Site, tmp_path: Path) -> None:
    """Every record of a chess game is read as PGN, pbm's text record included."""
    claimed = new_board(site)
    play(site, claimed, (*KNIGHTS_OUT_AND_BACK, *KNIGHTS_OUT_AND_BACK[:3]))
    as_player(site, "bob", Move(claimed, "Ng8", claim=True))
    text = archive.archive_board(site, claimed, tmp_path, "text").path.read_text()
    assert '[Game "Chess"]' in text and '[Termination "threefold repetition"]' in text
    replayed = replay(parse_record(text))
    assert (replayed.result, replayed.termination) == ("1/2-1/2", "threefold repetition")
    assert replayed.canonical == [*KNIGHTS_OUT_AND_BACK, *KNIGHTS_OUT_AND_BACK]
