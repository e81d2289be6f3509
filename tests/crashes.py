"""A crash trial: moves by mail over two ``pbm serve`` instances on one PostgreSQL database,
one of them killed with SIGKILL at random points and started again, and every mail
counted against what the database says was accepted.

Used by ``tests/test_e2e_crash.py`` (one short run) and ``scripts/crash_trial.py``
(the issue's ten runs of 200 moves). Both instances deliver into one Maildir,
as two instances of one site share their outbound way: a mail sent again
after a crash (at least once) is found there by its Message-ID and not
delivered twice.
"""

from __future__ import annotations

import random
import re
import smtplib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

import sqlalchemy as sa
from mailserver import PbmServer

import pbm.games
from pbm.config import Config, DatabaseConfig
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")
SECRET = {"PBM_MAIL_SECRET": "one-secret-for-the-site"}


@dataclass
class Trial:
    """What one run found."""

    moves_sent: int = 0
    moves_applied: int = 0
    kills: int = 0
    outbox_rows: int = 0
    mails_in_maildir: int = 0
    missing: list[str] = field(default_factory=list)  # outbox rows with no mail
    doubled: list[str] = field(default_factory=list)  # Message-IDs delivered twice
    not_sent: list[tuple[int, str]] = field(default_factory=list)  # rows left unsent
    sent_again: int = 0  # sends begun anew after a sender died (at least once)
    moves_without_mail: list[tuple[int, int]] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return not (self.missing or self.doubled or self.not_sent or self.moves_without_mail)


def _query(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.exec_driver_sql(sql).all()]
    finally:
        engine.dispose()


def _plies(url: str) -> dict[int, int]:
    return {int(b): int(p) for b, p in _query(url, "select board, ply from games")}


def _send(servers: list[PbmServer], sender: str, text: str, mid: str, rng: random.Random) -> None:
    """Send one command mail as a real mail server would: to an instance that answers,
    again (the same Message-ID) until one has taken it with a 250."""
    deadline = time.monotonic() + 60
    while True:
        server = rng.choice(servers)
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = "pbm@pbm.test"
        msg["Subject"] = text
        msg["Message-ID"] = mid
        msg.set_content("\n")
        try:
            if server.proc is None or server.port is None:
                raise OSError("down")
            with smtplib.SMTP("127.0.0.1", server.port, timeout=10) as client:
                client.send_message(msg, sender, ["pbm@pbm.test"])
            return
        except (OSError, smtplib.SMTPException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def run_trial(
    root: Path,
    url: str,
    *,
    moves: int = 200,
    boards: int = 10,
    seed: int = 1,
    kill_every: float = 2.0,
    down: float = 1.5,
) -> Trial:
    """``moves`` moves over ``boards`` boards, one instance killed about every
    ``kill_every`` seconds and started again ``down`` seconds later; what was found."""
    rng = random.Random(seed)
    maildir = root / "maildir"
    env = {
        **SECRET,
        "PBM_OUTBOUND_TRANSPORT": "maildir",
        "PBM_OUTBOUND_MAILDIR": str(maildir),
        "PBM_OUTBOUND_RETRY_BASE_SECONDS": "0.2",
    }
    servers = [
        PbmServer(root / name, url, extra_env=dict(env), transport="maildir") for name in "ab"
    ]
    for server in servers:
        server.root.mkdir(parents=True, exist_ok=True)
        server.start()
    _boards(url, boards)
    numbers = sorted(_plies(url))
    states = {b: ACCASTA.new() for b in numbers}
    trial = Trial()
    stop = threading.Event()
    lock = threading.Lock()

    def killer() -> None:
        while not stop.wait(rng.uniform(0.5, 2 * kill_every)):
            victim = rng.choice(servers)
            with lock:
                if victim.proc is None:
                    continue
                victim.kill()
                trial.kills += 1
            time.sleep(down)  # meanwhile the mail goes to the other instance
            with lock:
                victim.start()

    chaos = threading.Thread(target=killer, daemon=True)
    chaos.start()
    try:
        sent = 0
        while sent < moves and any(states[b].outcome is None for b in numbers):
            for board in numbers:
                state = states[board]
                legal = state.legal_moves() if state.outcome is None else []
                if sent >= moves or not legal:
                    continue  # a game over (random moves end some) takes no more
                move = legal[rng.randrange(len(legal))]
                i = numbers.index(board)
                uid = f"w{i}" if state.ply % 2 == 0 else f"b{i}"
                number = state.ply + 1
                _send(
                    servers,
                    f"{uid}@example.org",
                    f"accasta move {board} {uid} pw-{uid} {move}#{number}",
                    f"<{board}.{number}.{seed}@client.test>",
                    rng,
                )
                states[board] = state.play(move)[0]
                sent += 1
            # Each board's next move waits until this one is applied, as a player's would.
            _until(lambda: all(_plies(url)[b] == states[b].ply for b in numbers), 120)
        trial.moves_sent = sent
    finally:
        stop.set()
        chaos.join()
        with lock:
            for server in servers:
                if server.proc is None:
                    server.start()
    _until(
        lambda: _query(url, "select count(*) from outbox where status = 'pending'") == [(0,)],
        120,
    )
    for server in servers:
        server.stop()
    trial.sent_again = sum(
        s.log().count("sending again, its outcome never written") for s in servers
    )
    return _count(url, maildir, trial)


def _boards(url: str, count: int) -> None:
    """Players w0/b0, w1/b1... and a board for each pair, started by the admin."""
    db = Database.open(url)
    site = Site(db, Config(database=DatabaseConfig(url=url)))
    try:
        for i in range(count):
            for uid in (f"w{i}", f"b{i}"):
                unit.run(site, Signup(uid, f"pw-{uid}", f"{uid}@example.org", confirmed=True))
            unit.run(site, Challenge("accasta", f"w{i}", f"b{i}", admin=True))
    finally:
        db.close()


def _until(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the trial did not settle in time")
        time.sleep(0.1)


def _count(url: str, maildir: Path, trial: Trial) -> Trial:
    """Every outbox row against the Maildir, and every applied move against its mails."""
    rows = _query(url, "select id, message_id, status, board, body from outbox")
    trial.outbox_rows = len(rows)
    files = [p.name.split(":")[0] for sub in ("new", "cur") for p in (maildir / sub).glob("*")]
    trial.mails_in_maildir = len(files)
    delivered: dict[str, int] = {}
    for name in files:
        delivered[name] = delivered.get(name, 0) + 1
    trial.doubled = [name for name, n in delivered.items() if n > 1]
    for _, mid, _, _, _ in rows:
        name = re.sub(r"[^A-Za-z0-9.@_=+-]", "_", str(mid).strip("<>"))
        if name not in delivered:
            trial.missing.append(str(mid))
    trial.not_sent = [(int(i), str(s)) for i, _, s, _, _ in rows if s != "sent"]
    applied = _query(url, "select board, ply from moves")
    trial.moves_applied = len(applied)
    mailed = {
        (int(b), int(n))
        for _, _, _, b, body in rows
        if b is not None
        for n in re.findall(r"^Move (\d+), ", str(body), re.MULTILINE)
    }
    trial.moves_without_mail = sorted(
        (int(b), int(p)) for b, p in applied if (int(b), int(p)) not in mailed
    )
    return trial
