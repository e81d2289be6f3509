"""Random games against an independent referee: sgfmill's board, and a plain list of every
position so far in place of the Zobrist hashes. Each attempted stone must be accepted or
refused (ko, suicide, superko) exactly as the referee says, and the boards must agree
position by position; ``dump``/``load`` round-trips at every step."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sgfmill.boards import Board
from test_go_rules import NO_GNUGO

from pbm.games import IllegalMove
from pbm.games.go.notation import point_name
from pbm.games.go.position import GoState


def grid_of(board: Board) -> str:
    return "".join(board.get(r, c) or "." for r in range(board.side) for c in range(board.side))


@st.composite
def games(draw: st.DrawFn) -> tuple[int, list[int]]:
    size = draw(st.sampled_from([5, 9]))  # small boards: captures, kos and suicides come soon
    # -1 a pass (now and then); a point otherwise.
    moves = draw(st.lists(st.integers(-1, size * size - 1), min_size=20, max_size=160))
    return size, moves


def start(size: int) -> GoState:
    # A 5x5 board is not a size the game offers; its rules are the same at any size.
    from pbm.games.go.board import zobrist
    from pbm.games.go.position import Rules

    grid = "." * size * size
    return GoState(Rules(size, 7.5, 0, ""), grid, 0, (0, 0), frozenset({zobrist(grid, size)}))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(games())
def test_random_games_agree_with_sgfmill(game: tuple[int, list[int]]) -> None:
    size, moves = game
    state = start(size) if size == 5 else NO_GNUGO.new(None, {"size": str(size)})
    referee = Board(size)
    history = [grid_of(referee)]
    ko: tuple[int, int] | None = None
    passes = placed = 0
    for move in moves:
        if passes == 1 and move == -1:
            continue  # a second pass would end play: not what this test is about
        colour = "bw"[state.to_move]
        if move == -1:
            state = state.play("pass")[0]
            passes, ko = 1, None
            continue
        row, col = divmod(move, size)
        name = point_name(move, size)
        if referee.get(row, col) is not None:
            try:
                state.play(name)
            except IllegalMove as refused:
                assert "is taken" in str(refused)
                continue
            raise AssertionError(f"{name} is occupied, yet accepted")
        tried = referee.copy()
        new_ko = tried.play(row, col, colour)
        after = grid_of(tried)
        if tried.get(row, col) is None:
            expected = "suicide"
        elif (row, col) == ko:
            expected = "ko"
        elif after in history:
            expected = "positional superko"
        else:
            expected = ""
        try:
            state, canonical = state.play(name.lower())
        except IllegalMove as refused:
            assert expected and str(refused).startswith(expected), (name, expected, refused)
            continue
        assert not expected, (name, expected)
        assert canonical == name
        referee, ko, passes = tried, new_ko, 0
        placed += 1
        history.append(after)
        assert state.grid == after
        loaded = NO_GNUGO.load(state.dump()) if size != 5 else state
        assert loaded == state
    # Every stone placed is on the board or was captured, and counted so.
    assert sum(state.captures) == placed - state.grid.count("b") - state.grid.count("w")
