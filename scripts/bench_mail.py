#!/usr/bin/env python3
"""Mail benchmark: concurrent players moving by mail against a real ``pbm serve``.

Sets up a fresh embedded site (SQLite file, Maildir outbox) in a temporary
folder with CLIENTS boards, starts ``pbm serve``, and lets CLIENTS SMTP
clients each play their own board move after move: a client mails its move
and waits until the board mail answering it has been written to the
Maildir, then sends the next. ``--mode reply`` (the default): the move alone,
to the board's reply-token address. ``--mode subject``: the classic
``accasta move B UID PW MOVE`` as the Subject, to the server's address, with
the password in every mail (checked with argon2id; remembered verifications
make the repeats cheap: the second p99 leaves each player's first mail out). Reported:

- moves/s over the whole run;
- server-side latency, from the mail accepted (the inbox row, committed
  before 250) to the reply written (the outbox row), p50/p99;
- client round trip, from the start of the SMTP transaction to the reply's
  file in the Maildir, p50/p99;
- reply written -> sent (the outbox row marked sent), p50/p99;
- CPU time per move, while the clients play, of the server process (listener
  and outbox sender), of its child processes (web site, computer) and of the clients, and
  how much of the machine's CPU time went unused meanwhile;
- beside it, in the same run, a no-op aiosmtpd server (answers 250 to
  everything) under the same clients: SMTP transactions/s and p50/p99.

The clients share the machine with the server, so they are kept light: every
mail is composed before the clock starts, and replies are noticed through
inotify (Linux; elsewhere by looking every 2 ms) and moved to cur/ as a mail
reader does. The machine's speed varies from run to run: compare runs made
one after the other, and the no-op line of the same run.

With ``--format both`` the same run plays a site whose players read HTML mail
(a picture of the board, the default) and one whose players chose plain text,
``--rounds`` pairs of them (4), each pair in the other order from the last:
runs one after the other on a shared machine differ by as much as a fifth
even when they are alike, so one pair says little and the median of the
pairs is the figure to quote: of 24 pairs (``--rounds 24``, some 17 minutes),
as medians of 8 pairs of the same code have been 11 points apart.
With ``--computer N`` the computer player is thinking meanwhile (level 5, a
minute a move) on N boards where it is to move. With ``--think S`` each client
waits S seconds on average before each move, as players do: the latencies at
a load a site sees, rather than at the most the server can carry.

Usage: .venv/bin/python scripts/bench_mail.py [--mode reply|subject] [--format html|text|both]
       [--rounds 4] [--clients 20] [--moves 25] [--computer 10] [--think 0.5]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import re
import select
import smtplib
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import SMTP as SMTP_POLICY
from email.utils import make_msgid
from pathlib import Path

import sqlalchemy as sa
from aiosmtpd.controller import Controller
from gauge import machine_gauge, speed_line

from pbm import config as config_mod
from pbm.games.accasta import ACCASTA
from pbm.mail.addresses import token_address
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site

ADDRESS = "pbm@bench.test"
PASSWORD = "correct-horse"


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def game_line(seed: int, length: int) -> list[str]:
    """A line of legal moves from the start that does not end the game."""
    rng = random.Random(seed)
    state = ACCASTA.new()
    out = []
    while len(out) < length:
        moves = state.legal_moves()
        rng.shuffle(moves)
        for m in moves:
            nxt, canonical = state.play(m)
            if nxt.outcome is None:
                state = nxt
                out.append(canonical)
                break
        else:
            break
    return out


@dataclass
class Watcher:
    """Finds reply files in the Maildir and wakes the client waiting for each."""

    new_dir: Path
    waiting: dict[str, threading.Event] = field(default_factory=dict)
    arrived: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def expect(self, message_id: str) -> threading.Event:
        ev = threading.Event()
        with self.lock:
            self.waiting[message_id] = ev
        return ev

    def run(self) -> None:
        # As a mail reader does, each reply is moved from new/ to cur/ once read,
        # so new/ holds only what has not been looked at yet. Arrivals are
        # announced by inotify (Linux), so the watcher takes no CPU from the
        # server while it waits; elsewhere it looks every 2 ms.
        for sub in ("new", "cur", "tmp"):
            (self.new_dir.parent / sub).mkdir(parents=True, exist_ok=True)
        notify = _inotify(self.new_dir)
        try:
            self._read(os.listdir(self.new_dir))
            while not self.stop.is_set():
                if notify is None:
                    time.sleep(0.002)
                    self._read(os.listdir(self.new_dir))
                elif select.select([notify], [], [], 0.2)[0]:
                    self._read(_names(os.read(notify, 65536)))
        finally:
            if notify is not None:
                os.close(notify)

    def _read(self, names: list[str]) -> None:
        pattern = re.compile(rb"^In-Reply-To:\s*(<[^>]+>)", re.M | re.I)
        cur_dir = self.new_dir.parent / "cur"
        for name in names:
            path = self.new_dir / name
            try:
                with open(path, "rb") as f:
                    head = f.read(4096)
                os.rename(path, cur_dir / f"{name}:2,S")
            except FileNotFoundError:
                continue
            m = pattern.search(head)
            if m is None:
                continue
            mid = m.group(1).decode()
            with self.lock:
                ev = self.waiting.pop(mid, None)
                self.arrived[mid] = time.time()
            if ev is not None:
                ev.set()


IN_MOVED_TO = 0x80  # inotify(7): a file was renamed into the watched directory


def _inotify(directory: Path) -> int | None:
    """An inotify descriptor watching files moved into ``directory``; None if unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, bytes(directory), IN_MOVED_TO) < 0:
            os.close(fd)
            return None
        return int(fd)
    except (AttributeError, OSError):
        return None


def _names(events: bytes) -> list[str]:
    """The file names in a buffer of ``struct inotify_event``s."""
    names, offset = [], 0
    while offset + 16 <= len(events):
        _wd, _mask, _cookie, size = struct.unpack_from("iIII", events, offset)
        raw = events[offset + 16 : offset + 16 + size]
        names.append(raw.rstrip(b"\0").decode(errors="surrogateescape"))
        offset += 16 + size
    return names


def command_mail(sender: str, to: str, subject: str, text: str) -> tuple[str, str, str, bytes]:
    """(sender, recipient, Message-ID, the mail as sent) for one command mail."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = mid = make_msgid(domain="players.test")
    msg.set_content(text)
    return sender, to, mid, msg.as_bytes(policy=SMTP_POLICY)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> list[int]:
    """The machine's CPU time so far by kind (Linux /proc/stat: user, nice, system, idle...)."""
    try:
        return [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return []


def child_pids(pid: int) -> list[int]:
    """The processes ``pid`` started (the web site's, the computer's)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def setup_site(
    root: Path, clients: int, mail_format: str, computer: int = 0
) -> tuple[config_mod.Config, list[tuple[int, str, str]]]:
    env = {**os.environ, "PBM_CONFIG": str(root / "pbm.toml"), "PBM_MAIL_ADDRESS": ADDRESS}
    subprocess.run(
        [sys.executable, "-m", "pbm", "init"], env=env, check=True, cwd=root, capture_output=True
    )
    cfg = config_mod.load(root / "pbm.toml", env={"PBM_MAIL_ADDRESS": ADDRESS})
    db = Database.open(cfg)
    site = Site(db, cfg)
    boards = []
    for i in range(clients):
        w, b = f"w{i}", f"b{i}"
        unit.run(site, Signup(w, PASSWORD, f"{w}@players.test", confirmed=True))
        unit.run(site, Signup(b, PASSWORD, f"{b}@players.test", confirmed=True))
        board = unit.run(site, Challenge("accasta", w, b, admin=True))[0].board
        assert board is not None
        boards.append((board, w, b))
    for i in range(computer):  # boards where the computer thinks, at level 5, meanwhile
        human = f"h{i}"
        unit.run(site, Signup(human, PASSWORD, f"{human}@players.test", confirmed=True))
        action = Challenge("accasta", human, "computer", admin=True, options={"level": "5"})
        board = unit.run(site, action)[0].board
        assert board is not None
        first = game_line(5000 + i, 1)[0]
        unit.run(site, Move(board, first), Who(human, ADMIN))
    with db.transaction() as s:  # the set-up mails are not part of the measurement
        s.execute(sa.text("UPDATE outbox SET status = 'sent'"))
        # The players' choice of mail (pbm player format): html, the default, or text.
        s.execute(sa.text("UPDATE players SET format = :f"), {"f": mail_format})
    db.close()
    return cfg, boards


def move_mail(
    mode: str, cfg: config_mod.Config, board: int, uid: str, move: str
) -> tuple[str, str, str, bytes]:
    """A player's move as ``mode`` writes it: a reply with the move, or the classic Subject."""
    sender = f"{uid}@players.test"
    if mode == "reply":
        to = token_address(ADDRESS, cfg.mail.secret, board, uid)
        return command_mail(sender, to, f"Re: Accasta Board {board}", f"{move}\n")
    return command_mail(sender, ADDRESS, f"accasta move {board} {uid} {PASSWORD} {move}", "")


def run_pbm(
    root: Path,
    cfg: config_mod.Config,
    boards: list[tuple[int, str, str]],
    moves: int,
    mode: str,
    think: float = 0.0,
) -> dict[str, float]:
    env = {
        **os.environ,
        "PBM_CONFIG": str(root / "pbm.toml"),
        "PBM_MAIL_ADDRESS": ADDRESS,
        "PBM_SMTP_LISTEN": "127.0.0.1:0",
        "PBM_WEB_LISTEN": "",
        # Every bench client is 127.0.0.1: no per-client rates.
        "PBM_SMTP_CONNECTIONS_PER_MINUTE": "0",
        "PBM_SMTP_MESSAGES_PER_MINUTE": "0",
        "PBM_SERVER_LOG_LEVEL": "WARNING",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbm", "serve"], env=env, cwd=root, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r":(\d+),", line)
    if m is None:
        proc.kill()
        raise SystemExit(f"pbm serve did not start: {line!r}")
    port = int(m.group(1))
    watcher = Watcher(cfg.maildir_path / "new")
    wt = threading.Thread(target=watcher.run, daemon=True)
    wt.start()
    round_trips: list[float] = []
    transactions: list[float] = []  # SMTP, from MAIL FROM to the 250 after the data
    errors: list[str] = []
    lock = threading.Lock()

    # Every mail is written before the clock starts: the clients share the
    # server's two cores, and what they spend composing mail is not the server's.
    scripts = [
        [
            move_mail(mode, cfg, board, white if ply % 2 == 0 else black, move)
            for ply, move in enumerate(game_line(1000 + i, moves))
        ]
        for i, (board, white, black) in enumerate(boards)
    ]

    def client(i: int, board: int, white: str, black: str) -> None:
        rng = random.Random(i)
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
            for ply, (sender, to, mid, raw) in enumerate(scripts[i]):
                if think:
                    time.sleep(rng.expovariate(1 / think))  # a player reading his mail
                ev = watcher.expect(mid)
                t0 = time.time()
                smtp.sendmail(sender, [to], raw)
                accepted = time.time()
                if not ev.wait(30):
                    with lock:
                        errors.append(f"board {board} move {ply + 1}: no reply")
                    return
                with lock:
                    round_trips.append(watcher.arrived[mid] - t0)
                    transactions.append(accepted - t0)

    threads = [threading.Thread(target=client, args=(i, *b)) for i, b in enumerate(boards)]
    # CPU is counted from here on: start-up (imports, the child processes' spawn) is not a move's.
    cpu = cpu_seconds(proc.pid)
    children = child_pids(proc.pid)
    children_cpu = sum(cpu_seconds(p) for p in children)
    machine = machine_cpu()
    t_start = time.perf_counter()
    own_cpu = time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t_start
    own_cpu = time.process_time() - own_cpu
    spent = [b - a for a, b in zip(machine, machine_cpu(), strict=False)]
    idle = (spent[3] + spent[4]) / sum(spent) * 100 if sum(spent[:5]) else float("nan")
    watcher.stop.set()
    cpu = cpu_seconds(proc.pid) - cpu
    children_cpu = sum(cpu_seconds(p) for p in children) - children_cpu
    proc.terminate()
    proc.wait(30)
    engine = sa.create_engine(cfg.database_url)
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "select i.received_at, min(o.created_at), i.message_id from inbox i join outbox o "
            "on o.in_reply_to = i.message_id group by i.id"
        ).all()
        applied = conn.exec_driver_sql("select count(*) from moves").scalar_one()
        sending = conn.exec_driver_sql(
            "select created_at, sent_at from outbox where sent_at is not null and "
            "in_reply_to is not null"
        ).all()
    engine.dispose()

    def seconds(v: object) -> float:
        if isinstance(v, str):
            from datetime import datetime

            return datetime.fromisoformat(v).timestamp()
        return v.timestamp()  # type: ignore[attr-defined,no-any-return]

    server_lat = [seconds(b) - seconds(a) for a, b, _ in rows]
    # Each player's first mail: in subject mode its password is verified cold (argon2id);
    # the later ones find the verification remembered.
    firsts = {mid for script in scripts for _, _, mid, _ in script[:2]}
    warm_lat = [seconds(b) - seconds(a) for a, b, mid in rows if mid not in firsts]
    # The reply's file in new/, as the client saw it, after its outbox row was written.
    to_maildir = [watcher.arrived[mid] - seconds(b) for _, b, mid in rows if mid in watcher.arrived]
    send_lat = [seconds(b) - seconds(a) for a, b in sending]
    if errors:
        print("errors:", *errors[:5], sep="\n  ")
    return {
        "moves": float(applied),
        "wall": wall,
        "rate": applied / wall,
        "srv_p50": pct(server_lat, 50) * 1000,
        "srv_p99": pct(server_lat, 99) * 1000,
        "warm_p99": pct(warm_lat, 99) * 1000,
        "rt_p50": pct(round_trips, 50) * 1000,
        "rt_p99": pct(round_trips, 99) * 1000,
        "rt_mean": statistics.fmean(round_trips) * 1000,
        "smtp_p50": pct(transactions, 50) * 1000,
        "smtp_p99": pct(transactions, 99) * 1000,
        "send_p50": pct(send_lat, 50) * 1000,
        "send_p99": pct(send_lat, 99) * 1000,
        "file_p50": pct(to_maildir, 50) * 1000,
        "file_p99": pct(to_maildir, 99) * 1000,
        "cpu_per_move": cpu / max(applied, 1) * 1000,
        "children_cpu_per_move": children_cpu / max(applied, 1) * 1000,
        "client_cpu_per_move": own_cpu / max(applied, 1) * 1000,
        "idle": idle,
    }


class _Noop:
    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        return "250 OK"


def run_noop(clients: int, moves: int) -> dict[str, float]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ctrl = Controller(_Noop(), hostname="127.0.0.1", port=port)
    ctrl.start()
    times: list[float] = []
    lock = threading.Lock()

    scripts = [
        [
            command_mail(f"c{i}@players.test", ADDRESS, "Re: Accasta Board 1", f"a1:C-d1 {n}\n")
            for n in range(moves)
        ]
        for i in range(clients)
    ]

    def client(i: int) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
            for sender, to, _, raw in scripts[i]:
                t0 = time.perf_counter()
                smtp.sendmail(sender, [to], raw)
                with lock:
                    times.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ctrl.stop()
    return {
        "rate": len(times) / wall,
        "p50": pct(times, 50) * 1000,
        "p99": pct(times, 99) * 1000,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--moves", type=int, default=25, help="moves per board")
    ap.add_argument(
        "--mode",
        choices=("reply", "subject"),
        default="reply",
        help="moves by reply (token address) or as the classic Subject with a password",
    )
    ap.add_argument(
        "--format",
        choices=("html", "text", "both"),
        default="html",
        help="the players' mail: with the board's picture (the default), plain text, or "
        "both, one site after the other in the same run",
    )
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds a client waits before each move (on average, exponentially): a load "
        "a site sees, not the most it can carry (0: as fast as it answers)",
    )
    ap.add_argument(
        "--computer",
        type=int,
        default=0,
        help="boards where the computer is thinking (level 5) while the clients play",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="with --format both: pairs of runs, each pair's order the other way round from "
        "the last (text then html, html then text, ...); the median of the pairs is reported",
    )
    args = ap.parse_args()
    formats = ("text", "html") if args.format == "both" else (args.format,)
    rounds = max(args.rounds, 1) if args.format == "both" else 1
    pairs: list[dict[str, dict[str, float]]] = []
    for number in range(rounds):
        # The machine's speed drifts from one run to the next, and the first run of a
        # pair is not like the second: each pair's order is the other way round.
        results: dict[str, dict[str, float]] = {}
        for mail_format in formats if number % 2 == 0 else formats[::-1]:
            with tempfile.TemporaryDirectory(prefix="pbm-bench-") as tmp:
                root = Path(tmp)
                cfg, boards = setup_site(root, args.clients, mail_format, args.computer)
                gauge = machine_gauge()
                r = run_pbm(root, cfg, boards, args.moves, args.mode, args.think)
                n = run_noop(args.clients, args.moves)
            results[mail_format] = r
            report(args, mail_format, r, n)
            print(f"  {speed_line(gauge)}")
        if len(results) == 2:
            pairs.append(results)
            compare(results, f"round {number + 1}, {' then '.join(results)}")
    if len(pairs) > 1:
        rates = [p["html"]["rate"] / p["text"]["rate"] * 100 - 100 for p in pairs]
        cpu = [
            p["html"]["children_cpu_per_move"]
            + p["html"]["cpu_per_move"]
            - p["text"]["children_cpu_per_move"]
            - p["text"]["cpu_per_move"]
            for p in pairs
        ]
        print(
            f"html against text over {len(pairs)} rounds: moves/s median "
            f"{statistics.median(rates):+.1f} % "
            f"(by round: {', '.join(f'{v:+.1f}' for v in rates)}), "
            f"CPU per move (server and its child processes) median {statistics.median(cpu):+.1f} ms"
        )


def compare(results: dict[str, dict[str, float]], label: str) -> None:
    """One pair of runs: html against text."""
    text, html = results["text"], results["html"]
    children = html["children_cpu_per_move"] - text["children_cpu_per_move"]
    server = html["cpu_per_move"] - text["cpu_per_move"]
    print(
        f"html against text ({label}): moves/s {html['rate'] / text['rate'] * 100 - 100:+.1f} %, "
        f"p99 {html['srv_p99'] / text['srv_p99'] * 100 - 100:+.1f} %, "
        f"round trip p50 {html['rt_p50'] / text['rt_p50'] * 100 - 100:+.1f} %, "
        f"p99 {html['rt_p99'] / text['rt_p99'] * 100 - 100:+.1f} %, "
        f"child processes' CPU per move {children:+.1f} ms, "
        f"server CPU per move {server:+.1f} ms"
    )


def report(
    args: argparse.Namespace, mail_format: str, r: dict[str, float], n: dict[str, float]
) -> None:
    print(
        f"pbm serve (SQLite + Maildir), {args.mode} mode, {mail_format} mail, {args.clients} "
        f"clients, {int(r['moves'])} moves in {r['wall']:.1f} s"
        + (f"; the computer thinking on {args.computer} boards" if args.computer else "")
    )
    print(f"  moves/s                         {r['rate']:8.1f}   (floor >= 40)")
    print(f"  accepted -> reply written  p50  {r['srv_p50']:8.1f} ms")
    print(f"  accepted -> reply written  p99  {r['srv_p99']:8.1f} ms   (floor < 2000)")
    print(f"    ... each player's first mail left out {r['warm_p99']:5.1f} ms")
    print(f"  reply written -> sent      p50  {r['send_p50']:8.1f} ms")
    print(f"  reply written -> sent      p99  {r['send_p99']:8.1f} ms")
    print(f"  reply written -> in Maildir p50 {r['file_p50']:8.1f} ms")
    print(f"  reply written -> in Maildir p99 {r['file_p99']:8.1f} ms")
    print(f"  server CPU per move             {r['cpu_per_move']:8.1f} ms   (listener, sender)")
    children = r["children_cpu_per_move"]
    print(f"  child processes' CPU per move   {children:8.1f} ms   (web, computer)")
    print(f"  clients' CPU per move           {r['client_cpu_per_move']:8.1f} ms")
    print(f"  the machine's CPUs idle         {r['idle']:8.1f} %")
    print(f"  SMTP transaction           p50  {r['smtp_p50']:8.1f} ms")
    print(f"  SMTP transaction           p99  {r['smtp_p99']:8.1f} ms")
    print(f"  client round trip          p50  {r['rt_p50']:8.1f} ms")
    print(f"  client round trip          p99  {r['rt_p99']:8.1f} ms")
    print(
        f"no-op aiosmtpd, same clients: {n['rate']:.1f} mails/s, "
        f"p50 {n['p50']:.1f} ms, p99 {n['p99']:.1f} ms per SMTP transaction"
    )


if __name__ == "__main__":
    main()
