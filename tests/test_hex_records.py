"""Hex game records: SGF as HexGui writes it (written and read back), HexGui's and Little
Golem's cells, and pbm's text record replayed through the shell's reader."""

from __future__ import annotations

import random
import re
from datetime import datetime

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import pbm.games
from pbm.cli import main
from pbm.games import GameRecord, RecordedMove
from pbm.games.hex import HEX, HexState
from pbm.games.hex.sgf import SGF, read_sgf, write_sgf
from pbm.usecases.records.replay import parse_record, replay


def random_game(seed: int, size: int = 7, swap: bool = True) -> tuple[list[str], str]:
    """A finished game of random moves (``swap`` on move 2 or not) and its result."""
    rng = random.Random(seed)
    state: HexState = HEX.new(options={"size": str(size)})
    moves = []
    while state.outcome is None:
        legal = state.legal_moves()
        move = "swap" if swap and "swap" in legal else rng.choice([m for m in legal if m != "swap"])
        state, canonical = state.play(move)
        moves.append(canonical)
    return moves, state.outcome.result()


def record_of(
    moves: list[str],
    *,
    size: int = 7,
    result: str = "*",
    termination: str | None = None,
    comments: dict[int, str] | None = None,
    swap: str = "on",
) -> GameRecord:
    notes = comments or {}
    return GameRecord(
        game="hex",
        variant="standard",
        options={"size": str(size), "swap": swap},
        board=12,
        players=("anna", "bert"),
        started=datetime(2026, 11, 27, 9, 30),
        ended=None,
        result=result,
        termination=termination,
        moves=tuple(
            RecordedMove(k, notation, notes.get(k, "")) for k, notation in enumerate(moves, 1)
        ),
        site="pbm@example.org",
        nag_days=3,
        forfeit_days=10,
    )


def test_the_format_is_declared() -> None:
    assert HEX.record_formats == (SGF,)
    assert (SGF.name, SGF.suffix, SGF.media_type) == ("sgf", "sgf", "application/x-hex-sgf")
    assert pbm.games.record_format(HEX, "SGF") is SGF
    assert SGF.recognizes({"GM": "11"}) and not SGF.recognizes({"GM": "1"})
    assert not SGF.recognizes({})


def test_sgf_is_written_as_hexgui_writes_it() -> None:
    text = write_sgf(
        record_of(["c3", "swap", "d4"], result="0-1", termination="resign", comments={2: "ha]"})
    )
    assert text.startswith("(;FF[4]GM[11]AP[pbm]SZ[7]RU[swap]")
    assert "DT[2026-11-27]PB[anna]PW[bert]RE[W+R]" in text.replace("\n", "")
    assert ";B[c3];W[swap-pieces]C[ha\\]];B[d4])" in text.replace("\n", "")
    assert all(len(line) <= 72 for line in text.splitlines())


@pytest.mark.parametrize(
    ("result", "termination", "said"),
    [
        ("1-0", "connection", "RE[B+]"),
        ("0-1", "connection", "RE[W+]"),
        ("1-0", "resign", "RE[B+R]"),
        ("0-1", "forfeit", "RE[W+T]"),
    ],
)
def test_the_result_is_written_and_read_back(result: str, termination: str, said: str) -> None:
    text = write_sgf(record_of(["c3", "d4"], result=result, termination=termination))
    assert said in text
    read = read_sgf(text)
    assert read.result == result
    assert read.termination == (None if termination == "connection" else termination)


def test_an_unfinished_game_has_no_result() -> None:
    text = write_sgf(record_of(["c3"]))
    assert "RE[" not in text and read_sgf(text).result is None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(5, 13), swap=st.booleans())
def test_sgf_round_trip_replays_the_same_game(seed: int, size: int, swap: bool) -> None:
    moves, result = random_game(seed, size, swap)
    comments = {1: "first", len(moves): "the last [one] \\ done"}
    text = write_sgf(record_of(moves, size=size, result=result, comments=comments))
    read = read_sgf(text)
    assert [m.notation for m in read.moves] == moves
    assert read.moves[0].comment == "first"
    assert read.moves[-1].comment == "the last [one] \\ done"
    assert read.tags["size"] == str(size) and read.tags["PB"] == "anna"
    record = parse_record(text, "hex")
    state = replay(record, "hex").state
    assert state.outcome is not None and [m.text for m in record.moves] == moves


def test_swap_off_is_kept_by_the_rules_property() -> None:
    text = write_sgf(record_of(["c3", "d4"], swap="off"))
    assert "RU[no swap]" in text and read_sgf(text).tags["swap"] == "off"
    state = replay(parse_record(text, "hex"), "hex").state
    assert state.options == {"size": "7", "swap": "off"}


HEXGUI = """(;FF[4]AP[HexGui:0.9.GIT]GM[11]SZ[11]
;B[f6]C[centre];W[swap-pieces];B[e7];W[resign])
"""


def test_a_hexgui_record_with_swap_and_resignation_is_read() -> None:
    read = read_sgf(HEXGUI)
    assert [m.notation for m in read.moves] == ["f6", "swap", "e7"]
    assert read.moves[0].comment == "centre"
    assert (read.result, read.termination) == ("1-0", "resign")
    replayed = replay(parse_record(HEXGUI, "hex"), "hex")
    assert isinstance(replayed.state, HexState)
    assert replayed.state.cells.count("B") == 1 and replayed.state.size == 11
    assert (replayed.result, replayed.termination) == ("1-0", "resign")


def test_little_golem_pairs_and_variations_are_read_on_the_main_line() -> None:
    text = "(;GM[11]SZ[13]PB[x]PW[y];B[cb];W[dd](;B[ee];W[ff])(;B[aa]))"
    assert [m.notation for m in read_sgf(text).moves] == ["c2", "d4", "e5", "f6"]


def test_old_property_names_and_escaped_values_are_read() -> None:
    """FF[3]'s lower-case letters are no part of a name; an escaped "]" or backslash is
    the character itself, in a tag or a comment."""
    text = r"(;GaMe[11]SiZe[9]PB[an\]na];B[c3]Comment[a [b\]" + "\n" + r"  c\\];W[d4])"
    read = read_sgf(text)
    assert read.tags["GM"] == "11" and read.tags["size"] == "9" and read.tags["PB"] == "an]na"
    assert [m.notation for m in read.moves] == ["c3", "d4"]
    assert read.moves[0].comment == "a [b] c\\"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("(;GM[1]SZ[19];B[dd])", "not of Hex"),
        ("(;GM[11]SZ[13:11];B[c3])", "square boards only"),
        ("(;GM[11]SZ[13];W[c3])", "move 1 is W[...] where B[...] (Red's) was due"),
        ("(;GM[11]SZ[13];B[c3];W[swap-sides])", "swaps sides"),
        ("(;GM[11]SZ[13];B[c3];W[xyz])", "is not a cell"),
        ("(;GM[11]SZ[13]AB[c3];W[d4])", "set-up stones"),
        ("(;GM[11]SZ[13];B[c3", "cannot be read: unexpected end of SGF data"),
        ("(;GM[11]SZ[13];B;W[d4])", "cannot be read: property with no values"),
        ("no game here", "cannot be read: no SGF data found"),
    ],
)
def test_what_cannot_be_read_is_refused_saying_why(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        read_sgf(text)


def test_pbm_text_record_replays_with_swap() -> None:
    text = '[Game "Hex"]\n[Option "size=13 swap=on"]\n\n1. f6 2. swap {fair} 3. g7\n*\n'
    record = parse_record(text)
    assert [m.text for m in record.moves] == ["f6", "swap", "g7"]
    assert record.moves[1].comment == "fair"
    state = replay(record).state
    assert isinstance(state, HexState)
    assert state.ply == 3 and state.cells.count("B") == 1 and state.cells.count("R") == 1


def test_a_bare_text_record_replays_from_the_command_line() -> None:
    result = CliRunner().invoke(
        main,
        ["rules", "replay", "--game", "hex", "--option", "size=13", "-"],
        input="1. f6 2. swap 3. g7\n",
    )
    assert result.exit_code == 0, result.output
    assert "Last move: 3. g7, in brackets." in result.stdout
    assert "Result: * (game goes on) after 3 turns" in result.stdout


def test_an_sgf_replays_from_the_command_line() -> None:
    moves, outcome = random_game(7, size=7)
    text = write_sgf(record_of(moves, result=outcome))
    result = CliRunner().invoke(main, ["rules", "replay", "--game", "hex", "-"], input=text)
    assert result.exit_code == 0, result.output
    assert f"(connection) after {len(moves)} turns" in result.stdout


def test_sgf_is_read_by_hex_and_the_text_record_by_the_shell() -> None:
    assert SGF.recognizes_text("(;FF[4]GM[11]SZ[13];B[f6])")
    assert SGF.recognizes_text("(;SZ[13];B[f6])")  # no GM: a Hex record where Hex is named
    assert not SGF.recognizes_text("(;GM[1]SZ[19];B[dd])")  # Go's
    assert not SGF.recognizes_text("1. f6 2. swap 3. g7\n")
    record = parse_record("1. f6 2. swap 3. g7\n", "hex")
    assert [(m.number, m.side, m.text) for m in record.moves] == [
        (1, 0, "f6"),
        (2, 1, "swap"),
        (3, 0, "g7"),
    ]
    # An SGF that names no game is found to be Hex's by its GM.
    assert parse_record("(;FF[4]GM[11]SZ[7];B[d4];W[swap-pieces])").game == "hex"
