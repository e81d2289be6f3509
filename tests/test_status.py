"""``pbm status``: the queues, and an exit status for monitoring.

On a real database (SQLite file and PostgreSQL) whose queues are filled
through the store's own operations, looked at with ``--now`` (no waiting for
time); and once against a real ``pbm serve`` whose relay refuses a reply for
good.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from conftest import T0
from mailserver import PbmServer, Sink, StartServer, free_port, status_of, until
from test_cli_admin import Cli

from pbm import version
from pbm.cli import main
from pbm.replies import Reply
from pbm.store import inbox, outbox
from pbm.store.engine import Database

WAIT = 15  # status.max_wait_minutes by default
HOURS = 24  # status.failed_within_hours by default


@pytest.fixture
def cli(tmp_path: Path, db_url: str) -> Cli:
    """The queues alone: no web site to look at (web.listen empty; see the web tests)."""
    config = tmp_path / "pbm.toml"
    config.write_text('[web]\nlisten = ""\n', encoding="utf-8")
    return Cli(config, db_url)


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
def test_status_of_a_running_server_whose_relay_refuses(
    tmp_path: Path, sink: Sink, start_server: StartServer
) -> None:
    server = start_server()
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


class _Site(BaseHTTPRequestHandler):
    """A web site that answers every GET with the status its server was made with."""

    def do_GET(self) -> None:
        code: int = self.server.answer  # type: ignore[attr-defined]
        self.send_response(code)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_dead_web_site_is_a_problem(cli: Cli) -> None:
    """Issue 35, case 13: with its web process killed, ``pbm status`` said ok. It asks the
    web site at web.listen now: no answer, or a 5xx, is a problem (exit status 1)."""
    nobody = free_port()
    code, data = status(cli, T0, {"PBM_WEB_LISTEN": f"127.0.0.1:{nobody}"})
    assert code == 1 and data["ok"] is False
    (problem,) = data["problems"]  # type: ignore[misc]
    assert problem.startswith(f"the web site does not answer at http://127.0.0.1:{nobody}/ (")
    assert cli("status", "--now", T0.isoformat()).exit_code == 0  # its config: no web site
    for answer, ok in ((200, True), (404, True), (503, False)):
        with ThreadingHTTPServer(("127.0.0.1", 0), _Site) as site:
            site.answer = answer  # type: ignore[attr-defined]
            threading.Thread(target=site.serve_forever, daemon=True).start()
            try:
                listen = f"127.0.0.1:{site.server_address[1]}"
                code, data = status(cli, T0, {"PBM_WEB_LISTEN": listen})
                assert data["ok"] is ok, data["problems"]
                if not ok:
                    assert data["problems"] == [f"the web site answers http://{listen}/ with 503"]
            finally:
                site.shutdown()


def web_children(server: PbmServer) -> list[int]:
    """The ``pbm web`` processes of a running ``pbm serve`` (one that ends while it is
    looked at is none)."""
    found = []
    for pid in server.worker_pids():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except FileNotFoundError:
            continue
        if "web" in command:
            found.append(pid)
    return found


def restarted(server: PbmServer, first: int) -> list[int]:
    """The ``pbm web`` processes once one other than ``first`` runs (as one look saw them:
    a process started a moment ago may not have its own command line yet)."""
    seen: list[int] = []

    def another() -> bool:
        seen[:] = web_children(server)
        return bool(seen) and seen != [first]

    until(another)
    return seen


@pytest.mark.e2e
def test_a_dead_web_process_stays_dead_no_more(start_server: StartServer) -> None:
    """Issue 35, case 13: after ``kill -9`` of the ``pbm web`` child it was not started
    again, nothing was logged, and ``pbm status`` said ok. Now it is started again and
    the log says so; and ``pbm status`` says when the site does not answer."""
    server = start_server(web=True)
    url = server.web_base + "/"
    (first,) = web_children(server)
    assert json.loads(server.pbm("status", "--json"))["ok"] is True
    os.kill(first, signal.SIGKILL)
    restarted(server, first)
    until(lambda: status_of(url) == 200)
    assert f"the web site (pid {first}) ended with signal 9 (SIGKILL); starting it again\n" in (
        server.log()
    )
    assert json.loads(server.pbm("status", "--json"))["ok"] is True
    server.stop()
    assert "Traceback" not in server.log()
    res = subprocess.run(
        [sys.executable, "-m", "pbm", "status"],
        env=server.env(),
        cwd=server.root,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert res.returncode == 1
    assert f"problem: the web site does not answer at {url} (" in res.stdout


@pytest.mark.e2e
def test_a_web_site_that_ends_quickly_again_is_retried_not_spun(
    sink: Sink, start_server: StartServer
) -> None:
    """Ended again soon after it was started again, ``pbm web`` is started after a wait
    that doubles, not at once; on the same socket (``pbm serve`` holds its port: no
    other program takes it meanwhile); the mail goes on meanwhile."""
    server = start_server(web=True)
    url = server.web_base + "/"
    (first,) = web_children(server)
    os.kill(first, signal.SIGKILL)
    (second,) = restarted(server, first)
    os.kill(second, signal.SIGKILL)
    until(lambda: "; starting it again in 1 s\n" in server.log())
    server.send("carol@example.org", "help")
    sink.wait_for("carol@example.org", "help")
    until(lambda: status_of(url) == 200)  # after the wait, on the port pbm serve kept
    server.stop()
    ends = [line for line in server.log().splitlines() if "ended with signal 9" in line]
    assert ends[0].endswith("; starting it again") and ends[1].endswith("again in 1 s")
