"""Tests for chess as the server plays it (pbm.games.chess): the protocol, game ends, claims.

States come from ``CHESS.new()`` and ``play``, or from ``CHESS.load`` of a
starting FEN for set-up positions, so that every test goes through the
protocol the shell uses.
"""

from __future__ import annotations

import json
import random
import time

import chess
import pytest

from pbm.games import BadNotation, BadOption, Game, IllegalMove, Outcome
from pbm.games.chess import CHESS, ChessState

SCHOLARS_MATE = ("e4", "e7e5", "Bf1-c4", "Nb8c6", "Qd1-h5", "g8f6", "Qh5xf7#")
# Sam Loyd's stalemate in ten moves: 1.e3 a5 2.Qh5 Ra6 ... 10.Qe6.
LOYD_STALEMATE = (
    *("e3", "a5", "Qh5", "Ra6", "Qxa5", "h5", "h4", "Rah6", "Qxc7", "f6"),
    *("Qxd7+", "Kf7", "Qxb7", "Qd3", "Qxb8", "Qh7", "Qxc8", "Kg6", "Qe6"),
)
KNIGHTS_OUT_AND_BACK = ("Nf3", "Nf6", "Ng1", "Ng8")


def play(state: ChessState, *moves: str) -> ChessState:
    for move in moves:
        state, _ = state.play(move)
    return state


def stored(moves: str, fen: str = chess.STARTING_FEN, variant: str = "standard") -> str:
    """A state as the shell stores it."""
    return json.dumps({"variant": variant, "start": fen, "moves": moves})


def from_fen(fen: str) -> ChessState:
    return CHESS.load(stored("", fen))


def test_the_game_as_the_registry_sees_it() -> None:
    game: Game = CHESS  # the protocol, checked where mypy reads it
    assert (game.name, game.title, game.variants, game.options) == (
        "chess",
        "Chess",
        ("standard",),
        (),
    )
    assert game.seat_names == ("White", "Black")
    assert "weiß" in game.seat_words[0] and "schwarz" in game.seat_words[1]
    assert game.draw_offers
    start = CHESS.new()
    for example in game.notation_examples:
        assert game.looks_like_move(example)
    assert play(start, "e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5").play("O-O")[1] == "O-O"
    assert play(start, "g1f3").play("Nb8-c6")[1] == "Nc6"
    assert "chess challenge UID1 UID2" in game.help_text()


def test_options_and_variants() -> None:
    assert CHESS.check_options("standard", {}) == {}
    assert CHESS.check_options("Standard", {}) == {}
    with pytest.raises(BadOption, match="choose standard"):
        CHESS.check_options("chess960", {})
    with pytest.raises(BadOption, match="Chess knows no options"):
        CHESS.check_options("standard", {"castle_win": "immediate"})
    with pytest.raises(BadOption):
        CHESS.new("crazyhouse")


def test_the_start() -> None:
    start = CHESS.new()
    assert (start.variant, dict(start.options), start.ply, start.to_move) == ("standard", {}, 0, 0)
    assert start.outcome is None
    assert start.fen == chess.STARTING_FEN
    moves = start.legal_moves()
    assert len(moves) == 20 and moves == sorted(moves)
    assert "Nf3" in moves and "e4" in moves
    assert start.example_move() in moves


def test_play_returns_san_and_counts_plies() -> None:
    state, san = CHESS.new().play("e2e4")
    assert san == "e4"
    assert (state.ply, state.to_move) == (1, 1)
    state, san = state.play("e7-e5")
    assert san == "e5"
    assert (state.ply, state.to_move) == (2, 0)
    assert state.moves == ("e2e4", "e7e5")


def test_a_refused_move_leaves_the_state_as_it_was() -> None:
    start = CHESS.new()
    with pytest.raises(IllegalMove, match="no pawn of yours can reach e5"):
        start.play("e5")
    with pytest.raises(BadNotation):
        start.play("Thanks")
    assert start == CHESS.new() and start.ply == 0


def test_scholars_mate_in_mixed_notations_is_won_by_white() -> None:
    state = CHESS.new()
    sans = []
    for move in SCHOLARS_MATE:
        state, san = state.play(move)
        sans.append(san)
    assert sans == ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]
    assert state.outcome == Outcome(0, "checkmate")
    assert state.outcome.result() == "1-0"
    assert state.legal_moves() == [] and state.example_move() is None
    with pytest.raises(IllegalMove, match=r"^the game is over: White won \(checkmate\)$"):
        state.play("Ke7")
    with pytest.raises(IllegalMove, match="the game is over"):
        state.claim_draw()


def test_fools_mate_is_won_by_black() -> None:
    state = play(CHESS.new(), "f3", "e5", "g4", "Qh4#")
    assert state.outcome == Outcome(1, "checkmate")
    assert state.outcome.result() == "0-1"


def test_sam_loyds_ten_move_stalemate() -> None:
    state = play(CHESS.new(), *LOYD_STALEMATE)
    assert state.outcome == Outcome(None, "stalemate")
    assert state.outcome.result() == "1/2-1/2"
    assert state.ply == 19 and state.to_move == 1
    with pytest.raises(IllegalMove, match=r"the game is over: drawn \(stalemate\)"):
        state.play("Kh5")


def test_insufficient_material_ends_the_game() -> None:
    state = from_fen("k7/8/8/8/8/8/1q6/K7 w - - 0 1")
    assert state.outcome is None
    state, san = state.play("Kxb2")
    assert san == "Kxb2"
    assert state.outcome == Outcome(None, "insufficient material")


def test_fivefold_repetition_ends_the_game() -> None:
    state = play(CHESS.new(), *KNIGHTS_OUT_AND_BACK * 3)
    assert state.outcome is None  # the start position stands for the fourth time
    state = play(state, *KNIGHTS_OUT_AND_BACK)
    assert state.outcome == Outcome(None, "fivefold repetition")


def test_the_75_move_rule_ends_the_game() -> None:
    state = from_fen("k7/8/8/8/8/8/8/KR6 w - - 149 100")
    assert state.outcome is None
    state = play(state, "Rb2")
    assert state.outcome == Outcome(None, "75-move rule")


def test_mate_on_the_150th_quiet_half_move_is_mate() -> None:
    state = play(from_fen("k7/8/1K6/8/8/8/8/7R w - - 149 100"), "Rh8#")
    assert state.outcome == Outcome(0, "checkmate")


def test_threefold_repetition_is_claimed() -> None:
    state = play(CHESS.new(), *KNIGHTS_OUT_AND_BACK * 2)
    assert state.outcome is None  # threefold only entitles to a claim
    assert state.claim_draw() == Outcome(None, "threefold repetition")
    assert state.legal_moves()  # the game goes on until the shell ends it


def test_threefold_claim_refused_with_the_reason() -> None:
    with pytest.raises(IllegalMove) as caught:
        CHESS.new().claim_draw()
    assert str(caught.value) == (
        "there is no draw to claim: this position has occurred once, not three times, and the "
        "fifty-move rule needs 50 moves by each side without a capture or pawn move; 0 have "
        "been played"
    )
    twice = play(CHESS.new(), *KNIGHTS_OUT_AND_BACK, "Nf3")
    with pytest.raises(IllegalMove, match="this position has occurred twice, not three times"):
        twice.claim_draw()


def test_a_repetition_the_next_move_would_make_is_claimed_with_that_move() -> None:
    # Black's Ng8 would bring the start position back a third time. python-chess
    # counts that as claimable now; here the claim waits for the move itself.
    state = play(CHESS.new(), *KNIGHTS_OUT_AND_BACK, "Nf3", "Nf6", "Ng1")
    assert state.board.copy().can_claim_threefold_repetition()
    with pytest.raises(IllegalMove) as caught:
        state.claim_draw()
    assert str(caught.value).endswith(
        "Black can reach a claimable position with the next move: write that move followed by claim"
    )
    after, san = state.play("Ng8")  # the shell's "Ng8 claim": play, then claim
    assert san == "Ng8"
    assert after.claim_draw() == Outcome(None, "threefold repetition")


def test_fifty_move_claim() -> None:
    state = from_fen("k7/8/8/8/8/8/8/KR6 w - - 99 80")
    with pytest.raises(IllegalMove) as caught:
        state.claim_draw()
    assert "49 and a half have been played" in str(caught.value)
    assert "White can reach a claimable position with the next move" in str(caught.value)
    after = play(state, "Rb2")
    assert after.claim_draw() == Outcome(None, "fifty-move rule")
    assert after.outcome is None
    with pytest.raises(IllegalMove, match="0 have been played"):
        play(from_fen("k7/8/8/8/8/8/P7/KR6 w - - 99 80"), "a3").claim_draw()


def test_dump_and_load_round_trip() -> None:
    state = play(CHESS.new(), *SCHOLARS_MATE[:5])
    data = state.dump()
    loaded = CHESS.load(data)
    assert loaded == state
    assert loaded.fen == state.fen
    assert loaded.ply == 5 and loaded.to_move == 1
    assert loaded.legal_moves() == state.legal_moves()
    assert json.loads(data)["moves"] == "e2e4 e7e5 f1c4 b8c6 d1h5"


def test_load_keeps_the_history_repetition_needs() -> None:
    state = play(CHESS.new(), *KNIGHTS_OUT_AND_BACK, "Nf3", "Nf6", "Ng1")
    loaded = CHESS.load(state.dump())
    after = play(loaded, "Ng8")
    assert after.claim_draw() == Outcome(None, "threefold repetition")
    # The FEN alone forgets the earlier occurrences.
    with pytest.raises(IllegalMove):
        play(from_fen(state.fen), "Ng8").claim_draw()
    fourfold = play(CHESS.load(after.dump()), *KNIGHTS_OUT_AND_BACK)
    assert CHESS.load(fourfold.dump()).outcome is None
    fivefold = play(CHESS.load(fourfold.dump()), *KNIGHTS_OUT_AND_BACK)
    assert CHESS.load(fivefold.dump()).outcome == Outcome(None, "fivefold repetition")


def test_load_refuses_broken_data() -> None:
    with pytest.raises(ValueError, match=r"move 2 \(e2e4\) is not legal"):
        CHESS.load(stored("e2e4 e2e4"))
    with pytest.raises(ValueError, match="move 1 is a null move"):
        CHESS.load(stored("0000"))
    with pytest.raises(BadOption):
        CHESS.load(stored("", variant="atomic"))
    with pytest.raises(ValueError):
        CHESS.load(stored("", "not a fen"))


def test_loading_a_150_move_game_is_quick() -> None:
    rng = random.Random(7)
    state = CHESS.new()
    while state.ply < 300 and state.outcome is None:
        state, _ = state.play(rng.choice(state.legal_moves()))
    assert state.ply == 300
    data = state.dump()
    began = time.perf_counter()
    loaded = CHESS.load(data)
    assert time.perf_counter() - began < 0.5
    assert loaded == state and loaded.fen == state.fen


def _perft(state: ChessState, depth: int) -> int:
    moves = state.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(_perft(state.play(move)[0], depth - 1) for move in moves)


@pytest.mark.parametrize(("depth", "nodes"), [(1, 20), (2, 400), (3, 8902)])
def test_perft_from_the_start(depth: int, nodes: int) -> None:
    assert _perft(CHESS.new(), depth) == nodes
