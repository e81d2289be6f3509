"""Issue 36 point 10: an error reply says what to do next, not only "Nothing was changed".

Each case as the issue writes it, through the real inbox runner, on SQLite and
PostgreSQL: a wrong password names ``password reset`` and says that replies
need none; "it is alice's turn" names ``queue``; "there is no board 99" lists
the player's boards; the "which board?" mail writes the game's own command.
"""

from __future__ import annotations

import pytest
from conftest import Clock, accepted
from test_forgiving_reading import reply_address, send
from test_inbox_runner import first_moves, mails_to, make_runner, moves_on, run

from pbm.config import Config
from pbm.store.engine import Database
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

ALICE, BOB = "alice@example.org", "bob@example.org"


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


def answer_to(db: Database, config: Config, clock: Clock, sender: str, to: str, text: str) -> str:
    """The text of the last answer to ``sender`` after his mail of ``text`` to ``to``."""
    send(db, clock, sender, to, text, subject="my command")
    run(make_runner(db, config, clock))
    return " ".join(mails_to(db, sender)[-1].body.split())


def test_a_wrong_password_names_password_reset_and_replies(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    [move] = first_moves(1)
    command = f"accasta move {board} alice pw-wrong {move}"
    text = answer_to(db, config, clock, ALICE, config.mail.address, command)
    assert "Wrong password for alice. Forgot it? Send: password reset alice" in text
    assert "Replies to your board mails need no password" in text
    assert "pw-wrong" not in text


def test_not_your_turn_names_queue(db: Database, config: Config, clock: Clock, board: int) -> None:
    [_, answer] = first_moves(2)
    by_command = f"accasta move {board} bob pw {answer}"
    text = answer_to(db, config, clock, BOB, config.mail.address, by_command)
    assert f"It is alice's turn on board {board}, not yours." in text
    assert "reply to your board mail with queue MOVE [if THEIR-MOVE]" in text
    assert f"or send: accasta queue {board} bob PASSWORD MOVE" in text
    by_reply = answer_to(db, config, clock, BOB, reply_address(config, board, "bob"), answer)
    assert "queue MOVE [if THEIR-MOVE]" in by_reply
    assert moves_on(db, board) == 0


def test_no_board_99_lists_the_players_boards(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    other = accepted(site, Challenge("chess", "carol", "alice", sender="carol@example.org"))
    mine = f"Your open boards: {board} (Accasta, alice vs bob), {other} (Chess, carol vs alice)."
    shown = answer_to(db, config, clock, ALICE, config.mail.address, "accasta show 99")
    assert f"There is no board 99. {mine}" in shown
    [move] = first_moves(1)
    moved = answer_to(
        db, config, clock, ALICE, config.mail.address, f"accasta move 99 alice pw {move}"
    )
    assert f"There is no board 99. {mine}" in moved


def test_no_board_99_for_an_address_without_boards_or_account(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    none = answer_to(db, config, clock, ALICE, config.mail.address, "accasta show 99")
    assert "There is no board 99. You have no open boards." in none
    stranger = answer_to(db, config, clock, "zed@x.test", config.mail.address, "accasta show 99")
    assert "There is no board 99. Nothing was changed." in stranger


def test_which_board_writes_the_games_command(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    """It wrote ``G move BOARD USERID PASSWORD MOVE`` where it meant ``accasta move ...``."""
    other = accepted(site, Challenge("accasta", "alice", "carol", sender=ALICE))
    ours = mails_to(db, ALICE)[-1].message_id
    [move] = first_moves(1)
    send(db, clock, ALICE, config.mail.address, move, In_Reply_To=ours)
    run(make_runner(db, config, clock))
    answer = mails_to(db, ALICE)[-1]
    assert answer.subject == "pbm - which board?"
    assert "G move" not in answer.body
    for number in (board, other):
        assert f"    accasta move {number} alice PASSWORD {move}\n" in answer.body
