"""The mail command language (COMMANDS.md): text -> Command values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.commands import (
    USAGE,
    Accept,
    Address,
    Cancel,
    Challenge,
    Chat,
    Command,
    CommandError,
    Games,
    Help,
    History,
    Move,
    Moves,
    Password,
    Queue,
    Ratings,
    Reject,
    ReplyCommand,
    Resign,
    Show,
    Signup,
    Subscribe,
    Undo,
    Unsubscribe,
    Vacation,
    explain,
    explain_reply,
    parse_command,
    parse_reply_command,
)

GAMES = ("accasta",)


def parse(line: str) -> Command | None:
    return parse_command(line, GAMES)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("signup bob Secret", Signup("bob", "Secret", None)),
        ("signup bob Secret bob@example.org", Signup("bob", "Secret", "bob@example.org")),
        ("signup bob Secret <bob@example.org>", Signup("bob", "Secret", "bob@example.org")),
        ("password bob old New", Password("bob", "old", "New")),
        ("address bob pw Bob@Example.org", Address("bob", "pw", "Bob@Example.org")),
        ("help", Help(None)),
        ("help accasta", Help("accasta")),
        ("accasta help", Help("accasta")),
        ("games bob", Games("bob", None)),
        ("accasta games", Games(None, "accasta")),
        ("accasta games bob", Games("bob", "accasta")),
        ("vacation bob pw 10", Vacation("bob", "pw", 10)),
        ("vacation bob pw off", Vacation("bob", "pw", None)),
        ("accasta challenge bob alice", Challenge("accasta", "bob", "alice")),
        (
            "accasta challenge bob alice --variant=pari --nagtime=3 --forfeittime=14",
            Challenge("accasta", "bob", "alice", "pari", {}, 3, 14),
        ),
        (
            "accasta challenge bob alice --castle_win=next_turn --option=d4_opening=banned",
            Challenge(
                "accasta",
                "bob",
                "alice",
                None,
                {"castle_win": "next_turn", "d4_opening": "banned"},
            ),
        ),
        (
            "accasta move 12 bob pw a1:C-d1,H-b1,+b1",
            Move("accasta", 12, "bob", "pw", "a1:C-d1,H-b1,+b1"),
        ),
        ("accasta move 12 bob pw a1Cd1Hb1b1", Move("accasta", 12, "bob", "pw", "a1Cd1Hb1b1")),
        ("accasta move 12 bob pw d1:CHc-e1;", Move("accasta", 12, "bob", "pw", "d1:CHc-e1")),
        ("accasta move 12 bob pw a1:-d1#7", Move("accasta", 12, "bob", "pw", "a1:-d1", 7)),
        ("accasta move 12 bob pw a1:-d1 #7", Move("accasta", 12, "bob", "pw", "a1:-d1", 7)),
        ("accasta move 12 bob pw resign", Resign("accasta", 12, "bob", "pw")),
        ("accasta resign 12 bob pw", Resign("accasta", 12, "bob", "pw")),
        ("accasta show 12", Show("accasta", 12)),
        ("accasta board 12", Show("accasta", 12)),
        ("accasta history 12", History("accasta", 12)),
        ("accasta moves 12", Moves("accasta", 12)),
        ("accasta undo 12 bob pw", Undo("accasta", 12, "bob", "pw")),
        ("accasta accept 12 bob pw", Accept("accasta", 12, "bob", "pw")),
        ("accasta reject 12 bob pw", Reject("accasta", 12, "bob", "pw")),
        ("accasta cancel 12 bob pw", Cancel("accasta", 12, "bob", "pw")),
        ("accasta chat 12 bob pw", Chat("accasta", 12, "bob", "pw")),
        ("accasta subscribe 12 bob pw", Subscribe("accasta", 12, "bob", "pw")),
        ("accasta unsubscribe 12 bob pw", Unsubscribe("accasta", 12, "bob", "pw")),
        ("accasta queue 12 bob pw a1-b1", Queue("accasta", 12, "bob", "pw", "a1-b1", None)),
        (
            "accasta queue 12 bob pw a1-b1 if g1-f1",
            Queue("accasta", 12, "bob", "pw", "a1-b1", "g1-f1"),
        ),
        ("accasta queue 12 bob pw clear", Queue("accasta", 12, "bob", "pw", None, None)),
        ("accasta ratings", Ratings("accasta")),
    ],
)
def test_every_verb(line: str, expected: Command) -> None:
    assert parse(line) == expected


def test_words_are_case_insensitive_but_passwords_and_moves_keep_case() -> None:
    assert parse("ACCASTA Move 12 Bob PassWord A1:C-d1") == Move(
        "accasta", 12, "Bob", "PassWord", "A1:C-d1"
    )
    assert parse("Accasta MOVE 3 bob pw RESIGN") == Resign("accasta", 3, "bob", "pw")
    assert parse("HELP Accasta") == Help("accasta")
    assert parse("Accasta Challenge bob alice --VARIANT=Pari") == Challenge(
        "accasta", "bob", "alice", "pari"
    )
    assert parse("accasta queue 1 bob pw CLEAR") == Queue("accasta", 1, "bob", "pw", None)
    assert parse("Vacation bob pw OFF") == Vacation("bob", "pw", None)


def test_surrounding_whitespace_and_non_breaking_spaces_are_separators() -> None:
    assert parse("  accasta\u00a0show\t12  ") == Show("accasta", 12)


@pytest.mark.parametrize(
    "line",
    [
        "signup bob pw bob@example.org extra",
        "password bob pw new extra",
        "help accasta now",
        "games bob alice",
        "vacation bob pw 3 days",
        "accasta move 12 bob pw a1:C-d1, H-b1",
        "accasta move 12 bob pw resign now",
        "accasta show 12 please",
        "accasta resign 12 bob pw really",
        "accasta chat 12 bob pw hello there",
        "accasta queue 12 bob pw a1-b1 if g1-f1 or",
        "accasta queue 12 bob pw clear all",
        "accasta ratings now",
        "accasta games bob alice",
    ],
)
def test_words_left_over_make_it_no_command(line: str) -> None:
    assert parse(line) is None
    message = explain(line, GAMES)
    assert message is not None
    assert "left over" in message


@pytest.mark.parametrize(
    "line",
    [
        "accasta move 12 bob pw a1-b1#0",
        "accasta move 12 bob pw a1-b1#x",
        "accasta move 12 bob pw #3",
    ],
)
def test_a_bad_guard_is_no_command(line: str) -> None:
    assert parse(line) is None
    assert explain(line, GAMES) is not None


@pytest.mark.parametrize(
    "board", ["0", "-1", "x", "1.5", "12a", "\uff11\uff12", "\u00b2", "9" * 40]
)
def test_board_must_be_a_positive_number(board: str) -> None:
    line = f"accasta move {board} bob pw a1-b1"
    assert parse(line) is None
    message = explain(line, GAMES)
    assert message is not None
    assert "BOARD must be a board number" in message
    assert "accasta move needs: accasta move BOARD USERID PASSWORD MOVE" in message


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("accasta move 12 bob", ["PASSWORD is missing", "accasta move needs:"]),
        ("accasta show", ["BOARD is missing", "accasta show BOARD"]),
        ("accasta", ["needs a command word", "move"]),
        ("accasta fly 12", ["no command 'fly'", "challenge"]),
        ("signup bob", ["PASSWORD is missing", "signup needs: signup USERID PASSWORD"]),
        ("help chess", ["no game 'chess'", "accasta"]),
        ("chess move 12 bob pw e4", ["no game 'chess'", "accasta"]),
        ("games", ["USERID is missing"]),
        ("vacation bob pw 0", ["at least 1"]),
        ("vacation bob pw soon", ["DAYS must be a number"]),
        ("accasta challenge bob", ["USERID2 is missing"]),
        ("accasta challenge bob alice pari", ["not an option like --variant=pari"]),
        ("accasta challenge bob alice --nagtime=soon", ["--nagtime must be a number"]),
        ("accasta challenge bob alice --variant=pari --variant=pari", ["given twice"]),
        ("accasta challenge bob alice --option=x", ["--option=KEY=VALUE"]),
        ("accasta queue 12 bob pw a1-b1#4", ["takes no #N"]),
        ("accasta queue 12 bob pw a1-b1 if", ["OPPONENT-MOVE is missing"]),
        ("accasta chat 12 bob pw hi", ["rest of the mail"]),
    ],
)
def test_explain_says_what_is_wrong_and_the_right_form(line: str, words: list[str]) -> None:
    assert parse(line) is None
    message = explain(line, GAMES)
    assert message is not None
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    "line",
    ["", "   ", "Thanks for the game!", "I will move later", "a1:C-d1", "12 bob pw", "--"],
)
def test_ordinary_text_is_neither_a_command_nor_explained(line: str) -> None:
    assert parse(line) is None
    assert explain(line, GAMES) is None


def test_explain_is_none_for_a_good_command() -> None:
    assert explain("accasta show 12", GAMES) is None


def test_the_error_is_a_value_error_with_problem_and_usage() -> None:
    error = CommandError("BOARD is missing.", "accasta show needs: accasta show BOARD")
    assert isinstance(error, ValueError)
    assert str(error) == "BOARD is missing.\naccasta show needs: accasta show BOARD"


def test_an_unknown_game_is_not_a_game_command() -> None:
    assert parse_command("accasta show 12", ()) is None
    assert parse_command("Accasta show 12", ("ACCASTA",)) == Show("accasta", 12)


def test_usage_names_every_verb() -> None:
    verbs = (
        "signup password address vacation help games challenge move resign show board "
        "history moves undo accept reject cancel chat subscribe unsubscribe queue ratings"
    )
    for verb in verbs.split():
        assert f"{verb} " in USAGE


# --- reply mode -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a1:C-d1,H-b1,+b1", ReplyCommand("move", "a1:C-d1,H-b1,+b1")),
        ("a1Cd1Hb1b1", ReplyCommand("move", "a1Cd1Hb1b1")),
        ("A1:C-d1;", ReplyCommand("move", "A1:C-d1")),
        ("g7:-f6#12", ReplyCommand("move", "g7:-f6", 12)),
        ("move a1:-d1#3", ReplyCommand("move", "a1:-d1", 3)),
        ("move resign", ReplyCommand("resign")),
        ("Resign", ReplyCommand("resign")),
        ("show", ReplyCommand("show")),
        ("BOARD", ReplyCommand("show")),
        ("history", ReplyCommand("history")),
        ("moves", ReplyCommand("moves")),
        ("undo", ReplyCommand("undo")),
        ("accept", ReplyCommand("accept")),
        ("reject", ReplyCommand("reject")),
        ("chat", ReplyCommand("chat")),
        ("chat Good luck, and  thanks!", ReplyCommand("chat", text="Good luck, and  thanks!")),
        ("subscribe", ReplyCommand("subscribe")),
        ("unsubscribe", ReplyCommand("unsubscribe")),
        ("queue a1-b1", ReplyCommand("queue", "a1-b1")),
        ("queue a1-b1 IF g1-f1", ReplyCommand("queue", "a1-b1", None, "g1-f1")),
        ("queue clear", ReplyCommand("queue", None)),
    ],
)
def test_reply_mode(line: str, expected: ReplyCommand) -> None:
    assert parse_reply_command(line) == expected


@pytest.mark.parametrize(
    "line",
    ["Thanks!", "h1-b2", "a8", "a0:-b1", "e4 was a great move", "show 12", "resign now", ""],
)
def test_reply_mode_refuses_what_is_no_reply_command(line: str) -> None:
    assert parse_reply_command(line) is None


def test_reply_mode_explains_attempts_only() -> None:
    assert explain_reply("Thanks for the game") is None
    message = explain_reply("e4 was a great move")
    assert message is not None
    assert "'was a great move' is left over" in message
    assert "MOVE[#N]" in message
    assert "queue clear" in (explain_reply("queue") or "")


def test_reply_command_binds_to_the_classic_command() -> None:
    def bind(line: str) -> Command:
        command = parse_reply_command(line)
        assert command is not None
        return command.bind("accasta", 12, "bob")

    assert bind("a1:-d1#4") == Move("accasta", 12, "bob", "", "a1:-d1", 4)
    assert bind("resign") == Resign("accasta", 12, "bob", "")
    assert bind("board") == Show("accasta", 12)
    assert bind("history") == History("accasta", 12)
    assert bind("moves") == Moves("accasta", 12)
    assert bind("chat") == Chat("accasta", 12, "bob", "")
    assert bind("unsubscribe") == Unsubscribe("accasta", 12, "bob", "")
    assert bind("queue a1 if b2") == Queue("accasta", 12, "bob", "", "a1", "b2")
    assert bind("queue clear") == Queue("accasta", 12, "bob", "", None, None)


# --- properties -------------------------------------------------------------------

words = st.text(
    alphabet=st.characters(
        blacklist_categories=("Zs", "Cc", "Zl", "Zp"), blacklist_characters=";#"
    ),
    min_size=1,
    max_size=12,
)


@given(st.text(max_size=200))
def test_any_text_is_parsed_or_refused_without_crashing(line: str) -> None:
    command = parse(line)
    message = explain(line, GAMES)
    assert command is None or message is None
    reply = parse_reply_command(line)
    assert reply is None or explain_reply(line) is None


@given(
    board=st.integers(min_value=1, max_value=10**9 - 1),
    userid=words,
    password=words,
    move=words.filter(lambda w: w.lower() != "resign"),
    guard=st.none() | st.integers(min_value=1, max_value=10**6),
)
def test_a_written_move_reads_back(
    board: int, userid: str, password: str, move: str, guard: int | None
) -> None:
    line = f"accasta move {board} {userid} {password} {move}" + (f"#{guard}" if guard else "")
    assert parse(line) == Move("accasta", board, userid, password, move, guard)


def test_the_meaning_of_words_is_left_to_the_service() -> None:
    # Whether a userid or an address is acceptable is the service's rule (it
    # answers why); the parser only reads the words.
    assert parse("signup bob.smith pw nowhere") == Signup("bob.smith", "pw", "nowhere")
    assert parse("accasta move 3 bob pw zz99") == Move("accasta", 3, "bob", "pw", "zz99")
