"""Tests for game records (pbm.usecases.records.replay): reading published games and replaying them.

The fixtures in tests/data are the sample games of the rules texts: the
standard game Stein - Williams (2004) from Dieter Stein's article and the
Pari game from the German rules. Where the seed texts themselves are at hand
(../shared/seeds beside the clone), their game sections are read as well.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbm.games.accasta import ACCASTA
from pbm.usecases.records.replay import RecordError, parse_record, replay

DATA = Path(__file__).parent / "data"
SEEDS_CANDIDATES = (
    Path(__file__).resolve().parents[2] / "shared" / "seeds",
    Path("/work/shared/seeds"),
)


def record_form(text: str) -> str:
    """A move as a record writes it, in canonical spelling: – → -, × → x, no ! ? ;."""
    return re.sub(r"[!?;]", "", text.replace("–", "-").replace("×", "x"))


def seed_text(prefix: str) -> str:
    for folder in SEEDS_CANDIDATES:
        found = sorted(folder.glob(f"{prefix}_*.txt")) if folder.is_dir() else []
        if found:
            return found[0].read_text(encoding="utf-8")
    pytest.skip(f"the seed texts ({prefix}_*.txt) are not beside this clone")


STANDARD_MOVES = [
    "a1:C+b2,HS-c1",
    "g2:C+f2,H+f3",
    "b2:CHS-c2",
    "f2:Cxc1,HS-e2",
    "c2:Cxc1,H+c3,S-d2",
    "e2:Hxc3,S-d3",
    "c1:Cc+d2,HS-b1",
    "f3:H+e4,H-f2,S+e3",
    "d2:Cc-d1,Sxd3",
    "c3:Hhsxd3",
    "b3:H+c4,S-c3",
    "d3:Hhss-c2,Sxc3",
    "a4:CHS-b5",
    "c3:Ssxc4",
    "b5:Cxe4,HS-d5",
    "e3:S-d3,S-d4",
    "a3:Cxd3,HS-c3",
    "d4:Sxc3",
    "e4:Chsxc3",
    "f4:H-d4,S-e4",
    "d5:Hxd4,Sxe4",
    "g1:Cxd1,HS-e1",
    "d3:Cxg3",
]

PARI_MOVES = [
    "b4:2-c5",
    "e4:+e3",
    "a4:3-b4",
    "f2:+f3,+e3",
    "b2:2+c3",
    "f4:2-e5",
    "c4:-d4",
    "e3:+e5,xd4",
    "b4:xd4,2-c4",
    "e5:xc4",
    "c5:xc4,-d5",
    "e5:-e4",
    "d4:2xe3,-d3",
    "e4:-d4",
    "c4:2xd4",
    "f3:xe3,2xd5",
    "c4:xd5",
    "e3:3+e5,xd4",
    "d3:xd4",
    "e5:2xd5,-e3,-e4",
    "d4:2+c4,3xe3",
    "d5:6-b5",
    "a3:3-b4",
    "b5:3-a4,xb4,2+a4",
    "a2:3-a3",
    "g3:3-e5",
    "c4:2-d5",
    "g2:3-d2",
    "c3:xe4,-c2",
    "e5:2-c6,xd5",
]


def test_standard_sample_game_replays() -> None:
    record = parse_record((DATA / "sample_standard.txt").read_text(encoding="utf-8"))
    assert record.variant == "standard"
    assert record.tags["White"] == "Dieter Stein"
    assert record.tags["Event"] == "played by email, January 2004"
    assert len(record.moves) == 23
    assert record.moves[-1].number == 12 and record.moves[-1].side == 0
    assert record.result == "1-0"
    assert "Black resigns" in record.result_words
    done = replay(record)
    assert done.canonical == [record_form(m.text) for m in record.moves]
    assert done.canonical == STANDARD_MOVES
    assert (done.result, done.termination) == ("1-0", "resign")
    assert done.state.outcome is None  # Black resigned; the rules had not ended it
    assert done.state.ply == 23


def test_standard_sample_final_position() -> None:
    done = replay(parse_record((DATA / "sample_standard.txt").read_text(encoding="utf-8")))
    assert isinstance(done.state, type(ACCASTA.new()))
    board = dict(zip(_cells(), done.state.position.board, strict=True))
    # 12. d3:Cxg3 puts White's second head into Black's castle (with e3 of move 10).
    assert board["g3"].endswith("C")
    white_heads_in_black_castle = [
        c for c in ("g1", "g2", "g3", "g4", "f2", "f3", "f4", "e3", "e4") if board[c][-1:].isupper()
    ]
    assert len(white_heads_in_black_castle) == 2
    assert sum(len(s) for s in board.values()) == 40


def _cells() -> list[str]:
    from pbm.games.accasta.board import CELLS

    return list(CELLS)


def test_standard_sample_comments_are_kept() -> None:
    record = parse_record((DATA / "sample_standard.txt").read_text(encoding="utf-8"))
    assert record.moves[0].comment == "An opening that requires covering c1 in a subsequent move."
    assert record.moves[2].comment == ""
    # A comment over three lines with [brackets] inside.
    assert record.moves[7].comment.startswith("Additional support for d3.")
    assert "[H+e4]" in record.moves[7].comment
    assert record.moves[4].text == "c2:Cxc1,H+c3?,S-d2"


@pytest.mark.parametrize("d4_opening", ["allowed", "banned"])
def test_pari_sample_game_replays(d4_opening: str) -> None:
    record = parse_record((DATA / "sample_pari.txt").read_text(encoding="utf-8"))
    assert record.variant == "pari"
    assert len(record.moves) == 30
    assert record.result == "0-1"
    assert "Weiß gibt auf" in record.result_words
    done = replay(record, options={"d4_opening": d4_opening})
    assert done.canonical == [record_form(m.text) for m in record.moves]
    assert done.canonical == PARI_MOVES
    assert (done.result, done.termination) == ("0-1", "resign")
    assert done.state.outcome is None


def test_seed_article_game_replays() -> None:
    """The sample game as printed in the article, prose comments, bold marks and all."""
    text = seed_text("000")
    section = text[text.index("Sample Game") : text.index("An Accasta Problem")]
    section = section[section.index("1. a1:") :]
    # Diagram captions inside the game are no part of the record.
    section = re.sub(r"(?m)^(Position after .*|Final position)$", "", section)
    record = parse_record(section)
    assert record.result == "1-0"
    done = replay(record)
    assert done.canonical == STANDARD_MOVES
    assert record.moves[6].comment.startswith("A defensive move;")
    assert record.moves[12].comment.startswith("White")
    assert "threatening e4" in record.moves[12].comment  # the comment goes on over a page break


def test_seed_german_pari_game_replays() -> None:
    text = seed_text("003")
    section = text[text.index("Beispielpartie") :]
    section = section[section.index("1.") : section.index("Abb.")]
    record = parse_record('[Variant "pari"]\n' + section)
    assert record.result == "0-1"
    assert replay(record).canonical == PARI_MOVES


def test_seed_italian_pari_game_replays_with_d4_banned() -> None:
    text = seed_text("004")
    section = text[text.index("Esempio di partita") :]
    section = section[section.index("1. ") : section.index("Figura")]
    record = parse_record('[Variant "pari"]\n[Option "d4_opening=banned"]\n' + section)
    assert record.options() == {"d4_opening": "banned"}
    assert record.result == "0-1"  # "Il bianco concede": White gives up
    done = replay(record)
    assert done.canonical == PARI_MOVES
    assert done.state.options["d4_opening"] == "banned"


# --------------------------------------------------------------------------
# Reading records
# --------------------------------------------------------------------------


def test_tags_and_options() -> None:
    record = parse_record(
        '[Game "Accasta"]\n[Variant "pari"]\n[Option "castle_win=next_turn d4_opening=banned"]\n'
        '[White "A \\"quoted\\" name"]\n\n1. b4:2-c5\n'
    )
    assert record.tags["White"] == 'A "quoted" name'
    assert record.options() == {"castle_win": "next_turn", "d4_opening": "banned"}
    assert record.result is None
    done = replay(record)
    assert done.state.options == {"castle_win": "next_turn", "d4_opening": "banned"}
    assert done.state.variant == "pari"
    assert (done.result, done.termination) == (None, None)
    record = parse_record('[castle_win "next_turn"]\n1. a1:C-d1')
    assert record.options() == {"castle_win": "next_turn"}


def test_comments_in_parentheses_and_braces_nested() -> None:
    record = parse_record(
        "1. a1:C-d1,H-b1,S+b1 {a brace (with a paren) inside} "
        "g1:CHxd1 (outer (inner {deep} more) end)\n"
        "2. c4:S-d5 (x) {y} d1:CHc-e1"
    )
    assert [m.text for m in record.moves] == [
        "a1:C-d1,H-b1,S+b1",
        "g1:CHxd1",
        "c4:S-d5",
        "d1:CHc-e1",
    ]
    assert record.moves[0].comment == "a brace (with a paren) inside"
    assert record.moves[1].comment == "outer (inner {deep} more) end"
    assert record.moves[2].comment == "x y"
    assert [m.side for m in record.moves] == [0, 1, 0, 1]
    assert [m.number for m in record.moves] == [1, 1, 2, 2]


def test_moves_that_look_like_moves_inside_comments_are_ignored() -> None:
    record = parse_record("1. a1:C-d1 (if g1:CHxd1 then d1 falls) g2:C-f1")
    assert [m.text for m in record.moves] == ["a1:C-d1", "g2:C-f1"]


@pytest.mark.parametrize(
    ("words", "result"),
    [
        ("Black resigns.", "1-0"),
        ("White resigns", "0-1"),
        ("Weiß gibt auf.", "0-1"),
        ("Schwarz gibt auf.", "1-0"),
        ("Il bianco concede la vittoria al nero", "0-1"),
        ("1-0", "1-0"),
        ("0-1", "0-1"),
        ("White wins", "1-0"),
    ],
)
def test_result_words(words: str, result: str) -> None:
    record = parse_record(f"1. a1:C-d1 g1:C-e1 {words}")
    assert record.result == result
    assert len(record.moves) == 2
    done = replay(record)
    assert done.result == result
    assert done.termination == "resign"


def test_black_move_numbers_with_spaced_dots() -> None:
    record = parse_record("1. a1:C-d1 1. ... g1:CHxd1 2.c4:S-d5 2. ... d1:CHc-e1")
    assert [(m.number, m.side) for m in record.moves] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert replay(record).canonical == ["a1:C-d1", "g1:CHxd1", "c4:S-d5", "d1:CHc-e1"]


@pytest.mark.parametrize(
    "text",
    [
        "1. a1:C-d1 1... g1:CHxd1 2. c4:S-d5 2... d1:CHc-e1",
        "1. a1:C-d1 1...g1:CHxd1 2. c4:S-d5 2...d1:CHc-e1",
    ],
)
def test_black_move_numbers_with_three_dots(text: str) -> None:
    """``1...`` must not swallow the rest of the record.

    A regression test: ``_NUMBER_PREFIX`` once matched the "1." of "1..." (its
    look-ahead wanted only a non-space) and left ".." as a word, after which
    every later move was taken for result words and dropped.
    """
    record = parse_record(text)
    assert [(m.number, m.side) for m in record.moves] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert record.result_words == ""


def test_a_black_move_numbered_too_late_is_refused() -> None:
    with pytest.raises(RecordError, match=r"move number 3\. found where move 1 Black was due"):
        parse_record("1. a1:C-d1,H-b1,S+b1 3. g1:Cxd1")
    with pytest.raises(RecordError, match=r"move number 2\.\.\. found where move 1 Black"):
        parse_record("1. a1:C-d1,H-b1,S+b1 2... g1:Cxd1")


def test_wrong_move_numbers_are_refused() -> None:
    with pytest.raises(RecordError, match=r"move number 3\. found where move 2 White was due"):
        parse_record("1. a1:C-d1 g1:C-e1 3. a2:C-b1")
    with pytest.raises(RecordError, match=r"move number 2\. found where move 3 White was due"):
        parse_record("1. a1:C-d1 2. g1:C-e1 2. a2:C-b1")


def test_every_turn_numbered_reads_as_pairs_do() -> None:
    """pbm's Accasta records number every turn, as its board mails and #N do."""
    pairs = parse_record("1. a1:C-d1 g1:C-e1 2. a2:C-b1 g2:C-f1")
    turns = parse_record("1. a1:C-d1 2. g1:C-e1 3. a2:C-b1 4. g2:C-f1")
    assert [m.text for m in turns.moves] == [m.text for m in pairs.moves]


def test_an_illegal_move_names_number_side_and_reason() -> None:
    record = parse_record("1. a1:C-d1 g1:CHxd1 2. c4:S-d5 d1:CHc-e3")
    with pytest.raises(RecordError) as info:
        replay(record)
    msg = str(info.value)
    assert msg.startswith("move 2 Black (d1:CHc-e3): ")
    assert "e3 is not on a straight line from d1" in msg
    with pytest.raises(RecordError, match=r"^move 1 White \(a1:H-b1\): a1 holds C, H, S"):
        replay(parse_record("1. a1:H-b1"))
    with pytest.raises(RecordError, match=r"move 2 White \(a2:Cxb2\): b2 is your own stack"):
        replay(parse_record("1. a1:C-d1 g1:C-e1 2. a2:Cxb2"))
    with pytest.raises(RecordError, match=r"move 1 Black \(a2:C-b1\): a2 is headed by White"):
        replay(parse_record("1. a1:C-d1 a2:C-b1"))


# White heads g3, g4 and f3 in Black's castle after 4. f4:... (found by a seeded playout).
WHITE_WINS = (
    "1. b2:H-b1,S+b3 g4:C-f5,H+f4 2. a4:CHS-c6 f5:Cxc4 3. c6:CHSxf4 g1:C-d1,HS-f1 "
    "4. f4:Cxg3,Hxf3,Shhxg4"
)


def test_a_castle_win_ends_the_record() -> None:
    done = replay(parse_record(WHITE_WINS))
    assert (done.result, done.termination) == ("1-0", "castle")
    assert done.state.legal_moves() == []
    # With castle_win=next_turn Black may still answer.
    done = replay(parse_record(WHITE_WINS), options={"castle_win": "next_turn"})
    assert (done.result, done.termination) == (None, None)
    assert done.state.outcome is None


def test_a_move_after_the_end_is_refused() -> None:
    with pytest.raises(RecordError) as info:
        replay(parse_record(WHITE_WINS + " d1:C-d2"))
    assert str(info.value) == "move 4 Black (d1:C-d2): the game was already over"
    with pytest.raises(RecordError, match="the record says 0-1, but the moves end with 1-0"):
        replay(parse_record(WHITE_WINS + " 0-1"))
    assert replay(parse_record(WHITE_WINS + " 1-0")).result == "1-0"


def test_a_result_that_contradicts_the_board_is_refused() -> None:
    with pytest.raises(RecordError, match="goes on"):
        replay(parse_record('[Termination "castle"]\n1. a1:C-d1 1-0'))


def test_result_tag() -> None:
    record = parse_record('[Result "0-1"]\n1. a1:C-d1')
    assert record.result == "0-1"
    assert replay(record).result == "0-1"


@pytest.mark.parametrize(
    "text",
    [
        "1. a1:C-d1 g1:C-e1 1/2-1/2",
        "1. a1:C-d1 g1:C-e1 ½-½",
        '[Result "1/2-1/2"]\n1. a1:C-d1 g1:C-e1',
        '[Result "1/2-1/2"]\n1. a1:C-d1 g1:C-e1 1/2-1/2',
        '[Result "1/2-1/2"]\n[Termination "agreement"]\n1. a1:C-d1 g1:C-e1 ½-½',
    ],
)
def test_a_drawn_record_is_read_as_a_draw(text: str) -> None:
    record = parse_record(text)
    assert record.result == "1/2-1/2"
    assert len(record.moves) == 2
    assert record.result_words == ""
    done = replay(record)
    assert (done.result, done.termination) == ("1/2-1/2", "agreement")
    assert done.canonical == ["a1:C-d1", "g1:C-e1"]
    assert done.state.outcome is None  # the players agreed; the rules had not ended it


def test_a_draw_that_contradicts_the_record_is_refused() -> None:
    with pytest.raises(RecordError, match="the Result tag says 1/2-1/2, the record ends with 1-0"):
        parse_record('[Result "1/2-1/2"]\n1. a1:C-d1 g1:C-e1 1-0')
    with pytest.raises(RecordError, match="the Result tag says 0-1, the record ends with ½-½"):
        parse_record('[Result "0-1"]\n1. a1:C-d1 g1:C-e1 ½-½')
    # The moves end the game with a win: it was no draw.
    with pytest.raises(
        RecordError, match=r"the record says 1/2-1/2, but the moves end with 1-0 \(castle\)"
    ):
        replay(parse_record(WHITE_WINS + " 1/2-1/2"))


@pytest.mark.parametrize("result", ["1-0", "0-1", "1/2-1/2", ""])
@pytest.mark.parametrize("termination", ["castle", "checkmate", "stalemate"])
def test_a_rules_ending_named_while_the_game_goes_on_is_an_error(
    termination: str, result: str
) -> None:
    tag = f'[Result "{result}"]\n' if result else ""
    record = parse_record(f'{tag}[Termination "{termination}"]\n1. a1:C-d1 g1:C-e1')
    with pytest.raises(RecordError) as info:
        replay(record)
    assert str(info.value) == (
        f"the record says the game ended by {termination}, but after its moves the game goes on"
    )


def test_a_rules_ending_named_where_the_rules_end_the_game_is_fine() -> None:
    done = replay(parse_record('[Termination "castle"]\n' + WHITE_WINS + " 1-0"))
    assert (done.result, done.termination) == ("1-0", "castle")


@pytest.mark.parametrize(
    ("termination", "result"),
    [("resign", "0-1"), ("forfeit", "1-0"), ("agreement", "1/2-1/2")],
)
def test_an_ending_off_the_board_is_taken_from_the_record(termination: str, result: str) -> None:
    record = parse_record(f'[Termination "{termination}"]\n1. a1:C-d1 g1:C-e1 {result}')
    done = replay(record)
    assert (done.result, done.termination) == (result, termination)


def test_an_empty_termination_tag_is_no_termination() -> None:
    """As an archived game still going writes it: ``[Termination ""]`` and ``*``."""
    done = replay(parse_record('[Result "*"]\n[Termination ""]\n1. a1:C-d1 g1:C-e1\n*\n'))
    assert (done.result, done.termination) == (None, None)
    done = replay(parse_record('[Termination ""]\n1. a1:C-d1 g1:C-e1 0-1'))
    assert (done.result, done.termination) == ("0-1", "resign")


def test_the_game_of_a_record() -> None:
    """Named by the caller, else by the Game tag (name or title), else the first game here."""
    for text, game in [
        ("1. a1:C-d1", None),
        ('[Game "Accasta"]\n1. a1:C-d1', None),
        ('[Game "accasta"]\n1. a1:C-d1', None),
        ("1. a1:C-d1", "accasta"),
        ('[Game "shogi"]\n1. a1:C-d1', "ACCASTA"),  # the caller's word goes first
    ]:
        record = parse_record(text, game)
        assert record.game == "accasta"
        assert replay(record).canonical == ["a1:C-d1"]
    assert replay(parse_record("1. a1:C-d1"), game="accasta").canonical == ["a1:C-d1"]
    with pytest.raises(RecordError, match=r"no game 'shogi' here; games: .*accasta"):
        parse_record('[Game "shogi"]\n1. e4 e5')
    with pytest.raises(RecordError, match="no game 'shogi' here"):
        parse_record("1. a1:C-d1", game="shogi")
    with pytest.raises(RecordError, match="no game 'shogi' here"):
        replay(parse_record("1. a1:C-d1"), game="shogi")
