"""Elo ratings: the arithmetic, and a small league rated through the use cases.

The expected numbers are worked out by hand in the comments (K 32 while
provisional, 16 after; changes rounded half away from zero).
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Clock
from sqlmodel import select

import pbm.games
from pbm import ratings
from pbm.cli import main
from pbm.config import Config
from pbm.replies import Reply
from pbm.runners.timer_runner import tick
from pbm.store.engine import Database
from pbm.store.tables import Game, Rating
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
from pbm.usecases.proposals import Cancel
from pbm.usecases.queries import RatingLine
from pbm.usecases.queries.reading import Ratings
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")
PW = Password("pw")


# ---------------------------------------------------------------- arithmetic


def test_expected_score_and_k() -> None:
    assert ratings.expected(1500, 1500) == 0.5
    # 10 ** (100 / 400) = 1.778279...; 1 / 2.778279 = 0.359935
    assert ratings.expected(1500, 1600) == pytest.approx(0.359935, abs=1e-6)
    assert ratings.expected(1600, 1500) + ratings.expected(1500, 1600) == pytest.approx(1.0)
    assert ratings.k_factor(0) == ratings.k_factor(19) == 32
    assert ratings.k_factor(20) == ratings.k_factor(500) == 16


def test_rounding_is_half_away_from_zero() -> None:
    assert [ratings.round_half_away(x) for x in (15.5, -15.5, 2.5, -2.5, 16.49, -0.4)] == [
        16,
        -16,
        3,
        -3,
        16,
        0,
    ]


def test_each_player_has_his_own_k() -> None:
    # Equal ratings, E = 0.5: the established winner gets 16 * 0.5 = 8,
    # the provisional loser loses 32 * 0.5 = 16.
    assert ratings.rate(ratings.Side(1500, 25), ratings.Side(1500, 3), 1.0) == (1508, 1484)
    assert ratings.rate(ratings.Side(1500, 3), ratings.Side(1500, 25), 1.0) == (1516, 1492)


# ---------------------------------------------------------------- a league


def new_board(site: Site, white: str, black: str, variant: str | None = None) -> int:
    board = unit.run(site, Challenge("accasta", white, black, admin=True, variant=variant))[0].board
    assert board is not None
    return board


def first_move(site: Site, board: int, userid: str) -> None:
    view = queries.view(site, board)
    unit.run(site, Move(board, view.state.legal_moves()[0]), Who(userid, PW))


def rating_mail(site: Site, to: str) -> Reply:
    """The answer to ``accasta ratings`` from ``to``."""
    (mail,) = unit.run(site, Ratings(to, "accasta"), sender=to)
    return mail


def resign(site: Site, board: int, userid: str) -> tuple[Reply, ...]:
    return unit.run(site, Resign(board), Who(userid, PW))


def rating_of(db: Database, userid: str) -> tuple[int, int]:
    with db.transaction() as s:
        row = s.exec(
            select(Rating).where(
                Rating.userid == userid, Rating.game == "accasta", Rating.variant == "standard"
            )
        ).one()
        return int(row.rating), row.games_played


def test_a_league_matches_the_hand_computation(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    # Game 1: alice - bob, bob resigns. 1500 v 1500, E = 0.5: +16 / -16.
    b1 = new_board(site, "alice", "bob")
    first_move(site, b1, "alice")
    replies = resign(site, b1, "bob")
    assert rating_of(db, "alice") == (1516, 1) and rating_of(db, "bob") == (1484, 1)
    final = next(r for r in replies if r.to == "alice@example.org")
    assert "Ratings (accasta standard): alice 1500 -> 1516 (+16), bob 1500 -> 1484 (-16)." in (
        final.body
    )

    # Game 2: carol - bob, carol (to move) forfeits after 21 days.
    # E(bob 1484 v 1500) = 1 / (1 + 10^0.04) = 1 / 2.096478 = 0.476990
    # bob: 32 * 0.523010 = 16.74 -> +17 = 1501; carol: -16.74 -> -17 = 1483.
    b2 = new_board(site, "carol", "bob")
    clock.advance(days=21)
    assert clock_tick(db, config, clock) == 1
    g2 = game(db, b2)
    assert (g2.status, g2.result, g2.termination) == ("finished", "0-1", "forfeit")
    assert rating_of(db, "bob") == (1501, 2) and rating_of(db, "carol") == (1483, 1)

    # Game 3: alice - carol, cancelled: not rated.
    b3 = new_board(site, "alice", "carol")
    unit.run(site, Cancel(b3), Who("alice", PW))
    assert game(db, b3).white_rating_before is None
    assert rating_of(db, "alice") == (1516, 1) and rating_of(db, "carol") == (1483, 1)

    # Game 4: carol - alice, alice resigns.
    # E(carol 1483 v 1516) = 1 / (1 + 10^0.0825) = 1 / 2.209218 = 0.452651
    # carol: 32 * 0.547349 = 17.52 -> +18 = 1501; alice: -17.52 -> -18 = 1498.
    b4 = new_board(site, "carol", "alice")
    resign(site, b4, "alice")
    assert rating_of(db, "carol") == (1501, 2) and rating_of(db, "alice") == (1498, 2)

    # Game 5: alice - bob played by the rules until White castles.
    # E(alice 1498 v 1501) = 1 / (1 + 10^0.0075) = 1 / 2.017419 = 0.495683
    # alice: 32 * 0.504317 = 16.14 -> +16 = 1514; bob: -16.14 -> -16 = 1485.
    b5 = new_board(site, "alice", "bob")
    rng = random.Random(4)  # this seed ends by a White castle win on move 49
    state = ACCASTA.new()
    while state.outcome is None:
        text = rng.choice(state.legal_moves())
        state, _ = state.play(text)
        unit.run(site, Move(b5, text), Who(("alice", "bob")[(state.ply - 1) % 2], PW))
    g5 = game(db, b5)
    assert (g5.result, g5.termination) == ("1-0", "castle")
    assert (g5.white_rating_before, g5.white_rating_after) == (1498, 1514)
    assert (g5.black_rating_before, g5.black_rating_after) == (1501, 1485)

    # Elo (Glicko-2 beside it: game 1's day is over, the others' not yet).
    standings = queries.standings(site, "accasta")
    assert [replace(r, glicko=None, deviation=None) for r in standings] == [
        RatingLine("accasta", "standard", 1, "alice", 1514, 3, True),
        RatingLine("accasta", "standard", 2, "carol", 1501, 2, True),
        RatingLine("accasta", "standard", 3, "bob", 1485, 3, True),
    ]
    assert [r.glicko is not None for r in standings] == [True, False, True]
    mail = rating_mail(site, "dave@example.org")
    assert mail.to == "dave@example.org" and mail.subject == "Accasta - ratings"
    assert "Variant standard:" in mail.body
    lines = [
        ln.split()[:6] for ln in mail.body.splitlines() if ln.strip()[:2] in ("1.", "2.", "3.")
    ]
    assert lines == [
        ["1.", "alice", "1514", "3", "games", "?"],
        ["2.", "carol", "1501", "2", "games", "?"],
        ["3.", "bob", "1485", "3", "games", "?"],
    ]


def clock_tick(db: Database, config: Config, c: Clock) -> int:
    return tick(db, config, c.now)


def game(db: Database, board: int) -> Game:
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def test_an_established_player_moves_with_k_16(db: Database, site: Site) -> None:
    with db.transaction() as s:
        s.add(
            Rating(
                game="accasta", variant="standard", userid="alice", rating=1600.0, games_played=20
            )
        )
    board = new_board(site, "alice", "bob")
    resign(site, board, "bob")
    # E(alice 1600 v 1500) = 1 / (1 + 10^-0.25) = 1 / 1.562341 = 0.640065
    # alice (K 16): 16 * 0.359935 = 5.76 -> +6; bob (K 32): 32 * -0.359935 = -11.52 -> -12.
    assert rating_of(db, "alice") == (1606, 21)
    assert rating_of(db, "bob") == (1488, 1)
    assert queries.standings(site, variant="standard")[0] == RatingLine(
        "accasta", "standard", 1, "alice", 1606, 21, False
    )


def test_variants_are_rated_apart(db: Database, site: Site) -> None:
    board = new_board(site, "alice", "bob", variant="pari")
    resign(site, board, "alice")
    assert [(r.variant, r.player, r.rating) for r in queries.standings(site)] == [
        ("pari", "bob", 1516),
        ("pari", "alice", 1484),
    ]
    assert queries.standings(site, variant="standard") == []
    body = rating_mail(site, "x@example.org").body
    assert "Variant pari:" in body and "Variant standard:" not in body


def test_no_rated_games_yet(site: Site) -> None:
    assert "No rated games yet." in rating_mail(site, "x@example.org").body


def test_pbm_ratings_command(db: Database, db_url: str, site: Site, tmp_path: Path) -> None:
    board = new_board(site, "alice", "bob")
    resign(site, board, "alice")
    cfg = tmp_path / "pbm.toml"
    cfg.write_text(f'[database]\nurl = "{db_url}"\n')
    group = main  # pbm.cli registers `ratings` itself
    out = CliRunner().invoke(group, ["--config", str(cfg), "ratings", "--game", "accasta"])
    assert out.exit_code == 0, out.output
    rows = [ln.split() for ln in out.output.splitlines()]
    header = ["game", "variant", "rank", "player", "rating", "games", "provisional", "glicko-2"]
    assert rows[0] == header
    assert rows[1:] == [  # no Glicko-2 before the day is over
        ["accasta", "standard", "1", "bob", "1516", "1", "yes", "-"],
        ["accasta", "standard", "2", "alice", "1484", "1", "yes", "-"],
    ]
    out = CliRunner().invoke(group, ["--config", str(cfg), "ratings", "--variant", "pari"])
    assert out.exit_code == 0 and out.output == "no rated games\n"
