"""The admin's events on the command line (click's ``CliRunner``, a real database):
tournaments opened, listed, shown, started and cancelled, a league's season by hand;
every refusal one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_admin import Cli


@pytest.fixture
def cli(tmp_path: Path, db_url: str) -> Cli:
    c = Cli(tmp_path / "etc" / "pbm.toml", db_url)
    c("init", "--address", "pbm@example.org")
    for uid in ("alice", "bob", "carol", "dave"):
        c("player", "add", uid, f"{uid}@example.org", "--password", "pw")
    return c


def test_the_admin_opens_lists_shows_and_cancels_an_event(cli: Cli) -> None:
    out = cli(
        "tournament",
        "create",
        "--game",
        "accasta",
        "--kind",
        "roundrobin",
        "--players",
        "7",
        "--time",
        "days 3",
        "--double",
        "--starts",
        "2099-12-01",
    ).output
    number = int(out.strip())
    listed = json.loads(cli("tournament", "list", "--json").output)
    assert [(e["number"], e["status"], e["players"]) for e in listed] == [(number, "open", "0/7")]
    assert "Open: 0 of 7 players" in cli("tournament", "show", str(number)).output
    cli.fails("tournament", "start", str(number), says="has 0 players; a round robin needs 3")
    cli("tournament", "cancel", str(number))
    cli.fails("tournament", "cancel", str(number), says="is cancelled already")
    assert cli("tournament", "list").output.count("\n") <= 2  # nothing open or in play


@pytest.mark.parametrize(
    "args, says",
    [
        (("--players", "2"), "A round robin has 3 to 14 players, not 2."),
        (("--players", "40"), "A round robin has 3 to 14 players, not 40."),
        (("--players", "5", "--time", "soon"), "soon"),
        (("--players", "5", "--starts", "2000-01-01"), "has passed"),
    ],
)
def test_bad_events_get_a_sentence(cli: Cli, args: tuple[str, ...], says: str) -> None:
    result = cli.fails("tournament", "create", "--game", "accasta", *args, says=says)
    assert "Traceback" not in result.output and result.output.startswith("Error: ")


def test_a_league_season_by_hand(cli: Cli) -> None:
    cli("league", "create", "accasta", "--size", "4")
    cli.fails("league", "season", "accasta", says="has 0 players to place; a season needs 3")
    cli.fails("league", "create", "accasta", says="has a league for standard already")
    cli.fails("league", "create", "accasta", "--variant", "x", "--size", "4", says="no variant")
    cli.fails("tournament", "show", "7", says="There is no tournament 7")
