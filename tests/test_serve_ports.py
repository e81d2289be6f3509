"""Where ``pbm serve`` listens, and what a newcomer's first start does (issue 36, points 1
and 2): a port another program holds stops it with one line, the web site's as the
mail's; ``make serve SMTP=... WEB=...`` (the README's quick start, as written) and ``pbm
init --smtp-port/--web-port`` set the ports before the first start; board mails link to
the web site where it listens."""

from __future__ import annotations

import email
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest
from click.testing import CliRunner
from mailserver import PbmServer, _initialised_site, free_port, status_of, until

from pbm import config as config_mod
from pbm.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


@pytest.fixture
def taken() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def site(root: Path, **env: str) -> PbmServer:
    """A fresh embedded site in ``root`` (``pbm init`` done), not started."""
    server = PbmServer(root, extra_env=env)
    shutil.copytree(_initialised_site(), root, dirs_exist_ok=True)
    return server


def pbm(server: PbmServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pbm", *args],
        env=server.env(),
        cwd=server.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.e2e
def test_a_taken_web_port_stops_pbm_serve_as_a_taken_mail_port_does(
    tmp_path: Path, taken: int
) -> None:
    """Point 1: with ``web.listen`` on a port in use, ``pbm serve`` logged "web site on
    http://127.0.0.1:26080/", then ``[Errno 98] address already in use``, and the mail
    ran on, its links and log naming whatever held the port. Now it stops before it
    starts anything, with one line and exit status 1, as for a taken SMTP port."""
    mail_port = free_port()
    server = site(
        tmp_path, PBM_WEB_LISTEN=f"127.0.0.1:{taken}", PBM_SMTP_LISTEN=f"127.0.0.1:{mail_port}"
    )
    done = pbm(server, "serve")
    config = server.config_path.resolve()
    assert done.returncode == 1 and done.stdout == ""  # no "pbm serve: SMTP on ..." line
    assert done.stderr == (
        f"Error: cannot listen on 127.0.0.1:{taken} (web.listen): address already in use: "
        f"another program listens there; choose another web.listen in {config}\n"
    )
    # The mail's port, taken: the same kind of sentence.
    server.extra_env.update(
        PBM_WEB_LISTEN=f"127.0.0.1:{free_port()}", PBM_SMTP_LISTEN=f"127.0.0.1:{taken}"
    )
    done = pbm(server, "serve")
    assert done.returncode == 1 and done.stderr == (
        f"Error: cannot listen on 127.0.0.1:{taken} (smtp.listen): address already in use: "
        f"another program listens there; choose another smtp.listen in {config}\n"
    )
    # pbm web alone says it the same way.
    server.extra_env.update(PBM_WEB_LISTEN=f"127.0.0.1:{taken}")
    done = pbm(server, "web")
    assert done.returncode == 1 and done.stderr.startswith(
        f"Error: cannot listen on 127.0.0.1:{taken} (web.listen): address already in use"
    )


def test_init_writes_the_ports_it_is_given(tmp_path: Path) -> None:
    """Point 2: ``pbm init --smtp-port P --web-port Q`` writes them into the new config
    (as ``make serve SMTP=P WEB=Q`` asks it to), and says where mails link to."""
    path = tmp_path / "pbm.toml"
    env = {"PBM_DATABASE_URL": ""}
    args = ["--config", str(path), "init", "--smtp-port", "2626", "--web-port", "8181"]
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 0, result.output
    assert "web site: http://127.0.0.1:8181/ (web.listen); mails link to " in result.output
    text = path.read_text()
    assert '\nlisten = "127.0.0.1:2626"\n' in text and '\nlisten = "127.0.0.1:8181"\n' in text
    cfg = config_mod.load(path, env={})
    assert (cfg.smtp.listen, cfg.web.listen) == ("127.0.0.1:2626", "127.0.0.1:8181")
    assert cfg.web.base == "http://127.0.0.1:8181"  # base_url empty: where mails link to
    # A config that is there is kept as it is, and init says the ports were not written.
    again = CliRunner().invoke(main, [*args[:-1], "9191"], env=env)
    assert again.exit_code == 0 and "(kept)" in again.output
    assert "--smtp-port and --web-port not written" in again.output
    assert path.read_text() == text


def quick_start_line() -> str:
    """The README's quick start: its ``make serve`` line, as written."""
    section = README.read_text(encoding="utf-8").split("## Quick start", 1)[1]
    block = re.findall(r"```sh\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)[0]
    (line,) = [x for x in block.splitlines() if x.startswith("make serve")]
    return line.split("#", 1)[0].strip()


@pytest.mark.e2e
def test_make_serve_sets_the_ports_before_the_first_start(tmp_path: Path) -> None:
    """Point 2: ``make serve`` wrote ./pbm.toml and listened on 2525 and 8080 at once, and
    the README sent a newcomer to config/pbm.toml (the template) to change them. The
    README's quick start now names the ports (``make serve SMTP=2525 WEB=8080``): run as
    written with two free ports, the first start listens there and writes them into this
    folder's pbm.toml, and board mails link to the web site there."""
    line = quick_start_line()
    assert re.fullmatch(r"make serve SMTP=2525 WEB=8080", line), line
    smtp, web = free_port(), free_port()
    args = line.replace("2525", str(smtp)).replace("8080", str(web)).split()
    venv = Path(sys.executable).parent.parent
    # The Makefile of this tree in a folder of its own, on this test's installation
    # (``-o install``: nothing installed again).
    command = ["make", "-s", "-f", str(ROOT / "Makefile"), "-o", "install", *args[1:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBM_")}
    env["PBM_OUTBOUND_POLL_SECONDS"] = "0.2"  # the CLI's mail sent within 0.2 s
    make = subprocess.Popen(
        [*command, f"VENV={venv}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # make and the pbm serve it runs: stopped together
    )
    try:
        assert make.stdout is not None
        lines = [make.stdout.readline()]  # pbm init's lines, then pbm serve's first
        while lines[-1] and not lines[-1].startswith("pbm serve:"):
            lines.append(make.stdout.readline())
        assert lines[-1] == f"pbm serve: SMTP on 127.0.0.1:{smtp}, mail for pbm@localhost\n"
        assert f"web site: http://127.0.0.1:{web}/ (web.listen)" in "".join(lines)
        text = (tmp_path / "pbm.toml").read_text()
        assert f'\nlisten = "127.0.0.1:{smtp}"\n' in text
        assert f'\nlisten = "127.0.0.1:{web}"\n' in text
        until(lambda: status_of(f"http://127.0.0.1:{web}/") == 200, timeout=60)
        cli = [str(venv / "bin" / "pbm"), "--config", "pbm.toml"]
        for uid in ("alice", "bob"):
            add = [*cli, "player", "add", uid, f"{uid}@example.org", "--password", "pw"]
            subprocess.run(add, cwd=tmp_path, env=env, check=True, capture_output=True)
        create = [*cli, "game", "create", "accasta", "alice", "bob"]
        subprocess.run(create, cwd=tmp_path, env=env, check=True, capture_output=True)
        link = f"On the web: http://127.0.0.1:{web}/boards/1"
        sent = tmp_path / "data" / "outbox" / "new"
        until(lambda: any(link in _text(m) for m in sent.glob("*")), timeout=60)
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.communicate(timeout=60)


def _text(mail: Path) -> str:
    """The text of a mail file as its reader sees it."""
    msg = email.message_from_bytes(mail.read_bytes(), policy=default)
    assert isinstance(msg, EmailMessage)
    part = msg.get_body(("plain",))
    return "" if part is None else str(part.get_content())
