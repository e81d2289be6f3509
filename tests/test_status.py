"""``pbm status``: the queues, and an exit status for monitoring.

On a real database (SQLite file and PostgreSQL) whose queues are filled
through the store's own operations, looked at with ``--now`` (no waiting for
time); and once against a real ``pbm serve`` whose relay refuses a reply for
good.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from conftest import T0
from mailserver import PbmServer, Sink, until
from test_cli_admin import Cli, empty_config

from pbm import version
from pbm.cli import main
from pbm.replies import Reply
from pbm.store import inbox, outbox
from pbm.store.engine import Database

WAIT = 15  # status.max_wait_minutes by default
HOURS = 24  # status.failed_within_hours by default


@pytest.fixture
def cli(tmp_path: Path, db_url: str) -> Cli:
    return Cli(empty_config(tmp_path), db_url)


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database.open(db_url)
    yield database
    database.close()


def status(
    cli: Cli, at: datetime, env: dict[str, str] | None = None
) -> tuple[int, dict[str, object]]:
    """``pbm status --json --now AT``: its exit status and what it said."""
    args = ["--config", str(cli.config_file), "status", "--json", "--now", at.isoformat()]
    result = CliRunner().invoke(
        main, args, env={"PBM_DATABASE_URL": str(cli.db_url), **(env or {})}
    )
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return result.exit_code, data


def receive(db: Database, at: datetime) -> None:
    mail = inbox.Received(b"Subject: help\r\n\r\n", "a@example.org", ["pbm@example.org"])
    with db.transaction() as s:
        inbox.add(s, [mail], at)


def reply(db: Database, at: datetime) -> int:
    with db.transaction() as s:
        [row] = outbox.enqueue(s, [Reply("a@example.org", "hello", "text")], "x", at, at)
    return row


def test_a_quiet_site_is_ok(cli: Cli, db_url: str) -> None:
    code, data = status(cli, T0)
    assert code == 0
    assert data["version"] == version()
    assert data["ok"] is True and data["problems"] == []
    assert data["inbox"] == {"waiting": 0, "oldest_waiting": None, "oldest_waiting_minutes": None}
    assert data["outbox"] == {
        "pending": 0,
        "retrying": 0,
        "failed": 0,
        "sent": 0,
        "oldest_pending": None,
        "oldest_pending_minutes": None,
    }
    assert data["failed_recently"] == 0
    text = cli("status", "--now", T0.isoformat()).stdout
    assert text.startswith(f"pbm {version()}\ndatabase: ")
    assert text.endswith("status: ok\n")


def test_mail_waiting_too_long_is_a_problem(cli: Cli, db: Database) -> None:
    receive(db, T0)
    receive(db, T0 + timedelta(minutes=3))
    code, data = status(cli, T0 + timedelta(minutes=WAIT))
    assert code == 0
    assert data["inbox"] == {
        "waiting": 2,
        "oldest_waiting": T0.isoformat(),
        "oldest_waiting_minutes": WAIT,
    }
    code, data = status(cli, T0 + timedelta(minutes=WAIT + 1))
    assert code == 1 and data["ok"] is False
    assert data["problems"] == [
        f"a received mail has waited {WAIT + 1} min to be acted on "
        f"(status.max_wait_minutes = {WAIT})"
    ]
    result = cli("status", "--now", (T0 + timedelta(minutes=WAIT + 1)).isoformat(), ok=False)
    assert result.exit_code == 1
    assert "inbox: 2 waiting, the oldest for 16 min\n" in result.stdout
    assert result.stdout.endswith(
        f"problem: {data['problems'][0]}\nstatus: PROBLEM\n"  # type: ignore[index]
    )
    # The limit is a config key (here through its variable).
    later = T0 + timedelta(minutes=WAIT + 1)
    assert status(cli, later, {"PBM_STATUS_MAX_WAIT_MINUTES": "60"})[0] == 0


def test_replies_unsent_too_long_and_failed_deliveries_are_problems(cli: Cli, db: Database) -> None:
    sent, retried, given_up = reply(db, T0), reply(db, T0), reply(db, T0)
    with db.transaction() as s:
        outbox.mark_sent(s, [sent], T0)
        outbox.record_failure(s, retried, "451 try later", T0 + timedelta(minutes=5))
        outbox.record_failure(s, given_up, "550 no such user", None)
    code, data = status(cli, T0 + timedelta(minutes=10))
    assert code == 1
    assert data["outbox"] == {
        "pending": 1,
        "retrying": 1,
        "failed": 1,
        "sent": 1,
        "oldest_pending": T0.isoformat(),
        "oldest_pending_minutes": 10,
    }
    assert data["failed_recently"] == 1
    assert data["problems"] == [
        f"1 reply(s) given up on in the last {HOURS} h (pbm outbox list --status failed)"
    ]
    # The retried one goes out; the failure is older than the window a day later.
    with db.transaction() as s:
        outbox.mark_sent(s, [retried], T0 + timedelta(minutes=11))
    code, data = status(cli, T0 + timedelta(hours=HOURS, minutes=1))
    assert (code, data["failed_recently"], data["problems"]) == (0, 0, [])
    # A reply that has waited longer than the limit to be sent (the relay is down).
    reply(db, T0 + timedelta(hours=HOURS))
    code, data = status(cli, T0 + timedelta(hours=HOURS, minutes=WAIT + 2))
    assert code == 1
    assert data["problems"] == [
        f"a reply has waited {WAIT + 2} min to be sent (status.max_wait_minutes = {WAIT})"
    ]


@pytest.mark.e2e
def test_status_of_a_running_server_whose_relay_refuses(tmp_path: Path, sink: Sink) -> None:
    server = PbmServer(tmp_path, sink_port=sink.port)
    server.start()
    try:
        assert json.loads(server.pbm("status", "--json"))["ok"] is True
        sink.fail.append("550 5.1.1 no such user")
        server.send("nobody@example.org", "help")

        def failed() -> bool:
            out = server.pbm("outbox", "list", "--status", "failed", "--json")
            return bool(json.loads(out))

        until(failed)
        res = server.pbm("status", check=False)
        assert "failed deliveries: 1 in the last 24 h\n" in res
        assert res.endswith("status: PROBLEM\n")
        code = _exit_code(server, "status")
        assert code == 1
    finally:
        server.stop()
    # Stopped: the database is still there to look at, and still says so.
    assert _exit_code(server, "status") == 1
    with sa.create_engine(f"sqlite:///{tmp_path / 'data' / 'pbm.sqlite3'}").connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM outbox WHERE status='failed'")).scalar()


def _exit_code(server: PbmServer, *args: str) -> int:
    return subprocess.run(
        [sys.executable, "-m", "pbm", *args],
        env=server.env(),
        cwd=server.root,
        capture_output=True,
        check=False,
        timeout=120,
    ).returncode
