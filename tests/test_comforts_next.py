"""The next game first, rematch and challenges that do not wait forever (issue 41), on a
real database: ``games UID`` puts the boards waiting for the player first, by the least
time left; ``next`` answers with the most urgent board's mail; a move's board mail names
the next board waiting; ``rematch`` swaps the colours; a challenge lapses after the
site's ``challenge_days``, both players are told, and ``games`` shows it."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from conftest import Clock, accepted

from pbm.config import ClockConfig
from pbm.model import BoardStatus
from pbm.refusals import BadRequest, GameOver
from pbm.runners.timer_runner import tick
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.auth import ByReply, Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
from pbm.usecases.nextgame import Next, PlayerGames
from pbm.usecases.rematch import Rematch
from pbm.usecases.site import Site

PW = Password("pw")
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


def flat(text: str) -> str:
    return " ".join(text.split())


def first_move(site: Site, board: int, userid: str) -> None:
    found = queries.board(site, board).state.example_move()
    assert found is not None
    unit.run(site, Move(board, found), Who(userid, PW))


@pytest.fixture
def boards(site: Site, clock: Clock) -> list[int]:
    """Three boards: bob moved on 1 a day before he moved on 2 (alice to move on both,
    less time left on 1); alice moved on 3 (carol to move)."""
    one = accepted(site, Challenge("accasta", "bob", "alice", sender=BOB))
    two = accepted(site, Challenge("chess", "bob", "alice", sender=BOB))
    three = accepted(site, Challenge("accasta", "alice", "carol", sender=ALICE))
    first_move(site, one, "bob")
    clock.advance(days=1)
    first_move(site, two, "bob")
    first_move(site, three, "alice")
    return [one, two, three]


def test_games_lists_the_boards_waiting_for_the_player_first(site: Site, boards: list[int]) -> None:
    [listed] = unit.run(site, PlayerGames(CAROL, "alice"))
    assert listed.to == CAROL and listed.subject == "pbm - active boards of alice"
    lines = listed.body.splitlines()
    assert re.fullmatch(
        r"Waiting for alice's move, the least time left first: "
        rf"Board {boards[0]} accasta standard bob - alice move 2, alice to move, 20 days left "
        rf"Board {boards[1]} chess standard bob - alice move 1, alice to move, 21 days left "
        "Waiting for the opponent's move: "
        rf"Board {boards[2]} accasta standard alice - carol move 2, carol to move, 21 days left",
        flat(listed.body),
    )
    assert all(len(line) <= 78 for line in lines)


def test_next_answers_with_the_most_urgent_board_mail(site: Site, boards: list[int]) -> None:
    [mail] = unit.run(site, Next(), Who("alice", PW))
    assert mail.to == ALICE and mail.board == boards[0] and mail.reply_as == "alice"
    assert mail.subject.endswith("alice to move")  # the board mail, answerable by reply
    text = flat(mail.body)
    assert text.startswith("Your most urgent board: 20 days left.")
    assert f"Waiting too: board {boards[1]} (21 days)." in text
    # Nothing waits for carol... until alice moved; then her board is the one.
    with pytest.raises(BadRequest) as info:
        unit.run(site, Next(), Who("bob", PW))
    assert info.value.message == (
        "No board waits for bob's move: your opponents are to move everywhere. The list of "
        "your boards: games bob"
    )
    [carols] = unit.run(site, Next(), Who("carol", PW))
    assert carols.board == boards[2]


def test_the_board_mail_of_a_move_names_the_next_board_waiting(
    site: Site, boards: list[int]
) -> None:
    replies = unit.run(
        site, Move(boards[0], "e3:S+e4"), Who("alice", ByReply(boards[0])), sender=ALICE
    )
    [mine] = [r for r in replies if r.to == ALICE]
    assert f"\n\nNext: board {boards[1]}, 21 days left.\n" in mine.body
    [theirs] = [r for r in replies if r.to == BOB]
    assert "Next:" not in theirs.body  # bob did not ask; and it is his move there now
    # The last board answered: nothing waits, nothing named.
    replies = unit.run(site, Move(boards[1], "e5"), Who("alice", PW), sender=ALICE)
    [mine] = [r for r in replies if r.to == ALICE]
    assert "Next:" not in mine.body


def test_rematch_swaps_the_colours_and_keeps_the_game(db: Database, site: Site) -> None:
    board = accepted(
        site,
        Challenge("accasta", "alice", "bob", sender=ALICE, variant="pari", time="days 3"),
    )
    with pytest.raises(GameOver) as info:
        unit.run(site, Rematch(board), Who("alice", PW))
    assert info.value.message == (
        f"Board {board} is still in play: a rematch is for a game that has ended."
    )
    [ended, _] = unit.run(site, Resign(board), Who("bob", PW))
    # The board mail at the game's end says how.
    assert "reply to this mail with rematch" in flat(ended.body)
    assert f"accasta rematch {board} alice PASSWORD" in flat(ended.body)
    replies = unit.run(site, Rematch(board, "Again?"), Who("alice", ByReply(board)), sender=ALICE)
    new = replies[0].board
    assert new is not None and new != board
    again = queries.board(site, new)
    assert (again.white, again.black) == ("bob", "alice")
    assert (again.game, again.variant, again.time_control) == ("accasta", "pari", "days 3")
    assert again.status == BoardStatus.WAITING and again.challenger == "alice"
    [challenge] = [r for r in replies if r.to == BOB]
    assert "Again?" in challenge.body
    with pytest.raises(BadRequest, match="waits for an answer already"):
        unit.run(site, Rematch(board), Who("bob", PW))


def test_a_challenge_lapses_after_the_sites_days_and_games_shows_it(
    db: Database, site: Site, clock: Clock
) -> None:
    here = replace(site, config=replace(site.config, clock=ClockConfig(challenge_days=3)))
    replies = unit.run(here, Challenge("accasta", "alice", "bob", sender=ALICE))
    board = replies[0].board
    assert any("lapses on 2025-03-04 12:00 UTC" in flat(r.body) for r in replies)
    [listed] = unit.run(here, PlayerGames(BOB, "bob"))
    assert flat(listed.body) == (
        f"Challenges (lapsing after 3 days): Board {board} accasta standard alice - bob "
        "bob to accept by 2025-03-04 12:00 UTC"
    )
    assert tick(db, here.config, clock.now.replace(day=4, hour=11)) == 0
    assert tick(db, here.config, clock.now.replace(day=4, hour=12, minute=1)) == 1
    assert queries.board(here, board or 0).status == BoardStatus.CANCELLED
    clock.now = clock.now.replace(day=4, hour=13)
    [listed] = unit.run(here, PlayerGames(ALICE, "alice"))
    assert "Challenges that lapsed unanswered:" in listed.body
    assert re.search(rf"Board\s+{board}\s+with bob, lapsed 2025-03-04 12:01 UTC", listed.body)
