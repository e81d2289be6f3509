"""Go's records and storage: SGF written and read back (by sgfmill too, and by the shell's
``pbm rules replay``), pbm's text record read, ``dump``/``load`` round trips."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from sgfmill import sgf
from test_go_rules import NO_GNUGO, played

from pbm.games import GameRecord, RecordedMove
from pbm.games.go import GO
from pbm.games.go.position import GoState
from pbm.games.go.sgf import SGF, read_record
from pbm.usecases.records.replay import parse_record, replay

STARTED = datetime(2026, 11, 27, 9, 30, tzinfo=UTC)
# A 9x9 game both players pass in, scored with nothing dead: Black's E5 and F5
# against White's D5.
GAME = ("E5", "D5", "F5", "pass", "pass", "accept", "accept")


def record_of(
    moves: tuple[str, ...],
    options: dict[str, str],
    result: str = "*",
    termination: str | None = None,
    comments: dict[int, str] | None = None,
    first_ply: int = 1,
) -> GameRecord:
    return GameRecord(
        game="go",
        variant="standard",
        options=options,
        board=12,
        players=("alice", "bob"),
        started=STARTED,
        ended=None,
        result=result,
        termination=termination,
        moves=tuple(
            RecordedMove(first_ply + i, m, (comments or {}).get(i, "")) for i, m in enumerate(moves)
        ),
        site="pbm@example.org",
        nag_days=3,
        forfeit_days=14,
    )


def finished() -> GoState:
    return played(GO.new(None, {"size": "9"}), *GAME)


def test_a_finished_game_in_sgf() -> None:
    state = finished()
    assert state.outcome is not None
    options = dict(state.options)
    text = SGF.write(
        record_of(GAME, options, state.outcome.result(), state.outcome.termination, {0: "hi"})
    )
    game = sgf.Sgf_game.from_string(text)  # any SGF reader: sgfmill's
    root = game.get_root()
    assert (game.get_size(), game.get_komi(), root.get("RU")) == (9, 7.5, "Chinese")
    assert (root.get("PB"), root.get("PW"), root.get("DT")) == ("alice", "bob", "2026-11-27")
    assert root.get("RE") == "W+6.5"  # Black 2, White 1 + 7.5: the rest is nobody's
    nodes = game.get_main_sequence()[1:]
    assert [n.get_move() for n in nodes[:5]] == [
        ("b", (4, 4)),
        ("w", (4, 3)),
        ("b", (4, 5)),
        ("w", None),
        ("b", None),
    ]
    assert "W[]" in text and "B[]" in text  # FF[4]'s pass
    assert nodes[0].get("C") == "hi"
    assert [n.get("PBM") for n in nodes[5:]] == ["accept", "accept"]
    assert nodes[5].get("C") == "White: accept"


def test_sgf_reads_back_what_it_wrote() -> None:
    state = finished()
    assert state.outcome is not None
    outcome = state.outcome
    written = record_of(GAME, dict(state.options), outcome.result(), outcome.termination, {2: "x"})
    read = SGF.read(SGF.write(written))
    assert [(m.ply, m.notation) for m in read.moves] == list(enumerate(GAME, 1))
    assert read.moves[2].comment == "x"
    assert (read.result, read.termination) == ("0-1", "by 6.5 points")
    assert {k: read.tags[k] for k in ("size", "komi", "handicap")} == dict(state.options)


def test_the_shell_replays_a_written_sgf_to_the_same_end() -> None:
    state = finished()
    assert state.outcome is not None
    outcome = state.outcome
    text = SGF.write(record_of(GAME, dict(state.options), outcome.result(), outcome.termination))
    result = replay(parse_record(text, "go"), "go")
    assert (result.result, result.termination) == (outcome.result(), outcome.termination)
    assert result.canonical == list(GAME)


def test_a_handicap_game_in_sgf() -> None:
    options = {"size": "19", "komi": "0.5", "handicap": "3"}
    moves = ("Q4", "C3", "pass")
    text = SGF.write(record_of(moves, options, first_ply=2))
    game = sgf.Sgf_game.from_string(text)
    assert game.get_handicap() == 3
    black, white, _ = game.get_root().get_setup_stones()
    assert black == {(3, 3), (15, 15), (15, 3)} and not white  # D4, Q16, D16
    assert game.get_main_sequence()[1].get_move() == ("w", (3, 15))
    read = SGF.read(text)
    assert [(m.ply, m.notation) for m in read.moves] == [(2, "Q4"), (3, "C3"), (4, "pass")]
    assert read.tags["handicap"] == "3" and read.tags["komi"] == "0.5"
    replayed = replay(parse_record(text, "go"), "go")
    assert replayed.state.ply == 4 and replayed.state.to_move == 0


@pytest.mark.parametrize(
    ("result", "termination", "re_value"),
    [
        ("0-1", "resign", "W+R"),
        ("1-0", "forfeit", "B+T"),
        ("1/2-1/2", "agreement", "Draw"),
        ("1/2-1/2", "jigo (equal score)", "0"),
        ("0-1", "by 3.5 points", "W+3.5"),
        ("1-0", "by 1 point", "B+1"),
    ],
)
def test_how_a_game_ended_goes_into_re_and_back(
    result: str, termination: str, re_value: str
) -> None:
    text = SGF.write(
        record_of(("E5",), {"size": "9", "komi": "7", "handicap": "0"}, result, termination)
    )
    assert f"RE[{re_value}]" in text
    read = SGF.read(text)
    assert (read.result, read.termination) == (result, termination)


def test_a_foreign_sgf_is_read_with_its_passes_and_options() -> None:
    read = SGF.read("(;GM[1]FF[3]SZ[13]KM[6.5]PB[a]PW[b]RE[B+R];B[dd];W[tt];B[jj];W[])")
    assert [m.notation for m in read.moves] == ["D10", "pass", "K4", "pass"]
    assert (read.tags["size"], read.tags["komi"], read.result) == ("13", "6.5", "1-0")
    assert read.termination == "resign"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("(;GM[1]SZ[9]AB[ee][cc];W[dd])", "the SGF game's handicap stones are placed freely"),
        ("(;GM[1]SZ[9]AW[ee];B[dd])", "the SGF game starts from a set-up position"),
        ("(;GM[1]SZ[9];B[ee];B[dd])", "move 2 of the SGF game is Black's, where White"),
        ("(;GM[2]SZ[8];B[ee])", "the SGF game is not Go"),
        ("(;GM[1]SZ[9];B[ee]", "not an SGF game record"),
    ],
)
def test_sgf_that_cannot_be_played_here_is_refused(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        SGF.read(text)


def test_pbm_s_text_record_of_a_go_game_is_read_too() -> None:
    text = (
        '[Game "Go"]\n[Variant "standard"]\n[Result "1-0"]\n[Termination "by 2.5 points"]\n'
        '[Option "handicap=0 komi=7.5 size=9"]\n\n'
        "1. E5 {the centre} 2. D5\n3. pass 4. pass\n5. dead D5 6. accept\n1-0\n"
    )
    read = read_record(text)
    assert [(m.ply, m.notation) for m in read.moves] == [
        (1, "E5"),
        (2, "D5"),
        (3, "pass"),
        (4, "pass"),
        (5, "dead D5"),
        (6, "accept"),
    ]
    assert read.moves[0].comment == "the centre"
    assert (read.result, read.termination) == ("1-0", "by 2.5 points")
    result = replay(parse_record(text, "go"), "go")
    # Black's E5 alone with White's D5 dead: the whole board, 81, against 7.5.
    assert result.result == "1-0" and result.termination == "by 73.5 points"


def test_sgf_recognizes_go_tags() -> None:
    assert SGF.recognizes({"GM": "1"}) and SGF.recognizes({"Game": "Go"})
    assert not SGF.recognizes({"Event": "x"})
    assert (SGF.name, SGF.suffix, SGF.media_type) == ("sgf", "sgf", "application/x-go-sgf")


def random_state(seed: int, size: str = "9", plies: int = 60) -> GoState:
    rng = random.Random(seed)
    state = NO_GNUGO.new(None, {"size": size})
    for _ in range(plies):
        if state.outcome is not None:
            break
        legal = state.legal_moves()
        if "dead" not in legal and rng.random() < 0.3 and state.dead:
            legal = [*legal, "alive " + min(state.legal_moves())]
        state = state.play(rng.choice(legal))[0]
    return state


@pytest.mark.parametrize("seed", range(8))
def test_dump_and_load_round_trip(seed: int) -> None:
    state = random_state(seed, plies=20 + seed * 15)
    loaded = NO_GNUGO.load(state.dump())
    assert loaded == state and loaded.dump() == state.dump()
    assert loaded.legal_moves() == state.legal_moves()


def test_dump_and_load_round_trip_in_the_scoring_phase() -> None:
    state = played(NO_GNUGO.new(None, {"size": "9", "handicap": "2"}), "E5", "pass", "pass")
    assert state.dead  # White's lone stone, taken for dead
    state = played(state, "alive E5")
    loaded = NO_GNUGO.load(state.dump())
    assert loaded == state and loaded.dead == state.dead and loaded.accepted == state.accepted
    assert loaded.proposer == state.proposer


@pytest.mark.parametrize("bad", ["", "{}", '{"size": 19}', "not json", "[1, 2]"])
def test_a_damaged_dump_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="stored Go game"):
        GO.load(bad)


def test_a_dump_with_a_wrong_board_is_refused() -> None:
    data = GO.new(None, {"size": "9"}).dump().replace('"grid":"', '"grid":"x', 1)
    with pytest.raises(ValueError, match="not a Go board"):
        GO.load(data)
