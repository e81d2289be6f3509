"""The mail command language (COMMANDS.md): a line -> Parsed(command, args, game).

``pbm.commands.parse`` reads the classic form, ``parse_reply`` reply mode;
both give None for a line that is no command and raise ``CommandError`` (what
is wrong, and the right form) for one that starts like a command but is
malformed. The error texts are those players got before the redesign.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm import commands, games
from pbm.commands import ALL, CommandError, Context, Parsed, help_text, parse, parse_reply
from pbm.commands.grammar import Args, bare
from pbm.usecases import (
    accounts,
    challenges,
    digests,
    moves,
    nextgame,
    proposals,
    queue,
    rematch,
    talk,
    vacations,
)
from pbm.usecases.auth import ByReply, Password, Who
from pbm.usecases.queries import reading

ACCASTA = games.get("accasta")
MOVE_USAGE = "accasta move needs: accasta move BOARD USERID PASSWORD MOVE[#N]"
GAME_COMMANDS = (
    "accasta commands: accept, board, cancel, challenge, chat, claim, decline, draw, games, "
    "help, history, move, moves, pgn, queue, ratings, record, reject, rematch, resign, sgf, show, "
    "subscribe, undo, unsubscribe"
)


def read(line: str) -> Parsed:
    found = parse(line)
    assert found is not None, line
    return found


def read_reply(line: str) -> Parsed:
    found = parse_reply(line, ACCASTA.looks_like_move)
    assert found is not None, line
    return found


def read_reply_with(line: str, looks_like_move: Callable[[str], bool]) -> Parsed:
    found = parse_reply(line, looks_like_move)
    assert found is not None, line
    return found


def anything(word: str) -> bool:
    return True


def nothing(word: str) -> bool:
    return False


def error_of(line: str) -> str:
    with pytest.raises(CommandError) as info:
        parse(line)
    return str(info.value)


def reply_error_of(line: str) -> str:
    with pytest.raises(CommandError) as info:
        parse_reply(line, ACCASTA.looks_like_move)
    return str(info.value)


def player(**kw: Any) -> Args:
    """The arguments of ``accasta VERB 12 bob pw ...``."""
    return Args(board=12, userid="bob", password="pw", **kw)


# --- the classic form -------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "name", "game", "args"),
    [
        ("signup bob Secret", "signup", None, Args(userid="bob", password="Secret")),
        (
            "signup bob Secret bob@example.org",
            "signup",
            None,
            Args(userid="bob", password="Secret", email="bob@example.org"),
        ),
        (
            "signup bob Secret <bob@example.org>",
            "signup",
            None,
            Args(userid="bob", password="Secret", email="bob@example.org"),
        ),
        (
            "password bob old New",
            "password",
            None,
            Args(userid="bob", password="old", new_password="New"),
        ),
        (
            "address bob pw Bob@Example.org",
            "address",
            None,
            Args(userid="bob", password="pw", email="Bob@Example.org"),
        ),
        ("help", "help", None, Args()),
        ("help accasta", "help", None, Args(game="accasta")),
        ("accasta help", "help", "accasta", Args()),
        ("games bob", "games", None, Args(userid="bob")),
        ("accasta games", "games", "accasta", Args()),
        ("accasta games bob", "games", "accasta", Args(userid="bob")),
        ("vacation bob pw 10", "vacation", None, Args(userid="bob", password="pw", days=10)),
        ("vacation bob pw off", "vacation", None, Args(userid="bob", password="pw", days=None)),
        (
            "accasta challenge bob alice",
            "challenge",
            "accasta",
            Args(userid="bob", userid2="alice"),
        ),
        (
            "accasta challenge bob alice --variant=pari --nagtime=3 --forfeittime=14",
            "challenge",
            "accasta",
            Args(userid="bob", userid2="alice", variant="pari", nag_days=3, forfeit_days=14),
        ),
        (
            "accasta challenge bob alice --castle_win=next_turn --option=d4_opening=banned",
            "challenge",
            "accasta",
            Args(
                userid="bob",
                userid2="alice",
                options={"castle_win": "next_turn", "d4_opening": "banned"},
            ),
        ),
        (
            "accasta move 12 bob pw a1:C-d1,H-b1,+b1",
            "move",
            "accasta",
            player(move="a1:C-d1,H-b1,+b1"),
        ),
        ("accasta move 12 bob pw a1Cd1Hb1b1", "move", "accasta", player(move="a1Cd1Hb1b1")),
        ("accasta move 12 bob pw d1:CHc-e1;", "move", "accasta", player(move="d1:CHc-e1")),
        ("accasta move 12 bob pw a1:-d1#7", "move", "accasta", player(move="a1:-d1", expect=7)),
        ("accasta move 12 bob pw a1:-d1 #7", "move", "accasta", player(move="a1:-d1", expect=7)),
        (
            "accasta move 12 bob pw a1:-d1 claim",
            "move",
            "accasta",
            player(move="a1:-d1", claim=True),
        ),
        ("accasta move 12 bob pw resign", "move", "accasta", player(move="resign")),
        ("accasta resign 12 bob pw", "resign", "accasta", player()),
        ("accasta show 12", "show", "accasta", Args(board=12)),
        ("accasta board 12", "show", "accasta", Args(board=12)),
        ("accasta history 12", "history", "accasta", Args(board=12)),
        ("accasta moves 12", "moves", "accasta", Args(board=12)),
        ("accasta undo 12 bob pw", "undo", "accasta", player()),
        ("accasta accept 12 bob pw", "accept", "accasta", player()),
        ("accasta reject 12 bob pw", "reject", "accasta", player()),
        ("accasta cancel 12 bob pw", "cancel", "accasta", player()),
        ("accasta draw 12 bob pw", "draw", "accasta", player()),
        ("accasta claim 12 bob pw", "claim", "accasta", player()),
        ("accasta chat 12 bob pw", "chat", "accasta", player()),
        ("accasta subscribe 12 bob pw", "subscribe", "accasta", player()),
        ("accasta unsubscribe 12 bob pw", "unsubscribe", "accasta", player()),
        ("accasta queue 12 bob pw a1-b1", "queue", "accasta", player(move="a1-b1")),
        (
            "accasta queue 12 bob pw a1-b1 if g1-f1",
            "queue",
            "accasta",
            player(move="a1-b1 if g1-f1"),
        ),
        (
            "accasta queue 12 bob pw if g1-f1 then a1-b1 if g2-f2 then a2-b2",
            "queue",
            "accasta",
            player(move="if g1-f1 then a1-b1 if g2-f2 then a2-b2"),
        ),
        ("accasta queue 12 bob pw", "queue", "accasta", player()),
        ("accasta queue 12 bob pw clear", "queue", "accasta", player(clear=True)),
        ("accasta queue 12 bob pw show", "queue", "accasta", player(show=True)),
        ("accasta rematch 12 bob pw", "rematch", "accasta", player()),
        ("next bob pw", "next", None, Args(userid="bob", password="pw")),
        ("notify bob pw each", "notify", None, Args(userid="bob", password="pw", notify="each")),
        (
            "notify bob pw digest 8:00,20:00 europe/berlin",
            "notify",
            None,
            Args(userid="bob", password="pw", notify="digest 08:00,20:00 Europe/Berlin"),
        ),
        ("accasta ratings", "ratings", "accasta", Args()),
    ],
)
def test_every_verb(line: str, name: str, game: str | None, args: Args) -> None:
    found = read(line)
    assert found.command.name == name
    assert found.game == game
    assert found.args == args


def test_words_are_case_insensitive_but_passwords_and_moves_keep_case() -> None:
    found = read("ACCASTA Move 12 Bob PassWord A1:C-d1")
    assert (found.command.name, found.game) == ("move", "accasta")
    assert found.args == Args(board=12, userid="Bob", password="PassWord", move="A1:C-d1")
    assert read("Accasta MOVE 3 bob pw RESIGN").args.move == "resign"
    assert read("HELP Accasta").args == Args(game="accasta")
    assert read("Accasta Challenge bob alice --VARIANT=Pari").args.variant == "pari"
    assert read("accasta queue 1 bob pw CLEAR").args.clear
    vacation = read("Vacation bob pw OFF")
    assert (vacation.command.name, vacation.args.days) == ("vacation", None)


def test_surrounding_whitespace_and_non_breaking_spaces_are_separators() -> None:
    found = read("  accasta\u00a0show\t12  ")
    assert (found.command.name, found.game, found.args) == ("show", "accasta", Args(board=12))


# --- a '#' of a move: a guard with digits, a mate sign without ---------------------------


def test_a_hash_without_digits_is_a_mate_sign_not_a_guard() -> None:
    assert read("accasta move 12 bob pw Qxf7#").args == player(move="Qxf7#")
    assert read_reply_with("Qxf7#", anything).args == Args(move="Qxf7#")


def test_a_hash_with_digits_is_a_guard() -> None:
    assert read("accasta move 12 bob pw Qxf7#4").args == player(move="Qxf7", expect=4)
    assert read("accasta move 12 bob pw Qxf7 #4").args == player(move="Qxf7", expect=4)
    assert read_reply_with("Qxf7#4", anything).args == Args(move="Qxf7", expect=4)


def test_a_mate_sign_and_a_guard() -> None:
    assert read("accasta move 12 bob pw Qxf7##4").args == player(move="Qxf7#", expect=4)
    assert read_reply_with("Qxf7##4", anything).args == Args(move="Qxf7#", expect=4)


def test_a_mate_sign_and_a_separate_guard() -> None:
    """A separate #N word is read after any move (``a1:-d1 #7``), a mating one too."""
    assert read("accasta move 12 bob pw Qxf7# #4").args == player(move="Qxf7#", expect=4)
    assert read_reply_with("Qxf7# #4", anything).args == Args(move="Qxf7#", expect=4)


# --- malformed lines: what is wrong and the right form (texts as before) --------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "signup bob pw bob@example.org extra",
            "'extra' is left over after the command.\nsignup needs: signup USERID PASSWORD [EMAIL]",
        ),
        (
            "password bob pw new extra",
            "'extra' is left over after the command.\n"
            "password needs: password USERID PASSWORD NEW-PASSWORD",
        ),
        (
            "help accasta now",
            "'now' is left over after the command.\nhelp needs: help [GAME]",
        ),
        ("games bob alice", "'alice' is left over after the command.\ngames needs: games USERID"),
        (
            "vacation bob pw 3 days",
            "'days' is left over after the command.\n"
            "vacation needs: vacation USERID PASSWORD DAYS|off|status",
        ),
        (
            "accasta move 12 bob pw a1:C-d1, H-b1",
            f"'H-b1' is left over after the command.\n{MOVE_USAGE}",
        ),
        (
            "accasta move 12 bob pw resign now",
            f"'now' is left over after the command.\n{MOVE_USAGE}",
        ),
        (
            "accasta show 12 please",
            "'please' is left over after the command.\naccasta show needs: accasta show BOARD",
        ),
        (
            "accasta resign 12 bob pw really",
            "'really' is left over after the command.\n"
            "accasta resign needs: accasta resign BOARD USERID PASSWORD",
        ),
        (
            "accasta chat 12 bob pw hello there",
            "'hello there' is left over after the command.\n"
            "accasta chat needs: accasta chat BOARD USERID PASSWORD"
            "  (the message is the rest of the mail, not this line)",
        ),
        (
            "accasta queue 12 bob pw a1-b1 if g1-f1 if",
            "The line ends with 'if': a move must follow it.\n"
            "accasta queue needs: accasta queue BOARD USERID PASSWORD "
            "[MOVE [if THEIR-MOVE]|if THEIR-MOVE then MOVE...|show|clear]",
        ),
        (
            "notify bob pw digest 25:00",
            "25:00 is no time of day: a digest time is HH:MM, the hours from 00 to 23 and "
            "the minutes from 00 to 59 (08:00, 20:30).\n"
            "notify needs: notify USERID PASSWORD each|digest HH:MM[,HH:MM] [TIMEZONE]",
        ),
        (
            "notify bob pw digest 08:00 Europe/Nowhere",
            "There is no time zone 'Europe/Nowhere': write one as the IANA names them, such "
            "as Europe/Berlin or America/New_York, or UTC.\n"
            "notify needs: notify USERID PASSWORD each|digest HH:MM[,HH:MM] [TIMEZONE]",
        ),
        (
            "accasta ratings now",
            "'now' is left over after the command.\naccasta ratings needs: accasta ratings",
        ),
        (
            "accasta games bob alice",
            "'alice' is left over after the command.\naccasta games needs: accasta games [USERID]",
        ),
    ],
)
def test_words_left_over_make_it_no_command(line: str, message: str) -> None:
    assert error_of(line) == message


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("accasta move 12 bob pw a1-b1#0", "#N must be a move number like #7, not '#0'."),
        ("accasta move 12 bob pw a1-b1#x", "#N must be a move number like #7, not '#x'."),
        ("accasta move 12 bob pw a1-b1 #x", "#N must be a move number like #7, not '#x'."),
        ("accasta move 12 bob pw #3", "MOVE is missing before #N."),
    ],
)
def test_a_bad_guard_is_no_command(line: str, problem: str) -> None:
    assert error_of(line) == f"{problem}\n{MOVE_USAGE}"


@pytest.mark.parametrize(
    "board", ["0", "-1", "x", "1.5", "12a", "\uff11\uff12", "\u00b2", "9" * 40]
)
def test_board_must_be_a_positive_number(board: str) -> None:
    line = f"accasta move {board} bob pw a1-b1"
    assert error_of(line) == (f"BOARD must be a board number like 12, not {board!r}.\n{MOVE_USAGE}")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("accasta move 12 bob", f"PASSWORD is missing.\n{MOVE_USAGE}"),
        ("accasta show", "BOARD is missing.\naccasta show needs: accasta show BOARD"),
        ("accasta", f"accasta needs a command word.\n{GAME_COMMANDS}"),
        ("accasta fly 12", f"accasta has no command 'fly'.\n{GAME_COMMANDS}"),
        ("signup bob", "PASSWORD is missing.\nsignup needs: signup USERID PASSWORD [EMAIL]"),
        (
            "help shogi",
            "There is no game 'shogi' here; games: accasta, chess, go, hex.\n"
            "help needs: help [GAME]",
        ),
        (
            "shogi move 12 bob pw e4",
            "There is no game 'shogi' here.\nGames: accasta, chess, go, hex",
        ),
        ("games", "USERID is missing.\ngames needs: games USERID"),
        (
            "vacation bob pw 0",
            "DAYS must be at least 1 (or off, or status).\n"
            "vacation needs: vacation USERID PASSWORD DAYS|off|status",
        ),
        (
            "vacation bob pw soon",
            "DAYS must be a number of days, not 'soon'.\n"
            "vacation needs: vacation USERID PASSWORD DAYS|off|status",
        ),
        ("accasta challenge bob", "USERID2 is missing."),
        ("accasta challenge bob alice pari", "'pari' is not an option like --variant=VARIANT."),
        (
            "accasta challenge bob alice --nagtime=soon",
            "--nagtime must be a number of days, not 'soon'.",
        ),
        (
            "accasta challenge bob alice --forfeittime=x",
            "--forfeittime must be a number of days, not 'x'.",
        ),
        ("accasta challenge bob alice --variant=pari --variant=pari", "--variant is given twice."),
        (
            "accasta challenge bob alice --option=x",
            "'--option=x' is not an option like --option=KEY=VALUE.",
        ),
        ("accasta queue 12 bob pw a1-b1#4", "A queued move takes no #N."),
        ("accasta queue 12 bob pw a1-b1 if", "The line ends with 'if': a move must follow it."),
        (
            "notify bob pw weekly",
            "notify takes each or digest, not 'weekly'.\n"
            "notify needs: notify USERID PASSWORD each|digest HH:MM[,HH:MM] [TIMEZONE]",
        ),
        (
            "notify bob pw digest",
            "A digest needs a time of day, such as: digest 08:00\n"
            "notify needs: notify USERID PASSWORD each|digest HH:MM[,HH:MM] [TIMEZONE]",
        ),
        ("accasta chat 12 bob pw hi", "'hi' is left over after the command."),
        ("address bob pw", "EMAIL is missing.\naddress needs: address USERID PASSWORD EMAIL"),
    ],
)
def test_the_error_says_what_is_wrong_and_the_right_form(line: str, message: str) -> None:
    text = error_of(line)
    if "\n" in message:
        assert text == message
    else:  # the problem; the form is the command's usage
        problem, _, usage = text.partition("\n")
        assert problem == message
        verb = line.split()[1]
        assert usage.startswith(f"accasta {verb} needs: accasta {verb} ")


def test_challenge_error_names_the_whole_form() -> None:
    assert error_of("accasta challenge bob") == (
        "USERID2 is missing.\n"
        "accasta challenge needs: accasta challenge USERID1 USERID2 [--variant=VARIANT] "
        '[--time="TIME CONTROL"] [--nagtime=DAYS] [--forfeittime=DAYS] [--OPTION=VALUE]'
    )


@pytest.mark.parametrize(
    "line",
    ["", "   ", "Thanks for the game!", "I will move later", "a1:C-d1", "12 bob pw", "--"],
)
def test_ordinary_text_is_neither_a_command_nor_an_error(line: str) -> None:
    assert parse(line) is None  # and raises nothing


def test_the_error_is_a_value_error_with_problem_and_usage() -> None:
    error = CommandError("BOARD is missing.", "accasta show needs: accasta show BOARD")
    assert isinstance(error, ValueError)
    assert str(error) == "BOARD is missing.\naccasta show needs: accasta show BOARD"
    assert (error.problem, error.usage) == (
        "BOARD is missing.",
        "accasta show needs: accasta show BOARD",
    )
    with pytest.raises(CommandError) as info:
        parse("accasta show")
    assert info.value.problem == "BOARD is missing."
    assert info.value.usage == "accasta show needs: accasta show BOARD"


def test_a_misspelled_command_or_game_names_the_nearest_one() -> None:
    """Issue 36 point 7: "accasta chalenge" got the command list but no suggestion."""
    with pytest.raises(CommandError) as info:
        parse("accasta chalenge alice bob")
    assert info.value.problem == (
        "accasta has no command 'chalenge'. Did you mean accasta challenge?"
    )
    assert info.value.usage.startswith("accasta commands: accept, board, cancel, challenge,")
    with pytest.raises(CommandError) as info:
        parse("acasta move 12 bob pw e4")
    assert info.value.problem == "There is no game 'acasta' here. Did you mean accasta move?"
    assert error_of("accasta fly 12").startswith("accasta has no command 'fly'.\n")
    assert error_of("help acasta").startswith(
        f"There is no game 'acasta' here; games: {', '.join(games.names())}. Did you mean "
        "accasta?\n"
    )


@pytest.mark.parametrize(
    ("line", "meant"),
    [
        ("acasta challenge alice bob", "accasta challenge"),
        ("acasta chalenge alice bob", "accasta challenge"),
        ("Accasta chalenge alice bob", "accasta challenge"),
        ("singup alice pw", "signup"),
        ("pasword alice pw new", "password"),
        ("Hello, how do I play?", None),
        ("How do I play?", None),
        ("Thanks, see you.", None),
        ("He said hi", None),
        ("accasta", None),
        ("", None),
    ],
)
def test_the_suggestion_for_a_line_that_is_no_command(line: str, meant: str | None) -> None:
    assert commands.suggestion(line) == meant


@pytest.mark.parametrize(
    ("line", "meant"),
    [("resgin", "resign"), ("Accpet", "accept"), ("histroy", "history"), ("Thanks!", None)],
)
def test_the_suggestion_for_a_reply(line: str, meant: str | None) -> None:
    assert commands.suggestion(line, reply=True) == meant
    assert commands.suggestion(f"{line} and more", reply=True) is None  # one word only


def test_a_game_this_server_does_not_run_is_no_game_command() -> None:
    with pytest.raises(CommandError) as info:
        commands.GRAMMAR.parse("accasta show 12", ())
    assert str(info.value) == "There is no game 'accasta' here.\nGames: (none)"
    found = commands.GRAMMAR.parse("Accasta show 12", ("ACCASTA",))
    assert found is not None
    assert (found.command.name, found.game, found.args) == ("show", "accasta", Args(board=12))


# --- reply mode ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "name", "args"),
    [
        ("a1:C-d1,H-b1,+b1", "move", Args(move="a1:C-d1,H-b1,+b1")),
        ("a1Cd1Hb1b1", "move", Args(move="a1Cd1Hb1b1")),
        ("A1:C-d1;", "move", Args(move="A1:C-d1")),
        ("g7:-f6#12", "move", Args(move="g7:-f6", expect=12)),
        ("g7:-f6 #12", "move", Args(move="g7:-f6", expect=12)),
        ("g7:-f6 claim", "move", Args(move="g7:-f6", claim=True)),
        ("move a1:-d1#3", "move", Args(move="a1:-d1", expect=3)),
        ("move resign", "move", Args(move="resign")),
        ("Resign", "resign", Args()),
        ("show", "show", Args()),
        ("BOARD", "show", Args()),
        ("history", "history", Args()),
        ("moves", "moves", Args()),
        ("undo", "undo", Args()),
        ("accept", "accept", Args()),
        ("reject", "reject", Args()),
        ("cancel", "cancel", Args()),
        ("draw", "draw", Args()),
        ("claim", "claim", Args()),
        ("chat", "chat", Args()),
        ("chat Good luck, and  thanks!", "chat", Args(message="Good luck, and  thanks!")),
        ("subscribe", "subscribe", Args()),
        ("unsubscribe", "unsubscribe", Args()),
        ("queue a1-b1", "queue", Args(move="a1-b1")),
        ("queue a1-b1 IF g1-f1", "queue", Args(move="a1-b1 IF g1-f1")),
        ("queue", "queue", Args()),
        ("queue clear", "queue", Args(clear=True)),
        ("queue show", "queue", Args(show=True)),
        ("rematch", "rematch", Args()),
    ],
)
def test_reply_mode(line: str, name: str, args: Args) -> None:
    found = read_reply(line)
    assert found.command.name == name
    assert found.args == args
    assert found.game is None  # the reply address's board says which


@pytest.mark.parametrize("line", ["Thanks!", "h1-b2", "", "   "])
def test_reply_mode_finds_no_command_in_what_is_none(line: str) -> None:
    assert parse_reply(line, ACCASTA.looks_like_move) is None


@pytest.mark.parametrize("line", ["a8", "a0:-b1"])
def test_reply_mode_reads_a_move_on_a_cell_that_is_none_so_the_rules_can_name_it(
    line: str,
) -> None:
    found = parse_reply(line, ACCASTA.looks_like_move)
    assert found is not None and found.args.move == line


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "e4 was a great move",
            "'was a great move' is left over after the command.\n"
            "In a reply: MOVE[#N]  (or: move MOVE[#N])",
        ),
        ("show 12", "'12' is left over after the command.\nIn a reply: show"),
        ("resign now", "'now' is left over after the command.\nIn a reply: resign"),
        ("undo now", "'now' is left over after the command.\nIn a reply: undo"),
        ("move", "MOVE is missing.\nIn a reply: MOVE[#N]  (or: move MOVE[#N])"),
        (
            "g7:-f6#x",
            "#N must be a move number like #7, not '#x'.\n"
            "In a reply: MOVE[#N]  (or: move MOVE[#N])",
        ),
        (
            "queue a1-b1#3",
            "A queued move takes no #N.\n"
            "In a reply: queue [MOVE [if THEIR-MOVE]|if THEIR-MOVE then MOVE...|show|clear]",
        ),
    ],
)
def test_reply_mode_explains_attempts(line: str, message: str) -> None:
    assert reply_error_of(line) == message


def test_reply_mode_finds_a_bare_move_only_when_the_game_says_it_looks_like_one() -> None:
    assert parse_reply("e4", nothing) is None
    assert parse_reply("Thanks for the game", nothing) is None
    move = read_reply_with("e4", lambda word: word == "e4")
    assert (move.command.name, move.args) == ("move", Args(move="e4"))
    assert parse_reply("Nf3", lambda word: word == "e4") is None
    seen: list[str] = []

    def looks(word: str) -> bool:
        seen.append(word)
        return False

    assert parse_reply("Thanks for the game", looks) is None
    assert seen == ["Thanks"]  # the first word only
    # A command word is that command, whatever the game thinks of it as a move.
    assert read_reply_with("show", anything).command.name == "show"
    assert read_reply_with("resign", nothing).command.name == "resign"
    # ... and "move" needs no looking at all.
    assert read_reply_with("move e4", nothing).args == Args(move="e4")
    # A line the game reads as a move, with words left over, is a malformed move.
    with pytest.raises(CommandError, match="'for the game' is left over"):
        parse_reply("Thanks for the game", anything)


def test_a_whole_command_is_read_in_a_reply_too() -> None:
    found = parse_reply("accasta move 12 bob pw a1-b1", ACCASTA.looks_like_move)
    assert found is not None and found.game == "accasta" and not found.in_reply


# --- what a line is built into: the use case and who asks --------------------------------

SENDER = "bob@example.org"


def build(found: Parsed, **kw: Any) -> tuple[object, Who | None]:
    return found.build(Context(sender=SENDER, **kw))


def test_classic_commands_build_their_use_cases() -> None:
    bob = Who("bob", Password("pw"))
    ctx: dict[str, Any] = {"comment": "Nice", "game": "accasta"}
    assert build(read("accasta move 12 bob pw a1:-d1#4"), **ctx) == (
        moves.Move(12, "a1:-d1", 4, "Nice", False),
        bob,
    )
    assert build(read("accasta move 12 bob pw a1:-d1 claim"), **ctx) == (
        moves.Move(12, "a1:-d1", None, "Nice", True),
        bob,
    )
    assert build(read("accasta move 12 bob pw resign"), **ctx) == (moves.Resign(12, "Nice"), bob)
    assert build(read("accasta resign 12 bob pw"), **ctx) == (moves.Resign(12, "Nice"), bob)
    assert build(read("accasta show 12"), **ctx) == (reading.Show(12, SENDER), None)
    assert build(read("accasta history 12"), **ctx) == (reading.History(12, SENDER), None)
    assert build(read("accasta moves 12"), **ctx) == (reading.LegalMoves(12, SENDER), None)
    assert build(read("accasta undo 12 bob pw"), **ctx) == (proposals.Undo(12), bob)
    assert build(read("accasta accept 12 bob pw"), **ctx) == (proposals.Accept(12), bob)
    assert build(read("accasta reject 12 bob pw"), **ctx) == (proposals.Reject(12), bob)
    assert build(read("accasta cancel 12 bob pw"), **ctx) == (proposals.Cancel(12), bob)
    assert build(read("accasta draw 12 bob pw"), **ctx) == (proposals.OfferDraw(12), bob)
    assert build(read("accasta claim 12 bob pw"), **ctx) == (moves.Claim(12), bob)
    assert build(read("accasta chat 12 bob pw"), **ctx) == (talk.Chat(12, "Nice"), bob)
    assert build(read("accasta subscribe 12 bob pw"), **ctx) == (talk.Subscribe(12), bob)
    assert build(read("accasta unsubscribe 12 bob pw"), **ctx) == (talk.Unsubscribe(12), bob)
    assert build(read("accasta queue 12 bob pw a1 if b2"), **ctx) == (
        queue.Queue(12, ("a1 if b2",)),
        bob,
    )
    assert build(read("accasta queue 12 bob pw clear"), **ctx) == (
        queue.Queue(12, what=queue.CLEAR),
        bob,
    )
    assert build(read("accasta queue 12 bob pw show"), **ctx) == (
        queue.Queue(12, what=queue.SHOW),
        bob,
    )
    lines = {**ctx, "comment": "Hello\nif g1 then a1\nIF g2 then a2 if g3 then a3\nBye"}
    assert build(read("accasta queue 12 bob pw"), **lines) == (
        queue.Queue(12, ("if g1 then a1", "IF g2 then a2 if g3 then a3")),
        bob,
    )
    assert build(read("accasta rematch 12 bob pw"), **ctx) == (rematch.Rematch(12, "Nice"), bob)
    assert build(read("next bob pw"), **ctx) == (nextgame.Next(), bob)
    assert build(read("notify bob pw digest 08:00"), **ctx) == (
        digests.SetNotify("digest 08:00 UTC"),
        bob,
    )
    assert build(read("games bob"), comment="") == (nextgame.PlayerGames(SENDER, "bob"), None)
    assert build(read("accasta ratings"), **ctx) == (reading.Ratings(SENDER, "accasta"), None)
    assert build(read("accasta games bob"), **ctx) == (
        reading.ActiveBoards(SENDER, "bob", "accasta"),
        None,
    )
    assert build(
        read("accasta challenge bob alice --variant=pari --nagtime=3 --castle_win=next_turn"),
        **ctx,
    ) == (
        challenges.Challenge(
            "accasta",
            "bob",
            "alice",
            sender=SENDER,
            variant="pari",
            options={"castle_win": "next_turn"},
            nag_days=3,
            comment="Nice",
        ),
        None,
    )
    assert build(read("signup bob pw")) == (accounts.Signup("bob", "pw", SENDER), None)
    assert build(read("signup bob pw <b@example.net>")) == (
        accounts.Signup("bob", "pw", "b@example.net"),
        None,
    )
    assert build(read("password bob pw new")) == (accounts.ChangePassword("new"), bob)
    assert build(read("address bob pw b@example.net")) == (
        accounts.ChangeAddress("b@example.net"),
        bob,
    )
    assert build(read("vacation bob pw 3")) == (vacations.Vacation(3), bob)
    assert build(read("vacation bob pw off")) == (vacations.Vacation(None), bob)
    assert build(read("games bob")) == (nextgame.PlayerGames(SENDER, "bob"), None)


def test_help_builds_the_help_or_the_rules() -> None:
    action, who = build(read("help"))
    assert who is None
    assert action == reading.Answer(SENDER, "pbm - help", help_text())
    for line, game in (("help accasta", None), ("accasta help", "accasta")):
        action, _ = build(read(line), game=game)
        assert action == reading.Answer(SENDER, "Accasta - help", ACCASTA.help_text())


def test_reply_commands_bind_to_the_board_and_player_of_the_address() -> None:
    bob = Who("bob", ByReply(12))
    ctx: dict[str, Any] = {"reply_board": 12, "reply_userid": "bob", "comment": "gg"}
    assert build(read_reply("a1:-d1#4"), **ctx) == (moves.Move(12, "a1:-d1", 4, "gg", False), bob)
    assert build(read_reply("resign"), **ctx) == (moves.Resign(12, "gg"), bob)
    assert build(read_reply("move resign"), **ctx) == (moves.Resign(12, "gg"), bob)
    assert build(read_reply("board"), **ctx) == (reading.Show(12, SENDER), None)
    assert build(read_reply("history"), **ctx) == (reading.History(12, SENDER), None)
    assert build(read_reply("moves"), **ctx) == (reading.LegalMoves(12, SENDER), None)
    assert build(read_reply("chat"), **ctx) == (talk.Chat(12, "gg"), bob)
    assert build(read_reply("chat Good luck!"), **ctx) == (talk.Chat(12, "Good luck!\ngg"), bob)
    assert build(read_reply("unsubscribe"), **ctx) == (talk.Unsubscribe(12), bob)
    assert build(read_reply("queue a1 if b2"), **ctx) == (queue.Queue(12, ("a1 if b2",)), bob)
    assert build(read_reply("queue clear"), **ctx) == (queue.Queue(12, what=queue.CLEAR), bob)
    assert build(read_reply("rematch"), **ctx) == (rematch.Rematch(12, "gg"), bob)


# --- the help text: made from the declarations -------------------------------------------


def flat(text: str) -> str:
    return " ".join(text.split())


def test_help_names_every_command_and_its_form() -> None:
    text = help_text()
    words = {word for command in ALL for word in command.words}
    assert words >= {
        "signup",
        "password",
        "address",
        "vacation",
        "help",
        "games",
        "challenge",
        "move",
        "resign",
        "show",
        "board",
        "history",
        "moves",
        "undo",
        "accept",
        "reject",
        "cancel",
        "draw",
        "claim",
        "chat",
        "subscribe",
        "unsubscribe",
        "queue",
        "ratings",
        "notify",
        "next",
        "rematch",
    }
    for word in words:
        assert re.search(rf"\b{word}\b", text), word
    for command in ALL:
        assert flat(command.usage()) in flat(text), command.usage()
    assert "G challenge USERID1 USERID2" in text
    assert "G move BOARD USERID PASSWORD MOVE[#N]" in text
    assert "(also: board)" in text


def test_help_names_every_option_each_game_declares() -> None:
    text = flat(help_text())
    assert games.names()
    assert f"Games here: {', '.join(games.names())}." in text
    for name in games.names():
        game = games.get(name)
        assert f"{name}: --variant={'|'.join(game.variants)}" in text
        for option in game.options:
            assert f"--{option.name}={'|'.join(option.values)} (default {option.default})" in text
            assert flat(option.help) in text
            if option.variants:
                assert f"({' or '.join(option.variants)} only)" in text
    assert "--nagtime=DAYS" in text and "--forfeittime=DAYS" in text


def test_help_tells_how_to_reply() -> None:
    text = flat(help_text())
    for command in ALL:
        if command.by_reply and command.name != "move":
            assert flat(command.reply_form()) in text, command.reply_form()


def test_help_lines_fit_a_mail() -> None:
    assert all(len(line) <= 78 for line in help_text().splitlines())
    assert help_text().endswith("\n")


# --- properties -----------------------------------------------------------------------

words = st.text(
    alphabet=st.characters(
        blacklist_categories=("Zs", "Cc", "Zl", "Zp"), blacklist_characters=";#"
    ),
    min_size=1,
    max_size=12,
)


@given(st.text(max_size=200))
def test_any_text_is_parsed_or_refused_without_crashing(line: str) -> None:
    for read_line in (parse, lambda text: parse_reply(text, ACCASTA.looks_like_move)):
        try:
            found = read_line(line)
        except CommandError as exc:
            assert str(exc).strip()
        else:
            assert found is None or isinstance(found, Parsed)


@given(
    board=st.integers(min_value=1, max_value=10**9 - 1),
    userid=words,
    password=words,
    # Punctuation around a move is a sentence's, not the move's (test below).
    move=words.filter(lambda w: w.lower() != "resign" and bare(w) == w),
    guard=st.none() | st.integers(min_value=1, max_value=10**6),
)
def test_a_written_move_reads_back(
    board: int, userid: str, password: str, move: str, guard: int | None
) -> None:
    line = f"accasta move {board} {userid} {password} {move}" + (f"#{guard}" if guard else "")
    found = read(line)
    assert (found.command.name, found.game) == ("move", "accasta")
    assert found.args == Args(
        board=board, userid=userid, password=password, move=move, expect=guard
    )


@pytest.mark.parametrize(
    ("written", "move"), [("a1:C+b2.", "a1:C+b2"), ("e4!", "e4"), ("(Nf3)", "Nf3"), ("e4?!", "e4")]
)
def test_a_sentences_punctuation_is_no_part_of_a_move(written: str, move: str) -> None:
    assert read(f"accasta move 1 bob pw {written}").args.move == move


def test_the_meaning_of_words_is_left_to_the_use_cases() -> None:
    # Whether a userid or an address is acceptable is the use case's rule (it
    # answers why); the parser only reads the words.
    assert read("signup bob.smith pw nowhere").args == Args(
        userid="bob.smith", password="pw", email="nowhere"
    )
    assert read("accasta move 3 bob pw zz99").args == Args(
        board=3, userid="bob", password="pw", move="zz99"
    )


def test_the_help_mail_lists_every_command_the_parser_accepts() -> None:
    """Every verb (and synonym) the grammar reads, classic and in a reply, is in ``help``;
    so is every option a game's challenge takes."""
    text = " ".join(help_text().split())
    grammar = commands.GRAMMAR
    for verb in grammar.site:
        assert re.search(rf"(^| ){re.escape(verb)} ", text), verb
    for verb in grammar.game:
        assert f"G {verb} " in text or re.search(rf"also: [^)]*\b{verb}\b", text), verb
    for verb in grammar.reply:
        assert re.search(rf"[ ,/]{re.escape(verb)}[ ,/.]", text), verb
    for name in games.names():
        for option in games.get(name).options:
            assert f"--{option.name}=" in text, option.name


@pytest.mark.parametrize(
    ("written", "spec"),
    [
        ('--time="days 3"', "days 3"),
        ("--time='fischer 10d+36h max 10d'", "fischer 10d+36h max 10d"),
        ('--time="days 3 weekends off Europe/Berlin"', "days 3 weekends off Europe/Berlin"),
        ("--time=days", "days"),  # one word needs no quotes (and is refused when played)
    ],
)
def test_a_challenge_s_time_control_is_read_as_written(written: str, spec: str) -> None:
    parsed = read(f"accasta challenge alice bob {written} --variant=pari")
    assert parsed.args.time == spec and parsed.args.variant == "pari"


def test_an_unclosed_quote_of_a_time_control_is_an_error() -> None:
    assert error_of('accasta challenge alice bob --time="days 3').startswith(
        'The quote " after --time= is not closed.'
    )
