"""The admin command line (``pbm init``, ``db``, ``player``, ``game``, ``archive``).

Every test drives ``pbm.cli.main`` through click's ``CliRunner`` with a real
config file in ``tmp_path`` and a real database (``db_url``: a SQLite file
and PostgreSQL, named by ``PBM_DATABASE_URL``), then looks at the database
itself: the games, the moves, and the board mails in the outbox.
"""

from __future__ import annotations

import email
import json
import os
import pty
import random
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from click.testing import CliRunner, Result
from conftest import T0
from sqlmodel import col, select

import pbm.games
from pbm import config as config_mod
from pbm.cli import main
from pbm.mail.addresses import parse_token_address
from pbm.mail.message import build_message
from pbm.store.engine import (
    Database,
    alembic_config,
    current_revision,
    head_revision,
    init_db,
)
from pbm.store.engine import upgrade as upgrade_db
from pbm.store.tables import ALL_TABLES, Game, Move, OutboxMessage, Player, UTCDateTime
from pbm.usecases.auth import hash_password, verify_password
from pbm.usecases.records.replay import parse_record

DATA = Path(__file__).parent / "data"
ACCASTA = pbm.games.get("accasta")


@pytest.fixture(autouse=True)
def _no_pbm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No PBM_* variable of the machine running the tests leaks into the CLI."""
    for name in list(os.environ):
        if name.startswith("PBM_"):
            monkeypatch.delenv(name)


@dataclass
class Cli:
    """``pbm --config FILE ...`` against one database."""

    config_file: Path
    db_url: str | None

    def __call__(self, *args: str, input: str | None = None, ok: bool = True) -> Result:
        env = {"PBM_DATABASE_URL": self.db_url} if self.db_url else {}
        result = CliRunner().invoke(
            main, ["--config", str(self.config_file), *args], input=input, env=env
        )
        if ok:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    def fails(self, *args: str, says: str, code: int = 1) -> Result:
        """Run a command that must be refused with ``says`` in its message."""
        result = self(*args, ok=False)
        assert result.exit_code == code, (result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        assert says in result.output
        return result


def empty_config(folder: Path) -> Path:
    """A config file that sets nothing (every key at its default, or from PBM_*)."""
    path = folder / "pbm.toml"
    path.write_text("# every key at its default\n", encoding="utf-8")
    return path


@pytest.fixture
def cli(tmp_path: Path, db_url: str) -> Cli:
    """An initialised pbm with the players alice and bob."""
    c = Cli(tmp_path / "etc" / "pbm.toml", db_url)
    c("init", "--address", "pbm@example.org")
    c("player", "add", "alice", "alice@example.org", "--name", "Alice A", "--password", "pw")
    c("player", "add", "bob", "bob@example.org", "--password", "pw")
    return c


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    db = Database.open(db_url)
    yield db
    db.close()


def outbox(db: Database, board: int | None = None) -> list[OutboxMessage]:
    with db.transaction() as s:
        stmt = select(OutboxMessage).order_by(col(OutboxMessage.id))
        if board is not None:
            stmt = stmt.where(OutboxMessage.board == board)
        return list(s.exec(stmt).all())


def game_row(db: Database, board: int) -> Game:
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def moves_of(db: Database, board: int) -> list[Move]:
    with db.transaction() as s:
        return list(s.exec(select(Move).where(Move.board == board).order_by(col(Move.ply))).all())


def snapshot(db: Database) -> dict[str, object]:
    """Everything an admin command could change, to show that a refusal changed nothing."""
    with db.engine.connect() as conn:
        counts = {
            t: conn.execute(sa.text(f"SELECT COUNT(*) FROM {t}")).scalar_one()
            for t in ("players", "games", "moves", "outbox")
        }
        games = conn.execute(
            sa.text("SELECT board, status, ply, version, position FROM games ORDER BY board")
        ).all()
    return {**counts, "games": [tuple(g) for g in games]}


def create(cli: Cli, *args: str) -> int:
    out = cli("game", "create", "accasta", *args).output
    assert re.fullmatch(r"\d+\n", out), out
    return int(out)


def table_rows(output: str) -> list[list[str]]:
    """An aligned table's cells, cut at the header's column starts."""
    lines = output.splitlines()
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", header)]
    rows = []
    for line in lines:
        bounds = [*starts[1:], None]
        rows.append([line[a:b].strip() for a, b in zip(starts, bounds, strict=True)])
    return rows


# ---------------------------------------------------------------- init, db


def test_init_writes_config_with_fresh_secret_and_creates_database(tmp_path: Path) -> None:
    secrets = []
    for name in ("one", "two"):
        cfg_file = tmp_path / name / "pbm.toml"
        result = Cli(cfg_file, None)("init", "--address", f"pbm@{name}.example.org")
        assert "(new, with a fresh mail.secret)" in result.output
        data = tomllib.loads(cfg_file.read_text(encoding="utf-8"))
        assert data["mail"]["address"] == f"pbm@{name}.example.org"
        assert len(data["mail"]["secret"]) >= 32
        secrets.append(data["mail"]["secret"])
        # The default database: data/pbm.sqlite3 next to the config file, migrated.
        db_file = tmp_path / name / "data" / "pbm.sqlite3"
        assert db_file.is_file()
        db = Database.open(f"sqlite:///{db_file}")
        try:
            assert current_revision(db) == head_revision()
        finally:
            db.close()
    assert secrets[0] != secrets[1]

    # A second init keeps the config file as it is (secret included).
    cfg_file = tmp_path / "one" / "pbm.toml"
    before = cfg_file.read_bytes()
    result = Cli(cfg_file, None)("init", "--address", "other@example.org")
    assert "(kept)" in result.output
    assert cfg_file.read_bytes() == before


def test_init_on_the_configured_database(tmp_path: Path, db_url: str) -> None:
    result = Cli(tmp_path / "pbm.toml", db_url)("init")
    assert f"(at revision {head_revision()})" in result.output
    db = Database.open(db_url)
    try:
        assert current_revision(db) == head_revision()
    finally:
        db.close()


def test_db_upgrade_migrates_an_existing_database(tmp_path: Path) -> None:
    db_file = tmp_path / "old.sqlite3"
    url = f"sqlite:///{db_file}"
    db = init_db(url)
    try:
        # An old database: back to before the first migration (no tables of ours).
        cfg = alembic_config(url)
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "base")
        assert current_revision(db) is None
        assert "games" not in sa.inspect(db.engine).get_table_names()
    finally:
        db.close()

    cli = Cli(empty_config(tmp_path), url)
    cli.fails("game", "list", says="run `pbm init` first")
    result = cli("db", "upgrade")
    assert f"(at revision {head_revision()})" in result.output
    db = Database.open(url)
    try:
        assert current_revision(db) == head_revision()
        assert set(ALL_TABLES) <= set(sa.inspect(db.engine).get_table_names())
    finally:
        db.close()
    assert cli("game", "list").output.startswith("board")


def test_commands_without_a_database_say_so(tmp_path: Path) -> None:
    cli = Cli(empty_config(tmp_path), f"sqlite:///{tmp_path / 'none' / 'pbm.sqlite3'}")
    for args in (
        ("player", "list"),
        ("player", "add", "carol", "carol@example.org", "--password", "pw"),
        ("game", "list"),
        ("game", "show", "1"),
        ("archive", "--out", str(tmp_path / "a")),
    ):
        cli.fails(*args, says="run `pbm init` first")
    # No command but init makes a database: a typo in the URL is not a new empty site.
    assert not (tmp_path / "none").exists()
    assert not (tmp_path / "a").exists()


def _site_at_0003(url: str) -> None:
    """A site as pbm left it before revision 0004: alice and bob, board 1 (alice to move)."""
    db = Database.open(url)
    try:
        upgrade_db(db, "0003")
        t = sa.bindparam("t", T0, type_=UTCDateTime)
        with db.engine.begin() as conn:
            for uid in ("alice", "bob"):
                conn.execute(
                    sa.text(
                        "INSERT INTO players (userid, display, email, full_name, password_hash,"
                        " created_at, vacation_days_used) VALUES (:u, :u, :e, '', :h, :t, 0)"
                    ).bindparams(t),
                    {"u": uid, "e": f"{uid}@example.org", "h": hash_password("pw")},
                )
            conn.execute(
                sa.text(
                    "INSERT INTO games (game, variant, options, white, black, status, position,"
                    " ply, version, nag_days, forfeit_days, created_at, clock_since)"
                    " VALUES ('accasta', 'standard', :o, 'alice', 'bob', 'active', :p,"
                    " 0, 0, 7, 21, :t, :t)"
                ).bindparams(t),
                {"o": json.dumps(dict(ACCASTA.new().options)), "p": ACCASTA.new().dump()},
            )
    finally:
        db.close()


def test_db_upgrade_of_a_site_with_games_keeps_them(tmp_path: Path) -> None:
    """The upgrade every existing site makes: its players and games go on as they were."""
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    _site_at_0003(url)
    cli = Cli(empty_config(tmp_path), url)
    result = cli("db", "upgrade")
    assert f"(at revision {head_revision()})" in result.output
    rows = table_rows(cli("game", "list").output)
    assert [r[:5] for r in rows[1:]] == [["1", "accasta", "standard", "alice-bob", "alice"]]
    first = ACCASTA.new().legal_moves()[0]
    out = cli("game", "move", "1", "alice", first).output
    assert out == f"board 1: {first} played; bob to move\n"
    assert [r[0] for r in table_rows(cli("player", "list").output)[1:]] == ["alice", "bob"]


def test_a_database_not_yet_upgraded_says_so_and_changes_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    _site_at_0003(url)
    cli = Cli(empty_config(tmp_path), url)
    db = Database.open(url)
    try:
        before = snapshot(db)
        for args in (
            ("game", "list"),
            ("player", "add", "carol", "carol@example.org", "--password", "pw"),
            ("game", "move", "1", "alice", ACCASTA.new().legal_moves()[0]),
        ):
            result = cli.fails(*args, says="pbm db upgrade")
            assert len(result.output.strip().splitlines()) == 1
        assert snapshot(db) == before
        assert current_revision(db) == "0003"
    finally:
        db.close()


def test_a_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    cfg_file = tmp_path / "pbm.toml"
    cfg_file.write_text('[mail]\nadress = "x@example.org"\n', encoding="utf-8")
    Cli(cfg_file, None).fails("game", "list", says="unknown key(s) in [mail]: adress")


# ---------------------------------------------------------------- players


def test_player_add_asks_for_the_password_and_mails_a_welcome(cli: Cli, database: Database) -> None:
    result = cli("player", "add", "Carol", "carol@example.org", input="s3cret\ns3cret\n")
    assert "player Carol added" in result.output
    with database.transaction() as s:
        carol = s.get(Player, "carol")
        assert carol is not None
        assert carol.display == "Carol"
        assert verify_password("s3cret", carol.password_hash)
        assert not verify_password("pw", carol.password_hash)
    welcome = [m for m in outbox(database) if m.to_addr == "carol@example.org"]
    assert len(welcome) == 1
    assert "Welcome" in welcome[0].subject

    rows = table_rows(cli("player", "list").output)
    assert rows[0] == ["userid", "email", "name", "since"]
    assert [r[:3] for r in rows[1:]] == [
        ["alice", "alice@example.org", "Alice A"],
        ["bob", "bob@example.org", ""],
        ["Carol", "carol@example.org", ""],
    ]


def test_player_add_refusals_change_nothing(cli: Cli, database: Database) -> None:
    before = snapshot(database)
    cli.fails("player", "add", "alice", "x@example.org", "--password", "pw", says="taken")
    cli.fails("player", "add", "dave", "not-an-address", "--password", "pw", says="not a mail")
    cli.fails("player", "add", "9lives", "n@example.org", "--password", "pw", says="userid")
    assert snapshot(database) == before


# ---------------------------------------------------------------- games


def test_game_create_prints_the_board_and_mails_both_players(cli: Cli, database: Database) -> None:
    board = create(
        cli,
        "alice",
        "bob",
        "--variant",
        "pari",
        "--option",
        "castle_win=next_turn",
        "--nag",
        "3",
        "--forfeit",
        "9",
    )
    g = game_row(database, board)
    assert (g.white, g.black, g.variant, g.status) == ("alice", "bob", "pari", "active")
    assert g.options["castle_win"] == "next_turn"
    assert (g.nag_days, g.forfeit_days) == (3, 9)
    mails = outbox(database, board)
    assert sorted(m.to_addr for m in mails) == ["alice@example.org", "bob@example.org"]
    assert all(m.subject == f"Accasta Board {board} - alice to move" for m in mails)
    # The config init wrote has a secret: each player's mail carries his reply address.
    cfg = config_mod.load(cli.config_file, env={})
    for m in mails:
        reply_to = email.message_from_bytes(build_message(m, cfg))["Reply-To"]
        token = parse_token_address(reply_to, "pbm@example.org")
        assert token is not None and token.is_valid(cfg.mail.secret)
        assert (token.board, token.userid) == (board, m.to_addr.partition("@")[0])

    # Defaults: standard, the clock section's days.
    board2 = create(cli, "bob", "alice")
    g2 = game_row(database, board2)
    assert (g2.variant, g2.nag_days, g2.forfeit_days) == ("standard", 7, 21)
    assert board2 != board


def test_game_list_is_an_aligned_table_with_filters(cli: Cli) -> None:
    cli("player", "add", "carol", "carol@example.org", "--password", "pw")
    b1 = create(cli, "alice", "bob")
    b2 = create(cli, "bob", "carol", "--variant", "pari")
    b3 = create(cli, "carol", "alice")
    cli("game", "move", str(b1), "alice", ACCASTA.new().legal_moves()[0])
    cli("game", "move", str(b2), "bob", "resign")
    cli("game", "cancel", str(b3))

    out = cli("game", "list").output
    rows = table_rows(out)
    header = ["board", "game", "variant", "players", "to move", "ply", "last move"]
    assert rows[0] == header
    assert [r[:6] for r in rows[1:]] == [[str(b1), "accasta", "standard", "alice-bob", "bob", "1"]]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", rows[1][6])
    # Aligned: every column starts where its header does.
    lines = out.splitlines()
    assert lines[1].index("standard") == lines[0].index("variant")
    assert lines[1].index("alice-bob") == lines[0].index("players")

    def boards(*args: str) -> list[str]:
        return [r[0] for r in table_rows(cli("game", "list", *args).output)[1:]]

    assert boards("--status", "finished") == [str(b2)]
    assert boards("--status", "cancelled") == [str(b3)]
    assert boards("--status", "all") == [str(b1), str(b2), str(b3)]
    assert boards("--status", "all", "--player", "carol") == [str(b2), str(b3)]
    assert boards("--status", "all", "--player", "Alice", "--game", "accasta") == [
        str(b1),
        str(b3),
    ]
    finished = table_rows(cli("game", "list", "--status", "finished").output)[1]
    assert finished[3:5] == ["bob-carol", "finished 0-1"]
    assert cli("game", "list", "--status", "active", "--player", "carol").output.count("\n") == 1
    cli.fails("game", "list", "--player", "zed", says="There is no player 'zed'")
    cli.fails("game", "list", "--game", "shogi", says="There is no game called 'shogi'")
    cli.fails("game", "list", "--status", "won", says="Invalid value", code=2)


def test_game_show_prints_diagram_and_moves(cli: Cli) -> None:
    board = create(cli, "alice", "bob")
    first = ACCASTA.new().legal_moves()[0]
    cli("game", "move", str(board), "alice", first, "--comment", "an opening")
    out = cli("game", "show", str(board)).output
    assert out.startswith(f"Accasta Board {board} - bob to move\n")
    assert "alice (White) vs bob (Black)" in out
    assert f"1. {first}" in out
    assert "an opening" in out
    assert ACCASTA.new().play(first)[0].diagram().rstrip("\n") in out
    cli.fails("game", "show", "999", says="There is no board 999")


def test_game_move_plays_for_a_player_and_mails_the_board(cli: Cli, database: Database) -> None:
    board = create(cli, "alice", "bob")
    mails_before = len(outbox(database, board))
    state = ACCASTA.new()
    text = state.legal_moves()[3]
    out = cli("game", "move", str(board), "alice", text, "--comment", "well").output
    canonical = state.play(text)[1]
    assert out == f"board {board}: {canonical} played; bob to move\n"
    [mv] = moves_of(database, board)
    assert (mv.ply, mv.userid, mv.notation, mv.comment) == (1, "alice", canonical, "well")
    new_mails = outbox(database, board)[mails_before:]
    assert sorted(m.to_addr for m in new_mails) == ["alice@example.org", "bob@example.org"]
    assert all(canonical in m.body for m in new_mails)
    assert all("Move played by the site admin for alice." in m.body for m in new_mails)
    assert {m.subject for m in new_mails} == {f"Accasta Board {board} - bob to move"}

    # MOVE#N, read where the command is read: only as that move.
    answer = state.play(text)[0].legal_moves()[0]
    cli.fails("game", "move", str(board), "bob", f"{answer}#3", says="is at move 2 now")
    cli.fails(
        "game", "move", str(board), "bob", f"{answer}#x", says="#N must be a move number", code=2
    )
    out = cli("game", "move", str(board), "bob", "Resign").output
    assert out == f"board {board}: bob resigned; finished 1-0 resign\n"
    g = game_row(database, board)
    assert (g.status, g.result, g.termination) == ("finished", "1-0", "resign")
    resign_mails = outbox(database, board)[mails_before + 2 :]
    assert sorted(m.to_addr for m in resign_mails) == ["alice@example.org", "bob@example.org"]
    assert all("The site admin resigned the game for bob." in m.body for m in resign_mails)


def test_game_cancel_tells_the_players(cli: Cli, database: Database) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", ACCASTA.new().legal_moves()[0])
    before = len(outbox(database, board))
    out = cli("game", "cancel", str(board)).output
    assert out == f"board {board} (alice-bob) cancelled\n"
    assert game_row(database, board).status == "cancelled"
    mails = outbox(database, board)[before:]
    assert sorted(m.to_addr for m in mails) == ["alice@example.org", "bob@example.org"]
    assert all("The site admin cancelled the board." in m.body for m in mails)


def test_game_refusals_say_why_and_change_nothing(cli: Cli, database: Database) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", ACCASTA.new().legal_moves()[0])
    finished = create(cli, "bob", "alice")
    cli("game", "move", str(finished), "alice", "resign")
    before = snapshot(database)
    b = str(board)
    cli.fails("game", "move", "999", "alice", "a1:C-b1", says="There is no board 999")
    cli.fails("game", "move", b, "alice", "g2:C+f2", says="It is bob's turn")
    cli.fails("game", "move", b, "bob", "a1:C+b2", says="Error: ")
    cli.fails("game", "move", b, "bob", "nonsense", says="Error: ")
    cli.fails("game", "move", b, "zed", "a1:C+b2", says="There is no player 'zed'")
    cli.fails("game", "move", str(finished), "bob", "resign", says=f"Board {finished} is over")
    cli.fails("game", "cancel", "999", says="There is no board 999")
    cli.fails("game", "cancel", str(finished), says=f"Board {finished} is over")
    cli.fails("game", "create", "accasta", "alice", "zed", says="There is no player 'zed'")
    cli.fails("game", "create", "accasta", "alice", "alice", says="two different players")
    cli.fails("game", "create", "shogi", "alice", "bob", says="no game called 'shogi'")
    cli.fails("game", "create", "accasta", "alice", "bob", "--variant", "foo", says="variant")
    cli.fails(
        "game", "create", "accasta", "alice", "bob", "--option", "foo=bar", says="option 'foo'"
    )
    cli.fails(
        "game", "create", "accasta", "alice", "bob", "--option", "castle_win=never", says="never"
    )
    cli.fails(
        "game",
        "create",
        "accasta",
        "alice",
        "bob",
        "--option",
        "castle_win",
        says="KEY=VALUE",
        code=2,
    )
    cli.fails("game", "create", "accasta", "alice", "bob", "--nag", "0", says="--nag", code=2)
    assert snapshot(database) == before


def test_an_illegal_move_names_the_reason(cli: Cli) -> None:
    board = create(cli, "alice", "bob")
    state = ACCASTA.new()
    with pytest.raises(pbm.games.IllegalMove) as exc:
        state.play("a1:C-a2")
    cli.fails("game", "move", str(board), "alice", "a1:C-a2", says=str(exc.value))


# ---------------------------------------------------------------- whole games and the archive


def play_through_cli(cli: Cli, board: int, moves: Sequence[str]) -> None:
    players = ("alice", "bob")
    for i, text in enumerate(moves):
        cli("game", "move", str(board), players[i % 2], text)


def archive(cli: Cli, out: Path, *args: str) -> list[Path]:
    result = cli("archive", "--out", str(out), *args)
    return [Path(line) for line in result.stdout.splitlines()]


def replay(cli: Cli, path: Path) -> Result:
    return cli("rules", "replay", str(path), ok=False)


@pytest.mark.parametrize(
    ("sample", "loser", "result"),
    [("sample_standard.txt", "bob", "1-0"), ("sample_pari.txt", "alice", "0-1")],
)
def test_sample_game_played_archived_and_replayed(
    cli: Cli, database: Database, tmp_path: Path, sample: str, loser: str, result: str
) -> None:
    record = parse_record((DATA / sample).read_text(encoding="utf-8"))
    variant = record.variant or "standard"
    board = create(cli, "alice", "bob", "--variant", variant)
    play_through_cli(cli, board, [m.text for m in record.moves])
    cli("game", "move", str(board), loser, "resign")
    g = game_row(database, board)
    assert (g.status, g.result, g.termination) == ("finished", result, "resign")
    assert g.ply == len(record.moves)

    out = tmp_path / "archive"
    [path] = archive(cli, out)
    assert path == out / f"accasta-board-{board}.txt"
    text = path.read_text(encoding="utf-8")
    tags = parse_record(text).tags
    assert tags["Game"] == "Accasta"
    assert tags["Variant"] == variant
    assert tags["Board"] == str(board)
    assert (tags["White"], tags["Black"]) == ("alice", "bob")
    assert tags["Result"] == result
    assert tags["Termination"] == "resign"
    assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", tags["Started"])
    assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", tags["Ended"])
    assert text.rstrip().endswith(result)
    assert [m.text for m in parse_record(text).moves] == [
        m.notation for m in moves_of(database, board)
    ]

    rep = replay(cli, path)
    assert rep.exit_code == 0, rep.output
    assert rep.stdout.endswith(f"Result: {result} (resign) after {len(record.moves)} turns\n")

    # Archived games stay queryable; a second run writes nothing.
    assert game_row(database, board).archived_at is not None
    listed = table_rows(cli("game", "list", "--status", "finished").output)
    assert [r[0] for r in listed[1:]] == [str(board)]
    assert "Accasta Board" in cli("game", "show", str(board)).output
    mtime = path.stat().st_mtime_ns
    assert archive(cli, out) == []
    assert path.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in out.iterdir()) == [path.name]  # no temporary files left


def castle_game(seed: int = 2078) -> tuple[list[str], str]:
    """A seeded random game of legal moves that ends with a castle taken."""
    rng = random.Random(seed)
    state = ACCASTA.new()
    played = []
    while state.outcome is None and len(played) < 80:
        state, canonical = state.play(rng.choice(state.legal_moves()))
        played.append(canonical)
    assert state.outcome is not None, "the seed no longer gives a finished game"
    assert state.outcome.termination == "castle"
    return played, "1-0" if state.outcome.winner == 0 else "0-1"


def test_a_game_won_on_the_board_archived_and_replayed(
    cli: Cli, database: Database, tmp_path: Path
) -> None:
    played, result = castle_game()
    board = create(cli, "alice", "bob")
    play_through_cli(cli, board, played[:-1])
    mover = ("alice", "bob")[(len(played) - 1) % 2]
    out = cli("game", "move", str(board), mover, played[-1]).output
    assert out == f"board {board}: {played[-1]} played; finished {result} castle\n"
    g = game_row(database, board)
    assert (g.status, g.result, g.termination) == ("finished", result, "castle")
    last_mails = outbox(database, board)[-2:]
    assert {m.subject for m in last_mails} == {
        f"Accasta Board {board} - {'White' if result == '1-0' else 'Black'} wins"
    }

    [path] = archive(cli, tmp_path / "archive")
    text = path.read_text(encoding="utf-8")
    assert f'[Result "{result}"]' in text
    assert '[Termination "castle"]' in text
    rep = replay(cli, path)
    assert rep.exit_code == 0, rep.output
    assert rep.stdout.endswith(f"Result: {result} (castle) after {len(played)} turns\n")

    # A tampered record: one move changed. The replay names move, side and reason.
    record = parse_record(text)
    target = next(m for m in record.moves if m.number == 9 and m.side == 0)
    tampered = text.replace(f"9. {target.text} ", f"9. {played[0]} ", 1)
    assert tampered != text
    bad = tmp_path / "tampered.txt"
    bad.write_text(tampered, encoding="utf-8")
    rep = replay(cli, bad)
    assert rep.exit_code == 1
    with pytest.raises(pbm.games.IllegalMove) as why:
        state = ACCASTA.new()
        for text_ in played[:8]:
            state = state.play(text_)[0]
        state.play(played[0])
    assert rep.stderr == f"error: move 9 White ({played[0]}): {why.value}\n"

    # A tampered result (tag and closing token): the moves say otherwise.
    other = "0-1" if result == "1-0" else "1-0"
    wrong = tmp_path / "wrong-result.txt"
    assert text.endswith(f"\n{result}\n")
    wrong_text = text.replace(f'[Result "{result}"]', f'[Result "{other}"]')
    wrong.write_text(wrong_text.removesuffix(f"{result}\n") + f"{other}\n", "utf-8")
    rep = replay(cli, wrong)
    assert rep.exit_code == 1
    assert f"the record says {other}, but the moves end with {result} (castle)" in rep.stderr


def test_archive_json_and_since(cli: Cli, database: Database, tmp_path: Path) -> None:
    board = create(cli, "alice", "bob")
    first = ACCASTA.new().legal_moves()[0]
    cli("game", "move", str(board), "alice", first, "--comment", "a {braced} note")
    cli("game", "move", str(board), "bob", "resign")
    active = create(cli, "bob", "alice")
    out = tmp_path / "json"

    assert archive(cli, out, "--format", "json", "--since", "2199-01-01") == []
    assert game_row(database, board).archived_at is None
    cli.fails("archive", "--out", str(out), "--since", "yesterday", says="YYYY-MM-DD", code=2)

    [path] = archive(cli, out, "--format", "json", "--since", "2000-01-01")
    assert path.name == f"accasta-board-{board}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["tags"]["Result"] == "1-0"
    assert data["tags"]["Termination"] == "resign"
    [mv] = data["moves"]
    assert (mv["ply"], mv["player"], mv["comment"]) == (1, "alice", "a {braced} note")
    assert game_row(database, active).archived_at is None
    # Archived as JSON, the game is archived as text too when asked (then no more).
    assert archive(cli, out) == [out / f"accasta-board-{board}.txt"]
    assert archive(cli, out) == []
    assert archive(cli, out, "--format", "json") == []


def test_text_record_keeps_comments_readable(cli: Cli, tmp_path: Path) -> None:
    board = create(cli, "alice", "bob")
    state = ACCASTA.new()
    first = state.legal_moves()[0]
    second = state.play(first)[0].legal_moves()[0]
    cli("game", "move", str(board), "alice", first, "--comment", "open (wide) {now}")
    cli("game", "move", str(board), "bob", second)
    cli("game", "move", str(board), "alice", "resign")
    [path] = archive(cli, tmp_path / "a")
    body = path.read_text(encoding="utf-8").split("\n\n", 1)[1]
    assert body == f"1. {first} {{open [wide] [now]}} 2. {second}\n0-1\n"
    record = parse_record(path.read_text(encoding="utf-8"))
    assert record.moves[0].comment == "open [wide] [now]"


def test_archive_that_cannot_write_leaves_the_game_unarchived(
    cli: Cli, database: Database, tmp_path: Path
) -> None:
    board = create(cli, "alice", "bob")
    cli("game", "move", str(board), "alice", "resign")
    out = tmp_path / "a"
    (out / f"accasta-board-{board}.txt").mkdir(parents=True)  # in the way of the record
    cli.fails("archive", "--out", str(out), says=f"board {board}: cannot write its record")
    assert game_row(database, board).archived_at is None
    assert sorted(p.name for p in out.iterdir()) == [f"accasta-board-{board}.txt"]
    (out / f"accasta-board-{board}.txt").rmdir()
    assert len(archive(cli, out)) == 1


def test_archive_draws_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "pbm.toml", None)  # the default SQLite file; one backend is enough
    cli("init")
    cli("player", "add", "alice", "alice@example.org", "--password", "pw")
    cli("player", "add", "bob", "bob@example.org", "--password", "pw")
    for _ in range(3):
        board = create(cli, "alice", "bob")
        cli("game", "move", str(board), "bob", "resign")
    controller, terminal = pty.openpty()
    try:
        args = ["--config", str(cli.config_file), "archive", "--out", str(tmp_path / "a")]
        proc = subprocess.run(
            [sys.executable, "-m", "pbm", *args],
            stdout=subprocess.PIPE,
            stderr=terminal,
            timeout=60,
            check=False,
        )
    finally:
        os.close(terminal)
    seen = b""
    try:
        while chunk := _read(controller):
            seen += chunk
    finally:
        os.close(controller)
    assert proc.returncode == 0, seen
    assert len(proc.stdout.splitlines()) == 3
    text = seen.decode()
    assert "archiving  [####" in text
    assert "100%" in text
    assert "3 game(s) archived" in text


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # Linux: EIO once the terminal side is closed and drained
        return b""


def test_an_unreachable_database_is_one_line_without_the_password(tmp_path: Path) -> None:
    url = "postgresql+psycopg://pbm:s3cretpw@127.0.0.1:1/pbm"  # nothing listens on port 1
    cli = Cli(empty_config(tmp_path), url)
    for args in (("init",), ("db", "upgrade"), ("game", "list"), ("archive",)):
        result = cli.fails(*args, says="database postgresql+psycopg://pbm:***@127.0.0.1:1/pbm: ")
        assert "s3cretpw" not in result.output
        assert "Traceback" not in result.output
