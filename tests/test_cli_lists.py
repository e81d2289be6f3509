"""The admin's lists and fixes: ``--json`` on the list commands, the ratings' columns,
``game show`` without the mail's how-to-reply, the admin's move out of turn, and the
archive (under the data directory, again in another format, ``--since`` with an offset).

Driven through ``pbm.cli.main`` (click's runner) on a real database, SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from test_cli_admin import ACCASTA, Cli, archive, create, game_row, table_rows

from pbm.store.engine import Database


@pytest.fixture(autouse=True)
def _no_pbm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("PBM_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def cli(tmp_path: Path, db_url: str) -> Cli:
    """An initialised pbm with the players alice, bob and carol."""
    c = Cli(tmp_path / "etc" / "pbm.toml", db_url)
    c("init", "--address", "pbm@example.org")
    for uid in ("alice", "bob", "carol"):
        c("player", "add", uid, f"{uid}@example.org", "--password", "pw")
    return c


@pytest.fixture
def database(db_url: str) -> Database:
    return Database.open(db_url)


def as_json(cli: Cli, *args: str) -> object:
    return json.loads(cli(*args, "--json").stdout)


def test_list_commands_print_json(cli: Cli) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", "resign")
    active = create(cli, "bob", "carol")

    players = as_json(cli, "player", "list")
    assert isinstance(players, list)
    assert [p["userid"] for p in players] == ["alice", "bob", "carol"]
    assert set(players[0]) == {"userid", "email", "name", "since"}
    datetime.fromisoformat(players[0]["since"])

    games = as_json(cli, "game", "list", "--status", "all")
    assert isinstance(games, list)
    assert [(g["board"], g["status"], g["to_move"]) for g in games] == [
        (board, "finished", None),
        (active, "active", "bob"),
    ]
    assert games[0]["result"] == "0-1"
    assert as_json(cli, "game", "list", "--status", "cancelled") == []

    ratings = as_json(cli, "ratings")
    assert ratings == [
        {
            "game": "accasta",
            "variant": "standard",
            "rank": 1,
            "player": "bob",
            "rating": 1516,
            "games": 1,
            "provisional": True,
            "glicko": None,  # Glicko-2 once the day is over
            "deviation": None,
        },
        {
            "game": "accasta",
            "variant": "standard",
            "rank": 2,
            "player": "alice",
            "rating": 1484,
            "games": 1,
            "provisional": True,
            "glicko": None,
            "deviation": None,
        },
    ]
    assert as_json(cli, "ratings", "--variant", "pari") == []

    mails = as_json(cli, "outbox", "list", "--status", "all")
    assert isinstance(mails, list) and mails
    assert {"id", "status", "attempts", "to_addr", "subject", "last_error"} <= set(mails[0])
    assert "body" not in mails[0]


def test_ratings_label_every_column(cli: Cli) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "bob", "resign")
    rows = table_rows(cli("ratings").stdout)
    assert rows[0] == [
        "game",
        "variant",
        "rank",
        "player",
        "rating",
        "games",
        "provisional",
        "glicko-2",
    ]
    assert [r[3:] for r in rows[1:]] == [
        ["alice", "1516", "1", "yes", "-"],
        ["bob", "1484", "1", "yes", "-"],
    ]


def test_game_show_is_the_board_without_the_mail_footer(cli: Cli) -> None:
    board = create(cli, "alice", "bob")
    out = cli("game", "show", str(board)).stdout
    assert out.startswith(f"Accasta Board {board} - alice to move\n")
    assert "Moves:" in out and "Forfeit:" in out
    assert "reply" not in out.lower()
    assert "unsubscribe" not in out


def test_the_admin_moving_out_of_turn_is_told_whose_turn_it_is(cli: Cli) -> None:
    board = create(cli, "alice", "bob")
    first = ACCASTA.new().legal_moves()[0]
    result = cli.fails("game", "move", str(board), "bob", first, says="It is alice's turn")
    assert result.stderr == f"Error: It is alice's turn on board {board}, not bob's.\n"
    result = cli.fails("game", "move", str(board), "carol", first, says="carol")
    assert "yours" not in result.stderr


def test_archive_goes_under_the_data_directory_by_default(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", "resign")
    out = cli("archive").stdout
    expected = cli.config_file.parent / "data" / "archive" / f"accasta-board-{board}.txt"
    assert out == f"{expected}\n"
    assert expected.is_file()
    assert not (tmp_path / "archive").exists()


def test_a_game_archived_as_text_is_archived_as_json_too(cli: Cli, tmp_path: Path) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", "resign")
    out = tmp_path / "records"
    assert archive(cli, out) == [out / f"accasta-board-{board}.txt"]
    assert archive(cli, out) == []
    [path] = archive(cli, out, "--format", "json")
    assert path == out / f"accasta-board-{board}.json"
    assert json.loads(path.read_text(encoding="utf-8"))["tags"]["Board"] == str(board)
    assert archive(cli, out, "--format", "json") == []
    # Elsewhere, the records are written anew.
    assert len(archive(cli, tmp_path / "elsewhere", "--format", "json")) == 1


def test_archive_since_honours_a_utc_offset(cli: Cli, database: Database, tmp_path: Path) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", "resign")
    ended = game_row(database, board).ended_at
    assert ended is not None
    ended = ended.replace(tzinfo=UTC) if ended.tzinfo is None else ended.astimezone(UTC)
    east, west = timezone(timedelta(hours=2)), timezone(timedelta(hours=-5))
    out = tmp_path / "a"
    # A minute after the end, written at UTC-05:00: nothing ended since. (Read as
    # UTC, its clock time would be five hours earlier, and find the game.)
    assert (
        archive(cli, out, "--since", (ended + timedelta(minutes=1)).astimezone(west).isoformat())
        == []
    )
    # A minute before the end, written at UTC+02:00, finds it. (Read as UTC, its
    # clock time would be two hours later, and find nothing.)
    since = (ended - timedelta(minutes=1)).astimezone(east).isoformat()
    assert archive(cli, out, "--since", since) == [out / f"accasta-board-{board}.txt"]
    cli.fails("archive", "--since", "yesterday", says="YYYY-MM-DD", code=2)
