"""Read what people write: punctuation after a move, words around it, "OK, accept", a wrong
cell named as such, and a move sent without a board. Through the real inbox runner, on
SQLite and PostgreSQL; Accasta and chess alike."""

from __future__ import annotations

from email.message import EmailMessage
from email.policy import SMTP

import pytest
from conftest import Clock, accepted
from test_inbox_runner import first_moves, mails_to, make_runner, moves_on, run

import pbm.games
from pbm.config import Config
from pbm.mail.addresses import token_address
from pbm.store import inbox as store
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

ALICE, BOB = "alice@example.org", "bob@example.org"
_n = iter(range(10_000))


def send(db: Database, clock: Clock, sender: str, to: str, text: str, **headers: str) -> str:
    """A mail as a client writes it; its Message-ID."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = headers.pop("subject", "Re: your board")
    mid = f"<n{next(_n)}@client.test>"
    msg["Message-ID"] = mid
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(text + "\n")
    with db.transaction() as s:
        store.add(s, [store.Received(msg.as_bytes(policy=SMTP), sender, [to])], clock())
    return mid


def reply_address(config: Config, board: int, userid: str) -> str:
    return token_address(config.mail.address, config.mail.secret, board, userid)


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


@pytest.fixture
def chess_board(site: Site) -> int:
    return accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))


def last_error(db: Database, to: str) -> str:
    errors = [m for m in mails_to(db, to) if m.is_error]
    assert errors, "no error answer"
    return " ".join(errors[-1].body.split())


@pytest.mark.parametrize(
    "written",
    ["{move}.", "{move}!", "My move: {move}", "{move} - your turn, Bob", "Here we go: ({move})"],
)
def test_a_move_with_punctuation_or_words_around_it_is_played(
    db: Database, config: Config, clock: Clock, board: int, written: str
) -> None:
    [move] = first_moves(1)
    send(db, clock, ALICE, reply_address(config, board, "alice"), written.format(move=move))
    run(make_runner(db, config, clock))
    assert moves_on(db, board) == 1
    played = queries.board(make_site(db, config, clock), board).moves[0]
    assert played.notation == move
    assert played.comment == ""  # the rest of the line is no comment (issue 36 point 8)


@pytest.mark.parametrize("written", ["Hi, I play {move} thanks", "My move: {move}."])
def test_text_around_a_move_is_not_passed_on_as_a_comment(
    db: Database, config: Config, clock: Clock, board: int, written: str
) -> None:
    """Issue 36 point 8: "Hi, I play b3:H+c4 thanks" stored "Hi, I play thanks", "My move:
    f2:CHxd2,S+e3." stored "My move:", and both showed in the opponent's mail, on the board
    page and in the record. A comment is what the player writes on the lines after the move."""
    [move] = first_moves(1)
    line = written.format(move=move)
    send(db, clock, ALICE, reply_address(config, board, "alice"), f"Hello Bob,\n{line}")
    run(make_runner(db, config, clock))
    site = make_site(db, config, clock)
    assert [(m.notation, m.comment) for m in queries.board(site, board).moves] == [(move, "")]
    to_bob = mails_to(db, BOB)[-1].body
    assert move in to_bob and "writes:" not in to_bob
    assert "Hello" not in to_bob and "Hi," not in to_bob and "My move:" not in to_bob
    [answer] = first_moves(2)[1:]
    reply = f"{answer} Nice try!\nGood luck with that one.\nBob"
    send(db, clock, BOB, reply_address(config, board, "bob"), reply)
    run(make_runner(db, config, clock))
    played = queries.board(site, board).moves[-1]
    assert played.comment == "Good luck with that one.\nBob"
    to_alice = " ".join(mails_to(db, ALICE)[-1].body.split())
    assert "bob writes: > Good luck with that one. > Bob" in to_alice
    assert "Nice try" not in to_alice


def make_site(db: Database, config: Config, clock: Clock) -> Site:
    return Site(db, config, clock)


@pytest.mark.parametrize("written", ["e4!", "Nf3 - your turn, Bob", "1. e4"])
def test_chess_reads_the_same(
    db: Database, config: Config, clock: Clock, chess_board: int, written: str
) -> None:
    send(db, clock, ALICE, reply_address(config, chess_board, "alice"), written)
    run(make_runner(db, config, clock))
    assert moves_on(db, chess_board) == 1


@pytest.mark.parametrize("written", ["OK, accept", "Yes, I accept.", "accept!"])
def test_ok_accept_accepts_a_challenge(
    db: Database, config: Config, clock: Clock, site: Site, written: str
) -> None:
    [reply] = unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE))[:1]
    board = reply.board
    assert board is not None
    send(db, clock, BOB, reply_address(config, board, "bob"), written)
    run(make_runner(db, config, clock))
    assert queries.board(site, board).status == "active"


def test_a_verb_among_other_words_is_not_guessed(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    send(db, clock, ALICE, reply_address(config, board, "alice"), "I will not resign yet")
    run(make_runner(db, config, clock))
    assert queries.board(site, board).status == "active"


def test_a_wrong_cell_is_named(db: Database, config: Config, clock: Clock, board: int) -> None:
    send(db, clock, ALICE, reply_address(config, board, "alice"), "b9:S-b8")
    run(make_runner(db, config, clock))
    assert "b9 is not a cell of the board" in last_error(db, ALICE)


def test_a_wrong_square_is_named(
    db: Database, config: Config, clock: Clock, chess_board: int
) -> None:
    send(db, clock, ALICE, reply_address(config, chess_board, "alice"), "e9")
    run(make_runner(db, config, clock))
    assert "e9 is not a square of the board" in last_error(db, ALICE)


# --- a move that names no board ----------------------------------------------------------


def test_a_bare_move_answering_a_server_mail_is_played_on_the_one_board_to_move(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    """Reply to the From address instead of the Reply-To, or a move in reply to the help."""
    ours = mails_to(db, ALICE)[-1].message_id  # a mail the server sent alice
    [move] = first_moves(1)
    send(db, clock, ALICE, config.mail.address, f"{move}\nthanks", In_Reply_To=ours)
    run(make_runner(db, config, clock))
    assert moves_on(db, board) == 1


def test_a_bare_move_that_answers_nothing_gets_the_boards_and_their_addresses(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    """From could be anyone's: without a mail of ours answered, nothing is played."""
    [move] = first_moves(1)
    send(db, clock, ALICE, config.mail.address, move, subject="my move")
    run(make_runner(db, config, clock))
    assert moves_on(db, board) == 0
    answer = mails_to(db, ALICE)[-1]
    assert answer.subject == "pbm - which board?" and not answer.is_error
    assert reply_address(config, board, "alice") in answer.body
    assert "(your turn)" in answer.body


def test_a_bare_move_with_two_boards_to_move_lists_them(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    other = accepted(site, Challenge("accasta", "alice", "carol", sender=ALICE))
    ours = mails_to(db, ALICE)[-1].message_id
    [move] = first_moves(1)
    send(db, clock, ALICE, config.mail.address, move, In_Reply_To=ours)
    run(make_runner(db, config, clock))
    assert moves_on(db, board) == moves_on(db, other) == 0
    body = mails_to(db, ALICE)[-1].body
    assert reply_address(config, board, "alice") in body
    assert reply_address(config, other, "alice") in body


def test_a_bare_move_from_a_stranger_gets_the_help(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    [move] = first_moves(1)
    send(db, clock, "zed@example.net", config.mail.address, move)
    run(make_runner(db, config, clock))
    assert mails_to(db, "zed@example.net")[-1].subject == "pbm - help"
    assert moves_on(db, board) == 0


# --- a misspelled game or command (issue 36 point 7) -------------------------------------


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("acasta challenge alice bob", "'acasta challenge' is no command here. Did you mean"),
        ("accasta chalenge alice bob", "accasta has no command 'chalenge'. Did you mean"),
        ("acasta chalenge alice bob", "'acasta chalenge' is no command here. Did you mean"),
    ],
)
def test_a_misspelled_game_or_command_gets_the_nearest_one(
    db: Database, config: Config, clock: Clock, site: Site, written: str, meant: str
) -> None:
    """It got "Your mail held no command... New here? Sign up..." and the whole help, or the
    command list with no suggestion."""
    send(db, clock, ALICE, config.mail.address, written, subject="new game")
    run(make_runner(db, config, clock))
    answer = mails_to(db, ALICE)[-1]
    text = " ".join(answer.body.split())
    assert f"{meant} accasta challenge?" in text
    assert "Sign up" not in text and "signup" not in text
    assert answer.is_error


@pytest.mark.parametrize(
    ("sender", "invited"), [(ALICE, False), ("alice@Example.org", False), ("zed@x.test", True)]
)
def test_only_an_address_with_no_account_is_invited_to_sign_up(
    db: Database, config: Config, clock: Clock, site: Site, sender: str, invited: bool
) -> None:
    send(db, clock, sender, config.mail.address, "Hello, how do I play?", subject="hi")
    run(make_runner(db, config, clock))
    answer = mails_to(db, sender)[-1]
    assert answer.subject == "pbm - help"
    text = " ".join(answer.body.split())
    assert text.startswith("Your mail held no command, so here is what")
    assert ("New here? Sign up with: signup USERID PASSWORD" in text) is invited


def test_a_misspelled_verb_in_a_reply_gets_the_nearest_one(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    send(db, clock, ALICE, reply_address(config, board, "alice"), "resgin")
    run(make_runner(db, config, clock))
    assert "(it began: 'resgin'; did you mean resign?)" in " ".join(
        mails_to(db, ALICE)[-1].body.split()
    )


def test_the_accasta_shape_still_reads_moves_only(db: Database) -> None:
    accasta = pbm.games.get("accasta")
    assert accasta.looks_like_move("b9:S-b8") and accasta.looks_like_move("a1Cd1")
    assert not accasta.looks_like_move("Bob") and not accasta.looks_like_move("thanks")
