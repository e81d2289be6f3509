"""Area scoring, the dead stones pbm proposes (GNU Go's, or its own estimate), and the
scoring exchange: two passes, accept, dead/alive, resume, running out of time; a
professional game whose result by area scoring is known."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_go_rules import NO_GNUGO, played, position

from pbm.games import IllegalMove, Outcome
from pbm.games.go import GO, Go, gnugo
from pbm.games.go.notation import parse_point
from pbm.games.go.position import OVER, PLAY, SCORING, GoState
from pbm.games.go.scoring import Score, area, estimate_dead, score
from pbm.games.go.sgf import read_sgf

DATA = Path(__file__).parent / "data"
HAS_GNUGO = gnugo.find() is not None
needs_gnugo = pytest.mark.skipif(not HAS_GNUGO, reason="GNU Go is not installed")

# White's wall on C, Black's on D; a white stone that cannot live on G5.
WALLS = """
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
. . O X . . O . .
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
"""


def points(state: GoState, *names: str) -> frozenset[int]:
    return frozenset(parse_point(n, state.size) for n in names)


def test_area_is_stones_and_the_empty_points_one_colour_surrounds() -> None:
    state = position(WALLS)
    # The white stone on G5 touches Black's side: that region is nobody's.
    assert area(state.grid, 9) == (9, 28)
    # Taken off as dead, its point and the region around it are Black's.
    assert area(state.grid, 9, points(state, "G5")) == (54, 27)
    assert score(state.grid, 9, points(state, "G5"), 7.5).line() == (
        "Black 54, White 27 + komi 7.5 = 34.5: Black wins by 19.5"
    )


def test_dame_counts_for_nobody() -> None:
    state = position(
        """
        . O . X .
        . O . X .
        . O . X .
        . O . X .
        . O . X .
        """
    )
    assert area(state.grid, 5) == (10, 10)  # the middle column touches both


def test_the_score_decides_and_a_whole_komi_allows_jigo() -> None:
    assert Score(54, 27, 7.5).outcome() == Outcome(0, "by 19.5 points")
    assert Score(40, 41, 7.5).outcome() == Outcome(1, "by 8.5 points")
    assert Score(41, 40, 0.5).outcome() == Outcome(0, "by 0.5 points")
    assert Score(44, 37, 7).outcome() == Outcome(None, "jigo (equal score)")
    assert Score(45, 37, 7).outcome() == Outcome(0, "by 1 point")
    assert Score(44, 37, 7).line() == "Black 44, White 37 + komi 7 = 44: jigo, a draw"
    assert Score(44, 37, 7.5).sgf_result() == "W+0.5" and Score(44, 37, 7).sgf_result() == "0"


def test_the_estimate_takes_an_enclosed_stone_for_dead_and_a_living_group_for_alive() -> None:
    state = position(WALLS)
    assert estimate_dead(state.grid, 9) == points(state, "G5")
    living = position(
        """
        . . O X . . . . .
        . . O X . . . . .
        . . O X . . . . .
        . . O X X X X X X
        . . O X O O O O O
        . . O X O . O . O
        . . O X O O O O O
        . . O X . . . . .
        . . O X . . . . .
        """
    )
    assert estimate_dead(living.grid, 9) == frozenset()  # White's two eyes: F4 and H4


def scored(state: GoState) -> GoState:
    """``state`` after both players pass, in the scoring phase."""
    after = played(state, "pass", "pass")
    assert after.phase == SCORING
    return after


def test_two_passes_bring_pbm_s_proposal_and_the_score() -> None:
    state = scored(position(WALLS))
    assert state.dead == points(state, "G5")
    assert state.proposer == "pbm's estimate"
    assert state.to_move == 0  # Black passed first: Black answers first
    diagram = state.diagram()
    assert ". o ." in diagram  # the dead stone in lower case
    assert "Score: Black 54, White 27 + komi 7.5 = 34.5: Black wins by 19.5." in diagram
    assert "Black to answer: accept, dead POINTS or alive POINTS" in diagram


def test_accepted_by_both_the_game_ends_by_the_score() -> None:
    state = scored(position(WALLS))
    state, canonical = state.play("accept")
    assert canonical == "accept" and state.accepted == 0 and state.outcome is None
    assert "Black accepts this marking." in state.diagram()
    state = state.play("ACCEPT")[0]
    assert state.phase == OVER
    assert state.outcome == Outcome(0, "by 19.5 points")
    assert "Game over by the score: Black 54, White 27" in state.diagram()


def test_a_change_is_its_maker_s_acceptance() -> None:
    state = scored(position(WALLS))
    state, canonical = state.play("alive g5")
    assert canonical == "alive G5"
    assert state.dead == frozenset() and state.accepted == 0
    state = state.play("accept")[0]  # White agrees to Black's marking: it ends
    assert state.outcome == Outcome(1, "by 26.5 points")  # Black 9; White 28 + 7.5


def test_an_accepted_marking_changed_must_be_accepted_again() -> None:
    state = played(scored(position(WALLS)), "accept", "alive G5")
    assert state.accepted == 1 and state.outcome is None
    state = played(state, "dead G5")  # Black puts it back: White has not agreed
    assert state.accepted == 0 and state.outcome is None
    assert played(state, "accept").outcome == Outcome(0, "by 19.5 points")


def test_dead_and_alive_mark_whole_chains() -> None:
    state = scored(position(WALLS))
    state, canonical = state.play("dead C5, g5")
    assert canonical == "dead C5 G5"
    assert state.dead == points(state, *(f"C{r}" for r in range(1, 10)), "G5")
    state = state.play("alive C1")[0]
    assert state.dead == points(state, "G5")


def test_marking_refusals() -> None:
    state = scored(position(WALLS))
    with pytest.raises(IllegalMove, match=r"^dead E5: there is no stone on E5$"):
        state.play("dead E5")
    with pytest.raises(IllegalMove, match=r"^the stones at G5 are marked dead already"):
        state.play("dead G5")
    with pytest.raises(IllegalMove, match=r"^dead what\? Name a stone of each group"):
        state.play("dead")
    with pytest.raises(IllegalMove, match=r"^play has ended: answer accept"):
        state.play("E5")
    with pytest.raises(IllegalMove, match=r"^play has ended: answer accept"):
        state.play("pass")


def test_resume_goes_back_to_play_with_the_opponent_to_move() -> None:
    state = played(scored(position(WALLS)), "accept")
    state, canonical = state.play("resume")  # White resumes
    assert canonical == "resume"
    assert state.phase == PLAY and state.to_move == 0  # Black moves next
    assert state.dead == frozenset() and state.passes == 0
    state = played(state, "H5", "pass", "pass")  # Black captures nothing yet; both pass
    assert state.phase == SCORING


def test_the_scoring_phase_lists_accept_and_resume() -> None:
    state = scored(position(WALLS))
    assert state.legal_moves() == ["accept", "resume"]
    assert state.example_move() == "accept"
    assert state.legal_moves_text().startswith("accept (agree to the dead stones marked)")


def test_time_out_in_the_scoring_phase_leaves_the_marking_to_decide() -> None:
    state = position(WALLS)
    assert state.time_out_outcome(0) is None  # in play: the ordinary loss on time
    state = played(scored(state), "alive G5")
    assert state.time_out_outcome(1) == Outcome(1, "by 26.5 points")


def test_accept_outside_the_scoring_phase_is_refused() -> None:
    with pytest.raises(IllegalMove, match=r"^accept: the game is not being scored"):
        GO.new().play("accept")


@needs_gnugo
def test_gnu_go_proposes_the_dead_stones() -> None:
    state = scored(Go().new(None, {"size": "9"}).play("E5")[0])
    assert state.proposer == "GNU Go" and state.dead == frozenset()
    walls = position(WALLS)
    assert gnugo.dead_stones(walls.grid, 9, 7.5) == points(walls, "G5")


def test_without_gnu_go_pbm_estimates() -> None:
    """A program that is not installed: pbm's own estimate, said so on the board."""
    missing = Go(program="no-such-gnugo-here")
    state = played(missing.new(None, {"size": "9"}), "E5", "pass", "pass")
    assert state.proposer == "pbm's estimate"
    with pytest.raises(gnugo.GtpError, match="not installed"):
        gnugo.dead_stones(state.grid, 9, 7.5, "no-such-gnugo-here")


def test_a_professional_game_scores_as_it_was_scored() -> None:
    """Ke Jie (Black) against AlphaGo, the Future of Go Summit's first game, Wuzhen,
    23 May 2017: Chinese rules, komi 7.5, 289 moves, won by White by half a point
    (Andries Brouwer's record, checked against a second copy of the moves).

    Counted by hand from the final position (``test_go_scoring`` prints it when run
    with ``-s``): with the dead stones GNU Go and pbm's estimate both find (White's
    on P2, D11, B12-E12, Q14, N16; Black's on H3, H4, K4, K15, K16) taken off, every
    point of the board is someone's: Black 184, White 177, 177 + 7.5 = 184.5.
    """
    record = read_sgf((DATA / "go-ke-jie-alphago-2017-1.sgf").read_text())
    assert (record.result, record.termination) == ("0-1", "by 0.5 points")
    options = {k: record.tags[k] for k in ("size", "komi", "handicap")}
    state = NO_GNUGO.new(None, options)
    for move in record.moves:
        state = state.play(move.notation)[0]
    assert state.ply == 289
    dead = estimate_dead(state.grid, 19)
    assert dead == points(
        state, "P2", "D11", "B12", "C12", "D12", "E12", "Q14", "N16",
        "H3", "H4", "K4", "K15", "K16",
    )  # fmt: skip
    ended = played(state, "pass", "pass", "accept", "accept")
    assert ended.outcome == Outcome(1, "by 0.5 points")
    assert ended.score == Score(184, 177, 7.5)
    assert ended.outcome.result() == record.result
