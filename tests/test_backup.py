"""``pbm db backup FILE``: SQLite's online backup of a running site, restored and read.

A real ``pbm serve`` receives a stream of mail (a client thread) while the
admin takes backups with the real ``pbm`` command; each backup is put in
place of a new site's database, where ``pbm game show`` reads the board and
SQLite finds the file sound. On PostgreSQL the command says to use pg_dump.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
from mailserver import PbmServer, Sink, body_of, challenge_accepted, reply_to, sign_up

from pbm.games import get as get_game

pytestmark = pytest.mark.e2e

ALICE, BOB = "alice@example.org", "bob@example.net"


def pbm(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pbm ARGS`` for the site whose config is ``site/pbm.toml``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBM_")}
    return subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(site / "pbm.toml"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def rows(path: Path, table: str) -> int:
    with closing(sqlite3.connect(path)) as conn:
        (n,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(n)


def test_a_backup_taken_while_mail_is_processed_restores(tmp_path: Path, sink: Sink) -> None:
    server = PbmServer(tmp_path / "site", sink_port=sink.port)
    server.root.mkdir()
    server.start()
    sent = 0
    stop = threading.Event()

    def stream() -> None:
        """Mail keeps coming: alice asks for the board again and again."""
        nonlocal sent
        while not stop.is_set() and sent < 3000:
            server.send(ALICE, "accasta show 1")
            sent += 1

    try:
        sign_up(server, sink, "alice", ALICE, "pw-a")
        sign_up(server, sink, "bob", BOB, "pw-b")
        to_alice = challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
        first = get_game("accasta").new().legal_moves()[0]
        server.send(ALICE, f"Re: {to_alice['Subject']}", f"{first}\n", to=reply_to(to_alice))
        assert "Move 1, alice " in body_of(sink.wait_for(BOB, "Board 1 - bob to move"))

        client = threading.Thread(target=stream)
        client.start()
        backups = []
        try:
            for i in range(2):
                before = sent
                backup = tmp_path / f"backup-{i}.sqlite3"
                res = server.pbm("db", "backup", str(backup))
                assert res.startswith(f"backup: {backup} (")
                backups.append((backup, before, sent))
        finally:
            stop.set()
            client.join()
        # Taken while mail was coming in: the stream went on during the backups.
        assert any(after > before for _, before, after in backups), backups
        assert server.pbm("db", "backup", str(backups[0][0]), check=False) == ""
    finally:
        stop.set()
        server.stop()

    for backup, _, _ in backups:
        with closing(sqlite3.connect(backup)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert not Path(f"{backup}-wal").exists()
        assert rows(backup, "inbox") >= 5  # the signups, the challenge, the move...
        # Restored: a new site with the backup as its database.
        site = tmp_path / f"restored-{backup.stem}"
        (site / "data").mkdir(parents=True)
        (site / "pbm.toml").write_text("", encoding="utf-8")
        (site / "data" / "pbm.sqlite3").write_bytes(backup.read_bytes())
        shown = pbm(site, "game", "show", "1")
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith("Accasta Board 1 - bob to move\n")
        assert f"1. {first}" in shown.stdout
        assert pbm(site, "status").returncode in (0, 1)  # it reads the queues too
    # The last backup saw more of the stream than the first.
    assert rows(backups[-1][0], "inbox") >= rows(backups[0][0], "inbox")


def test_backup_refuses_an_existing_file_and_postgresql(tmp_path: Path, postgres_url: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    res = pbm(site, "init")
    assert res.returncode == 0, res.stderr
    target = tmp_path / "b.sqlite3"
    target.write_text("precious")
    res = pbm(site, "db", "backup", str(target))
    assert (res.returncode, res.stderr) == (1, f"Error: {target} exists: name a new file\n")
    assert target.read_text() == "precious"
    (site / "pbm.toml").write_text(f'[database]\nurl = "{postgres_url}"\n', encoding="utf-8")
    res = pbm(site, "db", "backup", str(tmp_path / "new.sqlite3"))
    assert res.returncode == 1
    assert res.stderr.endswith("is not SQLite: back it up with pg_dump\n")
    assert len(res.stderr.splitlines()) == 1
    assert not (tmp_path / "new.sqlite3").exists()
