"""Glicko-2 beside Elo (issue 41): Glickman's worked example to three decimals, the
deviation that grows while a player does not play, and the daily rating periods on a
real database (SQLite and PostgreSQL), shown in the ratings mail and on the web site."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from conftest import Clock, accepted
from starlette.testclient import TestClient

from pbm.glicko import START_DEVIATION, Glicko, _e, _g, idle, rate, steps
from pbm.runners.timer_runner import tick
from pbm.usecases import unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Resign
from pbm.usecases.queries.reading import Ratings
from pbm.usecases.site import Site
from pbm.web.app import create_app

# "Example of the Glicko-2 system", Mark E. Glickman (2013), section 3: a player rated
# 1500 (RD 200, volatility 0.06) beats 1400 (RD 30) and loses to 1550 (RD 100) and to
# 1700 (RD 300), with tau 0.5.
PLAYER = Glicko(1500, 200, 0.06)
GAMES = [(Glicko(1400, 30), 1.0), (Glicko(1550, 100), 0.0), (Glicko(1700, 300), 0.0)]


def test_glickmans_worked_example_to_three_decimals() -> None:
    # Step 2: the Glicko-2 scale.
    assert PLAYER.mu == pytest.approx(0.0, abs=5e-4)
    assert PLAYER.phi == pytest.approx(1.1513, abs=5e-4)
    opponents = [g for g, _ in GAMES]
    assert [o.mu for o in opponents] == pytest.approx([-0.5756, 0.2878, 1.1513], abs=5e-4)
    assert [o.phi for o in opponents] == pytest.approx([0.1727, 0.5756, 1.7269], abs=5e-4)
    # Step 3: g and E of each opponent, and v.
    assert [_g(o.phi) for o in opponents] == pytest.approx([0.9955, 0.9531, 0.7242], abs=5e-4)
    expected = [_e(PLAYER.mu, o.mu, o.phi) for o in opponents]
    assert expected == pytest.approx([0.639, 0.432, 0.303], abs=5e-4)
    found = steps(PLAYER, GAMES)
    assert found.v == pytest.approx(1.7785, abs=5e-4)
    # Step 4: the improvement (the paper rounds g and E first; 3 decimals hold).
    assert found.delta == pytest.approx(-0.4834, abs=1e-3)
    # Steps 5 to 7.
    assert found.volatility == pytest.approx(0.05999, abs=1e-5)
    assert found.mu == pytest.approx(-0.2069, abs=5e-4)
    assert found.phi == pytest.approx(0.8722, abs=5e-4)
    # Step 8: back on the Glicko scale: 1464.06 and 151.52 in the paper.
    after = rate(PLAYER, GAMES)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.005)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    alone = rate(PLAYER, [])
    assert (alone.rating, alone.volatility) == (PLAYER.rating, PLAYER.volatility)
    assert alone.deviation == pytest.approx(
        math.sqrt(PLAYER.phi**2 + PLAYER.volatility**2) * 173.7178
    )
    assert idle(PLAYER, 1).deviation == pytest.approx(alone.deviation)
    assert idle(PLAYER, 0) == PLAYER
    # Never past the start's: a player long away is as uncertain as a new one.
    assert idle(PLAYER, 100_000).deviation == START_DEVIATION


def test_a_win_raises_and_narrows_a_new_rating() -> None:
    after = rate(Glicko(), [(Glicko(), 1.0)])
    assert after.rating > 1500 and after.deviation < START_DEVIATION


def test_the_days_games_are_rated_once_the_day_is_over(site: Site, clock: Clock) -> None:
    clock.now = clock.now.replace(hour=9)
    first = accepted(site, Challenge("accasta", "alice", "bob", sender="alice@example.org"))
    second = accepted(site, Challenge("accasta", "carol", "alice", sender="carol@example.org"))
    unit.run(site, Resign(first), Who("bob", Password("pw")))  # alice beats bob
    clock.advance(hours=2)
    unit.run(site, Resign(second), Who("carol", Password("pw")))  # ... and carol
    config = site.config
    # The day is not over: no Glicko-2 rating yet, Elo at once.
    tick(site.db, config, clock.now)
    (listed,) = unit.run(site, Ratings("alice@example.org", "accasta"))
    assert "Glicko-2" not in listed.body.split("\n", 2)[2]
    # After midnight (UTC) the day's games are one rating period.
    assert tick(site.db, config, clock.now.replace(hour=0) + timedelta(days=1, minutes=1)) == 0
    (listed,) = unit.run(site, Ratings("alice@example.org", "accasta"))
    rows = {line.split()[1]: line for line in listed.body.splitlines() if "Glicko-2" in line}
    both = rate(Glicko(), [(Glicko(), 1.0), (Glicko(), 1.0)])
    assert f"Glicko-2 {round(both.rating)} (RD {round(both.deviation)})" in rows["alice"]
    one_loss = rate(Glicko(), [(Glicko(), 0.0)])
    assert f"Glicko-2 {round(one_loss.rating)} (RD" in rows["bob"]
    # A second tick that day does nothing more: the period is worked out once.
    tick(site.db, config, clock.now.replace(hour=0) + timedelta(days=1, hours=5))
    (again,) = unit.run(site, Ratings("alice@example.org", "accasta"))
    assert again.body == listed.body
    # The web site shows it beside Elo: the ratings list and the player's page.
    web = TestClient(create_app(site), base_url="http://localhost")
    page = web.get("/ratings").text
    assert "Glicko-2 (RD)" in page and f"{round(both.rating)} ({round(both.deviation)})" in page
    player = web.get("/players/alice").text
    assert f"Glicko-2 {round(both.rating)} (RD {round(both.deviation)})" in player
    assert "Elo 15" in player


def test_a_games_last_mail_shows_the_glicko_ratings_under_elo(site: Site) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender="alice@example.org"))
    replies = unit.run(site, Resign(board), Who("bob", Password("pw")))
    for reply in replies:
        text = " ".join(reply.body.split())
        assert (
            "Ratings (accasta standard): alice 1500 -> 1516 (+16), bob 1500 -> 1484 (-16). "
            "Glicko-2: alice 1500 (RD 350), bob 1500 (RD 350); this game counts in them once "
            "its day (UTC) is over."
        ) in text
