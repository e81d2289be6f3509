"""The shell's side of what Hex and Go brought to the game protocol, asked of the games
through ``pbm.games`` and never by name in the shell: moves of several words, ``accept``
as a move of a scoring phase, the game's own end on time, its own words for ``moves``,
boards whose first move is not turn 1 (Go's handicap), record formats with media types
that recognize their texts, a scored result that stands on a record's word, perft with
the game's own move generator, the games' options as ``pbm rules`` flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Clock, accepted

import pbm.games
from pbm import commands, games
from pbm.cli import main
from pbm.commands import CommandError, parse, parse_reply
from pbm.refusals import BadRequest, IllegalMoveRefused
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.boardtext import render_board_mails
from pbm.usecases.boardview import board_view
from pbm.usecases.challenges import Challenge
from pbm.usecases.computer import ComputerHelp, games_with_levels
from pbm.usecases.moves import Move
from pbm.usecases.proposals import Accept, Cancel
from pbm.usecases.queries import pages
from pbm.usecases.queries.reading import LegalMoves
from pbm.usecases.records import formats
from pbm.usecases.records.replay import parse_record, replay
from pbm.usecases.site import Site
from pbm.usecases.timers import RunClock

DATA = Path(__file__).parent / "data"
ALICE = "alice@example.org"
GO, HEX = games.get("go"), games.get("hex")


def who(uid: str) -> Who:
    return Who(uid, Password("pw"))


def go_board(site: Site, *options: str) -> int:
    opts = dict(o.split("=") for o in ("size=9", *options))
    return accepted(site, Challenge("go", "alice", "bob", sender=ALICE, options=opts))


def moved(site: Site, board: int, *moves: str) -> None:
    for text in moves:
        state = queries.board(site, board).state
        unit.run(site, Move(board, text), who(("alice", "bob")[state.to_move]))


# -- moves of several words


@pytest.mark.parametrize(
    ("line", "game", "move", "expect"),
    [
        ("dead D4 E5", GO, "dead D4 E5", None),
        ("alive Q16.", GO, "alive Q16", None),
        ("dead D4, E5#12", GO, "dead D4, E5", 12),
        ("D 4", GO, "D 4", None),
        ("g 7", HEX, "g 7", None),
        ("move g 7 #3", HEX, "g 7", 3),
    ],
)
def test_a_reply_s_move_may_be_several_words_where_the_game_reads_them_so(
    line: str, game: pbm.games.Game, move: str, expect: int | None
) -> None:
    found = parse_reply(line, game.looks_like_move, phrases=games.move_phrases(game))
    assert found is not None and found.command.name == "move"
    assert (found.args.move, found.args.expect) == (move, expect)


def test_a_classic_command_s_move_is_the_rest_of_the_line_where_the_game_reads_it_so() -> None:
    found = parse("go move 3 bob pw dead D4 E5 #9")
    assert found is not None and (found.args.move, found.args.expect) == ("dead D4 E5", 9)
    found = parse("hex move 3 bob pw g 7")
    assert found is not None and found.args.move == "g 7"
    # Games whose moves are one word read as before: words left over are a mistake.
    with pytest.raises(CommandError, match="'H-b1' is left over"):
        parse("accasta move 12 bob pw a1:C-d1, H-b1")
    found = parse("chess move 3 bob pw e4 claim")
    assert found is not None and (found.args.move, found.args.claim) == ("e4", True)
    chess = games.get("chess")
    with pytest.raises(CommandError, match="'thanks' is left over"):
        parse_reply("e4 thanks", chess.looks_like_move, phrases=games.move_phrases(chess))
    assert games.move_phrases(chess) is None and games.move_phrases(games.get("accasta")) is None


def test_the_record_command_s_words_come_from_the_games_formats() -> None:
    words = next(c.words for c in commands.ALL if c.name == "record")
    own = {f.name for name in games.names() for f in games.record_formats(games.get(name))}
    assert words == ("record", *sorted(own)) and {"pgn", "sgf"} <= set(words)
    assert formats.media_type("chess", "pgn") == "application/x-chess-pgn"
    assert formats.media_type("go", "sgf") == "application/x-go-sgf"
    assert formats.media_type("hex", "sgf") == "application/x-hex-sgf"
    assert formats.media_type("hex", "txt") == "text/plain"


# -- a scoring phase: accept as a move, the end on time


def test_accept_is_a_move_in_the_scoring_phase_and_go_s_refusal_before(site: Site) -> None:
    board = go_board(site)
    with pytest.raises(IllegalMoveRefused, match="accept: the game is not being scored"):
        unit.run(site, Accept(board), who("alice"))
    moved(site, board, "E5", "pass", "pass")
    assert queries.board(site, board).state.legal_moves() == ["accept", "resume"]
    replies = unit.run(site, Accept(board), who("bob"))  # White answers first
    assert any("Move 4, bob (White): accept" in r.body for r in replies)
    unit.run(site, Accept(board), who("alice"))
    ended = queries.board(site, board)
    assert (ended.result, ended.termination) == ("1-0", "by 73.5 points")
    assert [m.notation for m in ended.moves][-2:] == ["accept", "accept"]
    # A game without the word keeps the refusal of an accept with nothing asked.
    chess = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    with pytest.raises(BadRequest, match="Nobody asked to take back a move"):
        unit.run(site, Accept(chess), who("alice"))


def test_running_out_of_time_in_the_scoring_phase_ends_by_the_score(
    site: Site, clock: Clock
) -> None:
    board = go_board(site)
    moved(site, board, "E5", "D5", "pass", "pass")  # Black to answer the proposal
    clock.advance(days=22)  # the classic clock: forfeited after 21 days without a move
    (mail, *_) = unit.run(site, RunClock(board))
    ended = queries.board(site, board)
    assert ended.status == "finished" and ended.result is not None
    assert ended.termination is not None and ended.termination.startswith("by ")
    assert "alice ran out of time on board" in mail.body
    assert "by the rules the game ends as it stands" in mail.body


def test_a_plain_loss_on_time_where_the_game_has_no_say(site: Site, clock: Clock) -> None:
    board = go_board(site)
    moved(site, board, "E5")
    clock.advance(days=22)
    unit.run(site, RunClock(board))
    ended = queries.board(site, board)
    assert (ended.result, ended.termination) == ("1-0", "forfeit")


# -- the moves command in the game's words


def test_moves_answers_in_the_game_s_own_words(site: Site) -> None:
    board = accepted(site, Challenge("hex", "alice", "bob", sender=ALICE, options={"size": "5"}))
    moved(site, board, "c3")
    (answer,) = unit.run(site, LegalMoves(board, ALICE))
    assert answer.body.startswith("Legal moves for bob (move 2):\n\n24 empty cells")
    assert " 3: a3 b3 d3 e3\n" in answer.body and "Or swap:" in answer.body


# -- a board whose first move is turn 2: Go's handicap


def test_a_handicap_board_counts_its_stones_as_black_s_turn(site: Site) -> None:
    board = go_board(site, "handicap=2")
    start = queries.board(site, board)
    assert (start.ply, pages.first_ply(start)) == (1, 1)
    assert pages.position_at(start, 1) == start.position
    for ply in (0, 2):
        with pytest.raises(pages.NotShown):
            pages.position_at(start, ply)
    moved(site, board, "E5", "E3")
    played = queries.board(site, board)
    assert pages.position_at(played, 1) == start.position
    assert pages.move_at(played, 1) == "" and pages.move_at(played, 2) == "E5"
    assert pages.position_at(played, 3) == played.position
    text = formats.record_text(played)
    assert '[Black "alice"]\n[White "bob"]' in text
    assert '"handicap=2 komi=0.5 size=9"]\n\n2. E5\n3. E3\n*\n' in text
    replayed = replay(parse_record(text))
    assert replayed.canonical == ["E5", "E3"] and replayed.state.ply == 3
    # The same record without its tags, with the options given apart.
    bare = parse_record("2. E5 3. E3\n", "go", {"size": "9", "handicap": "2"})
    assert [(m.number, m.side, m.text) for m in bare.moves] == [(2, 1, "E5"), (3, 0, "E3")]
    (mail, *_) = render_board_mails(board_view(played, played.created_at), ["alice"])
    assert "Move 3, alice (Black): E3" in mail[1]
    assert re.search(r"^  \.\.\. +2\. E5\n  3\. E3$", mail[1], re.M)


def test_a_handicap_board_is_cancelled_at_once_before_its_first_move(site: Site) -> None:
    board = go_board(site, "handicap=2")
    unit.run(site, Cancel(board), who("bob"))
    assert queries.board(site, board).status == "cancelled"


# -- records: recognized texts, the game of an SGF, a result that stands


def test_an_sgf_names_its_game_and_a_professional_record_s_score_stands() -> None:
    text = (DATA / "go-ke-jie-alphago-2017-1.sgf").read_text(encoding="utf-8")
    record = parse_record(text)  # no --game: GM[1]
    assert record.game == "go" and record.result_stands
    replayed = replay(record)
    assert (replayed.result, replayed.termination) == ("0-1", "by 0.5 points")
    assert parse_record("(;FF[4]GM[11]SZ[7];B[d4];W[swap-pieces])").game == "hex"
    # A termination no move or claim explains is still refused where nothing says it stands.
    with pytest.raises(Exception, match="but after its moves the game goes on"):
        replay(parse_record('[Game "Chess"]\n[Termination "checkmate"]\n\n1. e4 e5 1-0\n'))


# -- pbm rules


def rules(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["rules", *args])
    return result.exit_code, result.stdout, result.stderr


def test_rules_take_the_games_options_as_flags() -> None:
    code, out, _ = rules("moves", "--game", "go", "--size", "9", "--count")
    assert (code, out) == (0, "82\n")  # 81 points and the pass
    code, out, _ = rules("show", "--game", "go", "--size=9", "--komi", "6.5", "E5")
    assert code == 0 and "komi 6.5" in out
    code, out, _ = rules("moves", "--game", "hex", "--option", "size=13", "--size", "5", "--count")
    assert (code, out) == (0, "25\n")  # a flag wins over --option
    code, _, err = rules("moves", "--game", "hex", "--size", "40")
    assert code == 2 and "size cannot be '40'" in err
    code, _, err = rules("moves", "--size", "9")  # Accasta, the first game, has no size
    assert code == 2 and "unknown option 'size'" in err


def test_rules_name_a_refused_move_by_the_game_s_number() -> None:
    code, _, err = rules("show", "--game", "go", "--size", "9", "--handicap", "2", "E5", "E5")
    assert code == 1 and err.startswith("move 3 Black (E5): E5 is taken")
    code, _, err = rules("show", "--game", "chess", "e4", "e5", "Nf3", "Ke7", "Ke2", "Kd9")
    assert code == 1 and err.startswith("move 3 Black (Kd9)")


@pytest.mark.parametrize(
    ("game", "options", "moves", "depth"),
    [
        ("accasta", {}, ("a1:C-d1",), 2),
        ("chess", {}, ("e4", "e5", "Nf3"), 3),
        ("hex", {"size": "5"}, ("c3",), 3),
        ("go", {"size": "9"}, ("E5", "pass"), 2),
    ],
)
def test_perft_with_the_game_s_engine_counts_what_the_protocol_counts(
    game: str, options: dict[str, str], moves: tuple[str, ...], depth: int
) -> None:
    state = games.get(game).new(None, options)
    for move in moves:
        state = state.play(move)[0]
    assert getattr(state, "perft", None) is not None
    assert games.perft(state, depth) == games.count_turns(state, depth)
    flags = [f"--{k}={v}" for k, v in options.items()]
    code, out, _ = rules("perft", "--game", game, *flags, "--depth", str(depth), *moves)
    assert (code, out) == (0, f"{games.count_turns(state, depth)}\n")


# -- the computer player


def test_help_computer_s_example_is_a_game_it_plays(site: Site) -> None:
    (answer,) = unit.run(site, ComputerHelp(ALICE))
    assert f"for example: {games_with_levels()[0]} challenge YOURID computer --level=3" in " ".join(
        answer.body.split()
    )
    assert "Go, --level=N" in answer.body and "Hex, --level=N" in answer.body


def test_go_against_the_computer_needs_gnu_go(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    # As on a machine without GNU Go: the program the Go computer needs is missing.
    monkeypatch.setattr(GO, "computer_program", "no-such-gnugo-here")
    with pytest.raises(BadRequest, match="No engine for Go is installed here"):
        unit.run(site, Challenge("go", "bob", "computer", sender="bob@example.org"))
