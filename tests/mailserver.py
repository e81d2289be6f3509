"""End-to-end harness: a real ``pbm serve`` process, a real SMTP sink, real SMTP clients.

``PbmServer`` writes a config into a temporary folder, runs ``pbm init`` (once per
test session for the embedded default, whose result is then copied) and
``pbm serve`` as processes of their own (``pbm serve`` forked from a process
that imported pbm once), and learns where it listens (a loopback port, or a
unix socket for LMTP behind a mail server) from the server's first line.
The admin's commands beside it (``PbmServer.pbm``) run in the test process.
``Sink`` is an aiosmtpd server the test starts: the relay the server delivers
its replies to. Waiting is for events (a mail arriving), polled with a
deadline; nothing sleeps to let time pass.
"""

from __future__ import annotations

import atexit
import contextlib
import email
import functools
import multiprocessing
import multiprocessing.process
import os
import queue
import re
import shutil
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import make_msgid
from pathlib import Path
from typing import Any, Protocol

from aiosmtpd.controller import Controller
from click.testing import CliRunner

from pbm import cli, games

SERVER_ADDRESS = "pbm@pbm.test"
WAIT = 30.0  # seconds: a deadline for things that should happen at once


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class _SinkHandler:
    def __init__(self, inbox: queue.Queue[EmailMessage], fail: list[str], refuse: set[str]) -> None:
        self.inbox = inbox
        self.fail = fail
        self.refuse = refuse

    async def handle_MAIL(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if "SMTPUTF8" in (o.upper() for o in options):
            # A relay without SMTPUTF8 (RFC 6531 3.5): a non-ASCII address cannot pass.
            return "553 5.6.7 SMTPUTF8 is not supported here"
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address.lower() in self.refuse:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.fail:
            return self.fail[0]
        msg = email.message_from_bytes(envelope.original_content, policy=default_policy)
        assert isinstance(msg, EmailMessage)
        msg["X-Envelope-From"] = envelope.mail_from  # the return path pbm gave it (VERP)
        for rcpt in envelope.rcpt_tos:
            del msg["X-Envelope-To"]
            msg["X-Envelope-To"] = rcpt
            self.inbox.put(msg)
        return "250 OK"


@dataclass
class Sink:
    """The relay pbm delivers to: collects every mail; can be told to refuse them all
    (``fail``: the reply to DATA) or some recipients (``refuse``: 550 at RCPT).

    It takes no SMTPUTF8 mail: a non-ASCII address cannot be delivered through it."""

    port: int = field(default_factory=free_port)
    inbox: queue.Queue[EmailMessage] = field(default_factory=queue.Queue)
    fail: list[str] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)  # recipients refused at RCPT (550)
    kept: list[EmailMessage] = field(default_factory=list)
    controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(
            _SinkHandler(self.inbox, self.fail, self.refuse),
            hostname="127.0.0.1",
            port=self.port,
            decode_data=False,
        )
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def wait_for(
        self, to: str, subject: str | re.Pattern[str] = "", timeout: float = WAIT
    ) -> EmailMessage:
        """The first mail to ``to`` whose subject contains ``subject`` (or matches it)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, msg in enumerate(self.kept):
                if _matches(msg, to, subject):
                    return self.kept.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                got = [(m["X-Envelope-To"], about(m)) for m in self.kept]
                raise AssertionError(f"no mail to {to} about {subject!r}; have {got}")
            with contextlib.suppress(queue.Empty):
                self.kept.append(self.inbox.get(timeout=min(left, 0.5)))

    def drain(self) -> list[EmailMessage]:
        """Everything received so far (and not yet taken)."""
        while True:
            try:
                self.kept.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        out, self.kept = self.kept, []
        return out


def in_thread(msg: EmailMessage) -> bool:
    """Whether ``msg`` is in a game's thread: the board's subject, its own on line one."""
    subj = str(msg["Subject"] or "")
    return " Board " in subj and ": " in subj and " vs " in subj


def about(msg: EmailMessage) -> str:
    """What a mail is about: its subject, and for a mail in a game's thread (whose subject
    is the board's) the first line of its body, which says what this one is."""
    subj = str(msg["Subject"] or "")
    if in_thread(msg):
        first = (full_body_of(msg).splitlines() or [""])[0]
        return f"{subj} | {first}"
    return subj


def _matches(msg: EmailMessage, to: str, subject: str | re.Pattern[str]) -> bool:
    if str(msg["X-Envelope-To"]).lower() != to.lower():
        return False
    subj = about(msg)
    if isinstance(subject, re.Pattern):
        return subject.search(subj) is not None
    return subject in subj


def full_body_of(msg: EmailMessage) -> str:
    part = msg.get_body(("plain",))
    assert part is not None
    content: str = part.get_content()  # type: ignore[attr-defined]
    return content


def body_of(msg: EmailMessage) -> str:
    """The text a mail was written with: in a game's thread, without the first line (what
    it is about, ``about``) and the blank line after it."""
    content = full_body_of(msg)
    if in_thread(msg):
        return content.split("\n", 2)[2] if content.count("\n") >= 2 else ""
    return content


@functools.cache
def _initialised_site() -> Path:
    """A site ``pbm init`` made on the embedded default (a config with relative paths
    and a migrated SQLite file), once per test session: running ``pbm init`` for
    every end-to-end test costs seconds each, copying it does not."""
    made = Path(tempfile.mkdtemp(prefix="pbm-site-"))
    atexit.register(shutil.rmtree, made, True)
    env = dict(os.environ, PBM_CONFIG=str(made / "pbm.toml"), PBM_DATABASE_URL="")
    subprocess.run(
        [sys.executable, "-m", "pbm", "init"],
        env=env,
        cwd=made,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return made


# Each ``pbm serve`` is forked from a process that has imported pbm once (multiprocessing's
# fork server, one per test worker), then runs as ``pbm serve`` does: a process of its own,
# with its environment and folder. A fresh interpreter spends most of a second of CPU
# importing pbm, and the suite starts some hundred servers. (The fork server does not take
# the tests' folder onto its path in Python 3.11, so what it preloads is found without it.)
_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["pbm.cli", "aiosmtpd.controller", "click.testing"])
SERVE_OUT = "serve.out"  # the server's standard output: its first line says where it listens


def serve_here(env: dict[str, str], root: str) -> None:
    """In the forked process: ``pbm serve`` in ``root`` with ``env``, as its command line
    runs it; standard output to ``SERVE_OUT``, the log (standard error) to serve.log."""
    os.chdir(root)
    os.environ.clear()
    os.environ.update(env)
    for fd, name, flags in ((1, SERVE_OUT, os.O_TRUNC), (2, "serve.log", os.O_APPEND)):
        opened = os.open(name, os.O_WRONLY | os.O_CREAT | flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    if "PYTHONPATH" in env:  # as a fresh interpreter takes it: first on the path
        sys.path[:0] = env["PYTHONPATH"].split(os.pathsep)
        games.registry.cache_clear()  # the games installed there too
    sys.argv = ["pbm", "serve"]
    cli.run()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


@dataclass
class PbmServer:
    """A ``pbm serve`` process with its own config, data folder and database."""

    root: Path
    database_url: str = ""
    sink_port: int | None = None
    transport: str = "smtp"
    extra_env: dict[str, str] = field(default_factory=dict)
    proc: multiprocessing.process.BaseProcess | None = None
    port: int | None = None
    protocol: str = "smtp"  # or "lmtp" (smtp.protocol)
    listen: str = "127.0.0.1:0"  # smtp.listen: a loopback port, or "unix:/PATH"
    socket_path: Path | None = None  # where it listens when that is a unix socket
    web: bool = False  # its web site too, on a loopback port of its own (``web_base``)
    web_base: str = ""  # the web site's address once started: "http://127.0.0.1:PORT"

    @property
    def config_path(self) -> Path:
        return self.root / "pbm.toml"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "PBM_CONFIG": str(self.config_path),
                "PBM_MAIL_ADDRESS": SERVER_ADDRESS,
                "PBM_DATABASE_URL": self.database_url,
                "PBM_SMTP_PROTOCOL": self.protocol,
                "PBM_SMTP_LISTEN": self.listen,
                "PBM_WEB_LISTEN": self.web_base.removeprefix("http://"),
                "PBM_OUTBOUND_TRANSPORT": self.transport,
                "PBM_OUTBOUND_SMTP_HOST": "127.0.0.1",
                "PBM_OUTBOUND_SMTP_PORT": str(self.sink_port or 1),
                "PBM_OUTBOUND_RETRY_BASE_SECONDS": "0.2",
                # `pbm tick` and other CLI commands queue mail without waking the
                # server's sender: it looks every 0.2 s rather than every 10 s.
                "PBM_OUTBOUND_POLL_SECONDS": "0.2",
                "PBM_SERVER_LOG_LEVEL": "INFO",
                # Every test client is 127.0.0.1, and a correspondence of many mails
                # is no flood: the per-client rates (tests/test_listener.py) are off
                # (0) unless a test sets them in extra_env.
                "PBM_SMTP_CONNECTIONS_PER_MINUTE": "0",
                "PBM_SMTP_MESSAGES_PER_MINUTE": "0",
                # A game's story challenges one player more than once an hour: the
                # hourly bound on challenge mails (tests/test_open_internet.py) is lifted
                # unless a test sets it in extra_env.
                "PBM_LIMITS_CHALLENGE_MAILS_PER_HOUR": "100",
            }
        )
        env.update(self.extra_env)
        return env

    def pbm(self, *args: str, input: str | None = None, check: bool = True) -> str:
        """Run a ``pbm`` CLI command against this server's config; its stdout.

        In this process, through click's ``CliRunner``, as ``tests/test_cli_admin.py``
        does: an admin's command beside the running server, without the second or so
        of CPU a fresh interpreter takes to import pbm (the suite runs some fifty).
        What only a process shows (exit codes, the config search, stderr of a real
        ``pbm``) is ``tests/test_cli_faults.py``'s. A server whose ``PYTHONPATH`` adds
        to what Python finds (a game installed for the test) has its commands run as
        processes, which see it.
        """
        if "PYTHONPATH" in self.extra_env:
            proc = subprocess.run(
                [sys.executable, "-m", "pbm", *args],
                env=self.env(),
                input=input,
                capture_output=True,
                text=True,
                timeout=120,
                cwd=self.root,
            )
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:
            with contextlib.chdir(self.root):
                res = CliRunner().invoke(cli.main, list(args), input=input, env=self.env())
            code, out, err = res.exit_code, res.stdout, res.stderr
        if check and code != 0:
            raise AssertionError(f"pbm {' '.join(args)} failed: {err}{out}")
        return out

    def start(self) -> None:
        if not self.config_path.exists():
            if self.database_url or "PBM_SERVER_DATA_DIR" in self.extra_env:
                self.pbm("init")
            else:
                shutil.copytree(_initialised_site(), self.root, dirs_exist_ok=True)
        if self.web and not self.web_base:
            self.web_base = f"http://127.0.0.1:{free_port()}"
        out = self.root / SERVE_OUT
        out.unlink(missing_ok=True)
        self.proc = proc = _FORKS.Process(target=serve_here, args=(self.env(), str(self.root)))
        proc.start()
        until(lambda: "\n" in _read(out) or not proc.is_alive())
        line = _read(out).partition("\n")[0]
        m = LISTENING.search(line)
        if m is None:
            self.stop()
            raise AssertionError(f"pbm serve did not start: {line!r}\n{self.log()}")
        if m["path"] is not None:
            self.port, self.socket_path = None, Path(m["path"])
        else:
            self.port, self.socket_path = int(m["port"]), None
        if self.web:  # a process of its own: up a moment after the mail
            try:
                until(lambda: status_of(self.web_base + "/") == 200)
            except AssertionError:
                raise AssertionError(f"the web site did not start:\n{self.log()}") from None

    def log(self) -> str:
        p = self.root / "serve.log"
        return p.read_text() if p.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the server and wait for it to end; its exit code (-N: killed by N)."""
        assert self.proc is not None and self.proc.pid is not None
        proc, self.proc = self.proc, None
        if proc.is_alive():
            os.kill(proc.pid, sig)
        proc.join(timeout=30)
        code = proc.exitcode
        if code is None:
            raise AssertionError(f"pbm serve did not stop in 30 s after signal {sig}")
        proc.close()
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def worker_pids(self) -> list[int]:
        """The processes the running server started (its inbox workers), from /proc."""
        assert self.proc is not None
        return children(self.proc.pid)

    # -- talking to it as a mail client

    def smtp(self) -> smtplib.SMTP:
        """A client of the running server, in the protocol it speaks (SMTP or LMTP)."""
        if self.protocol == "lmtp":
            return self.lmtp()
        assert self.port is not None
        return smtplib.SMTP("127.0.0.1", self.port, timeout=WAIT)

    def lmtp(self) -> smtplib.LMTP:
        """An LMTP client of the running server, on its unix socket or its port.

        smtplib reads one reply after DATA (bpo-32803): ``sendmail`` is right for
        one recipient; for more, read the per-recipient replies with ``getreply``.
        """
        if self.socket_path is not None:
            return smtplib.LMTP(str(self.socket_path), timeout=WAIT)
        assert self.port is not None
        return smtplib.LMTP("127.0.0.1", self.port, timeout=WAIT)

    def send(
        self,
        sender: str,
        subject: str = "",
        body: str = "",
        *,
        to: str = SERVER_ADDRESS,
        headers: dict[str, str] | None = None,
        message_id: str | None = None,
    ) -> str:
        """Send a plain-text mail; returns its Message-ID."""
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = to
        msg["Subject"] = subject
        msg["Message-ID"] = message_id or make_msgid(domain="client.test")
        for k, v in (headers or {}).items():
            msg[k] = v
        msg.set_content(body or "\n")
        self.send_message(msg, sender, to)
        return str(msg["Message-ID"])

    def send_message(self, msg: EmailMessage | bytes, mail_from: str, to: str) -> None:
        with self.smtp() as s:
            if isinstance(msg, bytes):
                s.sendmail(mail_from, [to], msg)
            else:
                s.send_message(msg, mail_from, [to])


# The server's first line: "pbm serve: SMTP on 127.0.0.1:PORT, mail for ..." (or LMTP),
# or "pbm serve: LMTP on unix:/PATH, mail for ...".
LISTENING = re.compile(
    r"(?P<protocol>SMTP|LMTP) on (?:unix:(?P<path>.+?)|\[?[\w.:]+?\]?:(?P<port>\d+)), mail for "
)


class StartServer(Protocol):
    """The ``start_server`` fixture: a started ``PbmServer``, stopped when the test ends."""

    def __call__(self, root: Path | None = None, *, web: bool = False, **env: str) -> PbmServer: ...


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def status_of(url: str) -> int:
    """The HTTP status a GET of ``url`` answers with; 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


def reply_to(msg: EmailMessage) -> str:
    """The Reply-To address of a board mail."""
    value = str(msg["Reply-To"] or "")
    m = re.search(r"[^<\s]+@[^>\s]+", value)
    assert m is not None, f"no Reply-To in {msg['Subject']}"
    return m.group(0)


def board_number(msg: EmailMessage) -> int:
    m = re.search(r"Board (\d+)", str(msg["Subject"]))
    assert m is not None, msg["Subject"]
    return int(m.group(1))


def until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    """Poll ``predicate`` until it holds (an event, not a delay)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def sign_up(server: PbmServer, sink: Sink, uid: str, addr: str, pw: str) -> EmailMessage:
    """Sign ``uid`` up from ``addr`` and confirm it by replying as a mail client does.

    Returns the welcome mail.
    """
    server.send(addr, f"signup {uid} {pw}")
    ask = sink.wait_for(addr, f"confirm your account {uid}")
    server.send(addr, f"Re: {ask['Subject']}", "Yes, that was me.\n", to=reply_to(ask))
    return sink.wait_for(addr, f"Welcome to pbm, {uid}")


def challenge_accepted(
    server: PbmServer, sink: Sink, challenger: str, command: str, opponent: str
) -> EmailMessage:
    """Mail ``command`` (a challenge) from ``challenger`` and accept it from ``opponent``
    by replying to the challenge, as a mail client does.

    Returns the first board mail ``challenger`` gets (the board has started).
    """
    server.send(challenger, command)
    sink.wait_for(challenger, re.compile(r"Board \d+ - challenge sent"))
    ask = sink.wait_for(opponent, re.compile(r"Board \d+ - challenge from"))
    server.send(opponent, f"Re: {ask['Subject']}", "accept\n", to=reply_to(ask))
    return sink.wait_for(challenger, re.compile(r"Board \d+ - \w+ to move"))


def maildir_mail(root: Path, to: str, words: str, timeout: float = WAIT) -> EmailMessage:
    """The newest mail to ``to`` whose subject has ``words`` in the outbox Maildir of the
    site in ``root`` (its transport ``maildir``), once it is there."""
    new = root / "data" / "outbox" / "new"
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for path in sorted(new.glob("*")) if new.is_dir() else []:
            msg = email.message_from_bytes(path.read_bytes(), policy=default_policy)
            assert isinstance(msg, EmailMessage)
            if msg["To"] == to and words in about(msg):
                found.append((path.stat().st_mtime_ns, msg))
        if found:
            return max(found, key=lambda f: f[0])[1]
        if time.monotonic() > deadline:
            raise AssertionError(f"no mail to {to} about {words!r} in {new}")
        time.sleep(0.02)


def answer(server: PbmServer, sender: str, prev: EmailMessage, text: str) -> None:
    """``sender`` presses Reply on ``prev`` and writes ``text`` above the quote, as a mail
    client does: to its Reply-To, ``Re:`` subject, In-Reply-To and References."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = reply_to(prev)
    msg["Subject"] = f"Re: {prev['Subject']}"
    msg["Message-ID"] = make_msgid(domain="client.test")
    msg["In-Reply-To"] = str(prev["Message-ID"])
    msg["References"] = str(prev["Message-ID"])
    quoted = "\n".join("> " + line for line in body_of(prev).splitlines())
    msg.set_content(f"{text}\n\nOn Sunday, pbm wrote:\n{quoted}\n")
    server.send_message(msg, sender, str(msg["To"]))
