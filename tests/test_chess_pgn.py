"""Tests for chess game records in PGN (pbm.games.chess.pgn)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import chess
import chess.pgn
import pytest

from pbm.games import GameRecord, RecordedMove, Termination, record_format, record_formats
from pbm.games.accasta import ACCASTA
from pbm.games.chess import CHESS
from pbm.games.chess.pgn import PGN, read_pgn, write_pgn
from pbm.usecases.records.replay import RecordError, parse_record, replay

SCHOLARS_MATE = ("e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#")
STARTED = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
ENDED = datetime(2025, 4, 2, 9, 30, tzinfo=UTC)


def record(
    moves: tuple[str, ...] = SCHOLARS_MATE,
    comments: dict[int, str] | None = None,
    result: str = "1-0",
    termination: str | None = "checkmate",
    ended: datetime | None = ENDED,
    forfeit_days: int = 21,
) -> GameRecord:
    comments = comments or {}
    return GameRecord(
        game="chess",
        variant="standard",
        options={},
        board=12,
        players=("anna", "bert"),
        started=STARTED,
        ended=ended,
        result=result,
        termination=termination,
        moves=tuple(
            RecordedMove(ply, san, comments.get(ply, "")) for ply, san in enumerate(moves, 1)
        ),
        site="pbm@example.org",
        nag_days=7,
        forfeit_days=forfeit_days,
    )


def test_seven_tag_roster_and_the_server_tags() -> None:
    text = write_pgn(record())
    assert text.splitlines()[:15] == [
        '[Event "pbm correspondence game"]',
        '[Site "pbm@example.org"]',
        '[Date "2025.03.01"]',
        '[Round "-"]',
        '[White "anna"]',
        '[Black "bert"]',
        '[Result "1-0"]',
        '[Board "12"]',
        '[Mode "EM"]',
        '[TimeControl "1/1814400"]',
        '[Termination "normal"]',
        '[TerminationDetails "checkmate"]',
        '[EndDate "2025.04.02"]',
        '[PlyCount "7"]',
        "",
    ]
    assert text.splitlines()[15] == "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0"
    assert text.endswith("1-0\n")


def test_written_game_reads_back_in_python_chess() -> None:
    game = chess.pgn.read_game(io.StringIO(write_pgn(record())))
    assert game is not None and not game.errors
    final = game.end().board()
    assert final.is_checkmate()
    expected = chess.Board()
    for san in SCHOLARS_MATE:
        expected.push_san(san)
    assert final.fen() == expected.fen()
    assert game.headers["Result"] == "1-0"


def sans(text: str) -> list[str]:
    return [m.notation for m in read_pgn(text).moves]


def test_read_pgn_gives_tags_moves_result_and_ending() -> None:
    read = read_pgn(write_pgn(record(comments={2: "well {met}"})))
    assert [m.notation for m in read.moves] == list(SCHOLARS_MATE)
    assert [m.ply for m in read.moves] == list(range(1, 8))
    assert read.moves[1].comment == "well (met)"
    assert read.result == "1-0" and read.termination == "checkmate"
    assert read.tags["White"] == "anna" and read.tags["Board"] == "12"


def test_comments_follow_their_moves_with_braces_neutralised() -> None:
    comments = {3: "Hope {this} works }", 6: "two\nlines", 7: "Sorry!"}
    text = write_pgn(record(comments=comments))
    assert "2. Bc4 { Hope (this) works ) } 2... Nc6" in text
    assert "Nf6 { two lines } 4. Qxf7# { Sorry! } 1-0" in text
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    nodes = list(game.mainline())
    assert [node.comment for node in nodes][2] == "Hope (this) works )"
    assert nodes[6].comment == "Sorry!"
    assert sans(text) == list(SCHOLARS_MATE)


def test_forfeit_resignation_agreement_and_a_game_in_progress() -> None:
    forfeit = write_pgn(record(SCHOLARS_MATE[:3], result="0-1", termination=Termination.FORFEIT))
    assert '[Termination "time forfeit"]' in forfeit
    assert '[TerminationDetails "forfeit"]' in forfeit
    resigned = write_pgn(record(SCHOLARS_MATE[:4], result="1-0", termination="resign"))
    assert '[Termination "normal"]' in resigned and '[TerminationDetails "resign"]' in resigned
    agreed = write_pgn(record(SCHOLARS_MATE[:2], result="1/2-1/2", termination="agreement"))
    assert '[Result "1/2-1/2"]' in agreed and agreed.endswith("1. e4 e5 1/2-1/2\n")
    going = write_pgn(record(SCHOLARS_MATE[:2], result="*", termination=None, ended=None))
    assert '[Termination "unterminated"]' in going
    assert "TerminationDetails" not in going and "EndDate" not in going
    assert going.endswith("1. e4 e5 *\n")
    assert read_pgn(going).result is None and read_pgn(going).termination is None
    assert read_pgn(forfeit).termination == Termination.FORFEIT
    assert read_pgn(agreed).termination == "agreement"


@pytest.mark.parametrize(
    ("tags", "ending"),
    [
        ('[Termination "time forfeit"]', Termination.FORFEIT),
        ('[Termination "normal"]', None),
        ('[Termination "abandoned"]', None),
        ('[Termination "resign"]', "resign"),  # pbm's text record words it so
        (
            '[Termination "normal"]\n[TerminationDetails "threefold repetition"]',
            "threefold repetition",
        ),
        ("", None),
    ],
)
def test_how_a_read_game_ended(tags: str, ending: str | None) -> None:
    assert read_pgn(f"{tags}\n\n1. e4 e5 1/2-1/2\n").termination == ending


def test_time_control_is_one_move_per_forfeit_time() -> None:
    assert '[TimeControl "1/259200"]' in write_pgn(record(forfeit_days=3))
    assert '[TimeControl "-"]' in write_pgn(record(forfeit_days=0))


def test_a_record_with_an_illegal_move_is_refused() -> None:
    with pytest.raises(ValueError, match=r"move 3 of board 12, 'Kf3', is not legal"):
        write_pgn(record(("e4", "e5", "Kf3")))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no PGN game found: the text is empty"),
        ("hello world, how are you?", "no PGN game found: neither tags nor moves"),
        ("1. e4 e5 2. Nf6", r"move 2\. Nf6 \(White's\) is not legal in the PGN game"),
        ('[Event "x"]\n\n1. e4 e5 2. Nf3 Nf3 *', r"move 2\.\.\. Nf3 \(Black's\) is not legal"),
    ],
)
def test_read_pgn_refuses_what_is_no_game(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_pgn(text)


def test_read_pgn_of_tags_without_moves() -> None:
    read = read_pgn('[Event "x"]\n[White "a"]\n\n*\n')
    assert (read.tags["Event"], read.tags["White"], read.moves, read.result) == ("x", "a", (), None)


def test_a_game_from_a_set_up_position_is_refused() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    with pytest.raises(ValueError, match=r"starts from a set-up position \(4k3/"):
        read_pgn(f'[SetUp "1"]\n[FEN "{fen}"]\n\n1. e4 *\n')


def test_pgn_is_the_chess_record_format() -> None:
    assert record_formats(CHESS) == (PGN,) and record_format(CHESS, "PGN") is PGN
    assert (PGN.name, PGN.suffix) == ("pgn", "pgn")
    assert PGN.recognizes(read_pgn(write_pgn(record())).tags)
    assert not PGN.recognizes({"Game": "Accasta", "White": "a", "Black": "b", "Result": "*"})
    assert record_formats(ACCASTA) == () and record_format(ACCASTA, "pgn") is None


FOREIGN = """[Event "Club championship"]
[Site "Utrecht"]
[Date "1998.05.14"]
[Round "3"]
[White "Anna"]
[Black "Bert"]
[Result "0-1"]
[Termination "Normal"]

1. e4 e5 2. Qh5?! Nc6 3. Bc4 g6 {Not Nf6??} 4. Qf3 Nf6 5. Ne2 Bg7 0-1
"""


def test_a_pgn_from_elsewhere_is_chess_and_replays() -> None:
    record = parse_record(FOREIGN)  # no game named: the Seven Tag Roster says chess
    assert record.game == "chess" and record.moves[5].comment == "Not Nf6??"
    replayed = replay(record)
    assert (replayed.result, replayed.termination) == ("0-1", "resign")
    assert replayed.canonical[2] == "Qh5"
    with pytest.raises(RecordError, match=r"move 3\. Bc5 \(White's\) is not legal"):
        parse_record(FOREIGN.replace("3. Bc4", "3. Bc5"))
    with pytest.raises(RecordError, match=r"ended by checkmate, but after its moves the game"):
        replay(parse_record(FOREIGN.replace('"Normal"', '"checkmate"')))
