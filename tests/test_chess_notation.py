"""Tests for reading chess moves (pbm.games.chess.notation) and the reasons for refusals.

Positions are python-chess boards set up from FEN, or reached by SAN moves
when the reason depends on the moves played (castling rights).
"""

from __future__ import annotations

import chess
import pytest

from pbm.games import BadNotation, IllegalMove
from pbm.games.chess.notation import looks_like_move, normalize, parse_move

CASTLING = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
PROMOTION = "3r4/4P3/8/8/8/8/8/K6k w - - 0 1"


def board_after(*sans: str, fen: str = chess.STARTING_FEN) -> chess.Board:
    board = chess.Board(fen)
    for san in sans:
        board.push_san(san)
    return board


def san(board: chess.Board, text: str) -> str:
    """The canonical SAN of the move ``text`` is read as."""
    return board.san(parse_move(board, text))


def refusal(board: chess.Board, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        parse_move(board, text)
    return str(caught.value)


# --- what is read ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("e4", "e4"),
        ("e2-e4", "e4"),
        ("e2e4", "e4"),
        ("E2E4", "e4"),
        ("E2e4", "e4"),
        ("e2-E4", "e4"),
        ("E4", "e4"),
        ("Pe2-e4", "e4"),
        ("1.e4", "e4"),
        ("1. e4", "e4"),
        ("e4!", "e4"),
        ("e4!?", "e4"),
        ("e4?!", "e4"),
        ("e4.", "e4"),
        ("e4,", "e4"),
        ("Nf3", "Nf3"),
        ("nf3", "Nf3"),
        ("Ng1-f3", "Nf3"),
        ("Ng1f3", "Nf3"),
        ("g1f3", "Nf3"),
        ("g1-f3", "Nf3"),
        ("Sf3", "Nf3"),
        ("♘f3", "Nf3"),
        ("Ng1–f3", "Nf3"),
        (" Nf3 ", "Nf3"),
    ],
)
def test_first_moves_in_every_notation(text: str, expected: str) -> None:
    assert san(chess.Board(), text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("exd5", "exd5"),
        ("ed5", "exd5"),
        ("e4xd5", "exd5"),
        ("e4:d5", "exd5"),
        ("e4×d5", "exd5"),
        ("e4d5", "exd5"),
        ("Nc3xd5", "Nxd5"),
        ("Nxd5", "Nxd5"),
    ],
)
def test_captures(text: str, expected: str) -> None:
    board = board_after("e4", "d5", "Nc3", "Nf6", "d4", "Nc6")
    assert san(board, text) == expected


@pytest.mark.parametrize("text", ["Qxd5", "qxd5", "Dxd5", "Qd8xd5", "Qd8-d5", "d8d5", "♛xd5"])
def test_black_recaptures_with_the_queen(text: str) -> None:
    assert san(board_after("e4", "d5", "exd5"), text) == "Qxd5"


@pytest.mark.parametrize(
    "text", ["O-O", "0-0", "o-o", "O-O+", "O-O.", "e1g1", "e1-g1", "Ke1-g1", "Ke1g1", "Kg1"]
)
def test_white_castles_kingside_in_every_notation(text: str) -> None:
    assert san(chess.Board(CASTLING), text) == "O-O"


@pytest.mark.parametrize("text", ["O-O-O", "0-0-0", "o-o-o", "e1c1", "e1-c1", "Ke1-c1", "Kc1"])
def test_white_castles_queenside_in_every_notation(text: str) -> None:
    assert san(chess.Board(CASTLING), text) == "O-O-O"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("O-O", "O-O"), ("0-0", "O-O"), ("e8g8", "O-O"), ("Ke8-g8", "O-O"), ("0-0-0", "O-O-O")],
)
def test_black_castles_in_every_notation(text: str, expected: str) -> None:
    board = chess.Board(CASTLING.replace(" w ", " b "))
    assert san(board, text) == expected


@pytest.mark.parametrize(
    "text", ["e8=Q", "e8Q", "e8q", "e8=q", "e7e8q", "e7e8Q", "E7E8Q", "e7-e8=Q", "e8=D", "e8=Q+"]
)
def test_promotion_to_a_queen(text: str) -> None:
    assert san(chess.Board(PROMOTION), text) == "e8=Q"


@pytest.mark.parametrize("text", ["exd8=N", "exd8N", "e7xd8=N", "e7d8n", "e7:d8N", "exd8=S"])
def test_capture_promotion_to_a_knight(text: str) -> None:
    assert san(chess.Board(PROMOTION), text) == "exd8=N"


def test_small_b_is_a_pawn_first_and_a_bishop_when_no_pawn_can_go() -> None:
    board = board_after("e4", "d5", "b3", "dxe4")  # b-pawn on b3: "bc4" is no pawn move
    assert san(board, "bc4") == "Bc4"
    board = board_after("b4", "c5", "Nc3", "Nc6")
    assert san(board, "bc5") == "bxc5"  # the pawn b4 takes c5


def test_en_passant_with_and_without_a_note() -> None:
    board = board_after("e4", "a6", "e5", "d5")
    for text in ("exd6", "exd6e.p.", "exd6ep", "e5xd6", "e5d6"):
        assert san(board, text) == "exd6"


def test_check_and_mate_signs_are_read_either_way() -> None:
    board = board_after("e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6")
    for text in ("Qxf7#", "Qxf7", "Qxf7+", "Qxf7++", "Qh5xf7#", "h5f7", "Qxf7#!!"):
        assert san(board, text) == "Qxf7#"


def test_normalize_drops_move_numbers_and_annotations() -> None:
    assert normalize("12...Nf6!") == "Nf6"
    assert normalize("1. e4 !?") == "e4"
    assert normalize("0-0-0+") == "O-O-O"


# --- text that is no move ----------------------------------------------------------


@pytest.mark.parametrize("text", ["hello", "", "Thanks", "0000", "--", "Z0", "Nf"])
def test_no_move_at_all_is_bad_notation(text: str) -> None:
    with pytest.raises(BadNotation, match="is not a chess move: write it like e4, Nf3"):
        parse_move(chess.Board(), text)


@pytest.mark.parametrize(("text", "square"), [("e9", "e9"), ("i4", "i4"), ("Nb9", "b9")])
def test_a_square_that_is_none_is_named(text: str, square: str) -> None:
    with pytest.raises(BadNotation, match=f"^{square} is not a square of the board"):
        parse_move(chess.Board(), text)


@pytest.mark.parametrize(
    "text",
    [
        "e4",
        "Nf3",
        "exd5",
        "O-O",
        "0-0-0",
        "o-o",
        "e8=Q",
        "e8Q",
        "Qxf7#",
        "Nf3!?",
        "e2-e4",
        "Ng1-f3",
        "e7xd8=Q",
        "Nb1xc3",
        "e2e4",
        "e7e8q",
        "1.e4",
        "12...Nf6",
        "Sf3",
        "nf3",
        "E2E4",
    ],
)
def test_looks_like_move(text: str) -> None:
    assert looks_like_move(text)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks",
        "show",
        "resign",
        "Hi",
        "draw",
        "claim",
        "accept",
        "reject",
        "undo",
        "moves",
        "history",
        "board",
        "Best",
        "",
        "12",
        "ok",
        "Dear",
        "Hello,",
    ],
)
def test_ordinary_words_do_not_look_like_moves(text: str) -> None:
    assert not looks_like_move(text)


# --- why a move is refused -----------------------------------------------------------


def test_no_piece_of_yours_can_reach() -> None:
    board = chess.Board()
    assert refusal(board, "e5") == "no pawn of yours can reach e5"
    assert refusal(board, "Nf4") == "no knight of yours can reach f4 (legal moves to f4: f4)"
    assert refusal(board, "Nbd2").startswith("d2 is taken by your own pawn")
    assert refusal(board, "Ng1-e2") == "e2 is taken by your own pawn"


def test_no_such_piece_and_a_hint_for_a_forgotten_letter() -> None:
    board = board_after("e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5")  # e-pawn gone
    # "e5" means a pawn; the queen on a5 does go there.
    assert refusal(board, "Qe5").startswith("no queen of yours can reach e5")
    board = board_after("e4", "d5", "exd5", "Qxd5", "Nf3", "Qa5")
    assert refusal(board, "e5") == "no pawn of yours can reach e5 (legal moves to e5: Ne5)"
    board = board_after("e4", "e5", "Nf3", "Nf6", "Nxe5", "Nxe4")
    assert refusal(board, "e5") == "e5 is taken by your own knight"
    no_queen = chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    assert refusal(no_queen, "Qd4") == "you have no queen left"


def test_named_origin_square() -> None:
    board = chess.Board()
    assert refusal(board, "e3e4") == "there is no piece on e3"
    assert refusal(board, "e7e5") == "the pawn on e7 is not yours: you play White"
    assert refusal(board, "Ng8-f6") == "the knight on g8 is not yours: you play White"
    assert refusal(board, "Ne2-e4") == "there is your pawn on e2, not a knight"
    assert refusal(board, "e2e5") == "the pawn on e2 cannot move to e5"
    assert refusal(board, "Nb1-b3") == (
        "the knight on b1 cannot move to b3 (legal moves to b3: b3)"
    )


def test_black_is_told_the_pieces_are_white() -> None:
    board = board_after("e4")
    assert refusal(board, "e4e5") == "the pawn on e4 is not yours: you play Black"


def test_king_in_check_and_the_move_does_not_answer_it() -> None:
    board = board_after("e4", "f5", "Qh5+")
    assert refusal(board, "a6") == (
        "your king is in check from the queen on h5, and a6 does not get it out of check "
        "(the queen on h5 would still give check)"
    )
    assert san(board, "g6") == "g6"


def test_king_would_walk_into_check() -> None:
    board = chess.Board("4k3/8/8/8/8/8/r7/4K3 w - - 0 1")
    assert refusal(board, "Ke2") == "your king would be in check on e2 from the rook on a2"
    assert refusal(board, "e1-d2") == "your king would be in check on d2 from the rook on a2"


def test_pinned_piece() -> None:
    board = board_after("d4", "e6", "Nc3", "Bb4")
    assert refusal(board, "Ne4") == (
        "the knight on c3 is pinned: Ne4 would leave your king in check from the bishop on b4"
    )
    assert refusal(board, "Nc3-e4").startswith("the knight on c3 is pinned: Nc3-e4 would")


def test_en_passant_that_would_expose_the_king() -> None:
    # White king a5, pawn b5; Black plays c7-c5; bxc6 would open the rank to the rook on h5.
    board = chess.Board("4k3/2p5/8/KP5r/8/8/8/8 b - - 0 1")
    board.push_san("c5")
    assert refusal(board, "bxc6") == "bxc6 would leave your king in check from the rook on h5"


@pytest.mark.parametrize(
    ("moves", "text", "reason"),
    [
        (("Kf1", "a6", "Ke1", "a5"), "O-O", "you cannot castle kingside: your king has moved"),
        (("Kf1", "a6", "Ke1", "a5"), "O-O-O", "you cannot castle queenside: your king has moved"),
        (
            ("Rg1", "a6", "Rh1", "a5"),
            "0-0",
            "you cannot castle kingside: your rook on h1 has moved",
        ),
        (
            ("Rb1", "a6", "Ra1", "a5"),
            "e1c1",
            "you cannot castle queenside: your rook on a1 has moved",
        ),
    ],
)
def test_castling_after_the_king_or_rook_moved(
    moves: tuple[str, ...], text: str, reason: str
) -> None:
    board = board_after(*moves, fen=CASTLING)
    assert refusal(board, text) == reason


def test_castling_after_the_rook_was_taken() -> None:
    board = board_after("Bxh1", fen="r3k2r/8/8/8/8/8/6b1/R3K2R b KQkq - 0 1")
    assert refusal(board, "O-O") == "you cannot castle kingside: your rook on h1 has been taken"
    assert san(board, "O-O-O") == "O-O-O"


def test_castling_with_pieces_in_the_way() -> None:
    board = chess.Board()
    assert refusal(board, "O-O") == (
        "you cannot castle kingside: the bishop on f1 and the knight on g1 are in the way"
    )
    assert refusal(board, "O-O-O") == (
        "you cannot castle queenside: the knight on b1, the bishop on c1 and the queen on d1 "
        "are in the way"
    )
    assert refusal(board, "Ke1-g1") == refusal(board, "O-O")
    assert refusal(board, "Kg1") == refusal(board, "O-O")
    king_on_e2 = chess.Board("4k3/8/8/8/8/8/4K3/8 w - - 0 1")
    assert refusal(king_on_e2, "Kg1") == "no king of yours can reach g1"


def test_castling_out_of_through_and_into_check() -> None:
    check = chess.Board("r3k2r/8/8/8/8/4r3/8/R3K2R w KQ - 0 1")
    assert refusal(check, "O-O") == (
        "you cannot castle kingside while your king is in check (from the rook on e3)"
    )
    through = chess.Board("r3k2r/8/8/8/8/5r2/8/R3K2R w KQ - 0 1")
    assert refusal(through, "O-O") == (
        "you cannot castle kingside: your king would pass through f1, which the rook on f3 attacks"
    )
    assert san(through, "O-O-O") == "O-O-O"
    into = chess.Board("r3k2r/8/8/8/8/2r5/8/R3K2R w KQ - 0 1")
    assert refusal(into, "e1c1") == (
        "you cannot castle queenside: your king would be in check on c1 from the rook on c3"
    )


def test_promotion_without_its_piece() -> None:
    board = chess.Board(PROMOTION)
    expected = "a pawn reaching e8 must be promoted: write e8=Q, e8=R, e8=B or e8=N"
    assert refusal(board, "e8") == expected
    assert refusal(board, "e7e8") == expected
    assert refusal(board, "e7-e8") == expected
    assert refusal(board, "exd8") == (
        "a pawn reaching d8 must be promoted: write exd8=Q, exd8=R, exd8=B or exd8=N"
    )
    assert refusal(board, "e8=K") == "a pawn cannot be promoted to a king: choose Q, R, B or N"
    assert refusal(board, "e7e8k") == "a pawn cannot be promoted to a king: choose Q, R, B or N"


def test_promotion_off_the_last_rank() -> None:
    assert refusal(chess.Board(), "e4=Q") == (
        "only a pawn reaching the last rank is promoted, and e4=Q is no such move"
    )


def test_ambiguous_moves_list_the_candidates() -> None:
    board = board_after("d4", "d5", "Nf3", "Nf6")
    assert refusal(board, "Nd2") == "Nd2 is ambiguous: write Nbd2 or Nfd2"
    rooks = chess.Board("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1")
    assert refusal(rooks, "Ra3") == "Ra3 is ambiguous: write R1a3 or R5a3"
    queens = chess.Board("7k/8/8/8/Q1Q5/8/Q7/4K3 w - - 0 1")
    assert refusal(queens, "Qb3") == "Qb3 is ambiguous: write Q2b3, Qa4b3 or Qcb3"
    assert san(rooks, "R1a3") == "R1a3"
    assert san(rooks, "Ra1-a3") == "R1a3"
    bishops = chess.Board("8/8/6P1/8/7K/2B5/6k1/2B5 w - - 25 117")
    assert refusal(bishops, "Bb2") == "Bb2 is ambiguous: write B1b2 or B3b2"
    assert san(bishops, "B1b2") == "B1b2"  # not the coordinates b1b2
    assert san(bishops, "B3b2") == "B3b2"
    assert san(board, "Nbd2") == "Nbd2"
    assert san(board, "Nf3-d2") == "Nfd2"
