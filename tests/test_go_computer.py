"""The computer player of Go: GNU Go's moves over GTP, and its answers in the scoring phase."""

from __future__ import annotations

import time

import pytest
from test_go_rules import played, position
from test_go_scoring import DATA, WALLS, needs_gnugo

from pbm.games.go import GO, Go, gnugo
from pbm.games.go.position import GoState, Rules
from pbm.games.go.sgf import read_sgf


def with_gnugo(state: GoState) -> GoState:
    """``state`` with GNU Go asked (the test positions are made without it)."""
    rules = state.rules
    return GoState(
        Rules(rules.size, rules.komi, rules.handicap),
        state.grid,
        state.ply,
        state.captures,
        state.seen,
        state.passes,
        state.last,
        state.ko,
        state.phase,
        state.dead,
        state.accepted,
        state.proposer,
    )


def test_the_computer_is_gnu_go_at_five_levels() -> None:
    assert GO.computer_program == "gnugo"
    assert sorted(GO.computer_levels) == [1, 2, 3, 4, 5]
    assert GO.computer_levels[5] == "GNU Go at its level 10 of 10"


@needs_gnugo
@pytest.mark.parametrize("level", [1, 5])
def test_gnu_go_plays_a_legal_move_in_time(level: int) -> None:
    state = played(GO.new(None, {"size": "9"}), "E5", "C3", "G7")
    began = time.monotonic()
    move = state.computer_move(level, seed=7, seconds=20.0)
    assert time.monotonic() - began < 20.0
    assert move in state.legal_moves()
    assert state.computer_move(level, seed=7, seconds=20.0) == move  # the same seed


@needs_gnugo
def test_gnu_go_plays_white_after_a_handicap() -> None:
    state = GO.new(None, {"size": "9", "handicap": "2"})
    assert state.to_move == 1
    assert state.computer_move(1, seed=1, seconds=20.0) in state.legal_moves()


@needs_gnugo
def test_in_the_scoring_phase_the_computer_accepts_a_fair_marking() -> None:
    state = with_gnugo(played(position(WALLS), "pass", "pass"))
    assert state.computer_move(3, seed=1, seconds=20.0) == "accept"


@needs_gnugo
def test_the_computer_corrects_a_marking_against_it_and_accepts_one_for_it() -> None:
    scoring = played(position(WALLS), "pass", "pass")  # G5 proposed dead; Black to answer
    # Black marks White's living wall dead: White, the computer, marks it alive again.
    wronged = with_gnugo(played(scoring, "dead C5"))
    answer = wronged.computer_move(3, seed=1, seconds=20.0)
    assert answer == "alive C1"
    assert wronged.play(answer)[0].dead == scoring.dead
    # Black marks his own wall dead: in White's favour, and White accepts it.
    assert with_gnugo(played(scoring, "dead D5")).computer_move(3, 1, 20.0) == "accept"
    # White marks his dead stone alive: Black, the computer, marks it dead again.
    claimed = with_gnugo(played(scoring, "accept", "alive G5"))
    assert claimed.computer_move(3, seed=1, seconds=20.0) == "dead G5"


def test_without_gnu_go_the_computer_cannot_move_but_accepts_a_marking() -> None:
    missing = Go(program="no-such-gnugo-here")
    state = missing.new(None, {"size": "9"})
    with pytest.raises(gnugo.GtpError, match="not installed"):
        state.computer_move(1, seed=1, seconds=5.0)
    scoring = played(state, "pass", "pass")
    assert scoring.computer_move(1, seed=1, seconds=5.0) == "accept"


@needs_gnugo
def test_gnu_go_out_of_time_is_an_error_not_a_wait() -> None:
    """A middle game of 19x19 takes GNU Go most of a second even at its weakest level."""
    record = read_sgf((DATA / "go-ke-jie-alphago-2017-1.sgf").read_text())
    state = played(GO.new(), *(m.notation for m in record.moves[:150]))
    began = time.monotonic()
    with pytest.raises(gnugo.GtpTimeout):
        state.computer_move(5, seed=1, seconds=0.2)
    assert time.monotonic() - began < 5.0  # two processes started and killed, no more
