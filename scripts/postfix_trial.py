"""docs/deploying.md followed on this machine: Postfix on loopback hands pbm@pbm.test to pbm.

Run as root on a Debian machine (it changes the system: it installs Postfix,
adds the users pbm and vmail, installs pbm into /opt/pbm, writes
/etc/pbm/pbm.toml and Postfix's main.cf, and starts each run from an empty
site in /var/lib/pbm; run it on a machine meant for it, never on a real site):

    python3 scripts/postfix_trial.py [--socket]

The steps are the document's: pbm as user pbm with the ExecStart line of
contrib/pbm.service (systemd itself does not run here), Postfix with
``recipient_delimiter = +`` and a ``transport_maps`` entry that hands the
domain pbm.test to pbm over LMTP (TCP on 127.0.0.1:2424, or with --socket a
unix socket inside Postfix's chroot), pbm's replies relayed by the same
Postfix to the players' domain players.test (Maildirs in /var/mail/vhosts).
Then mail goes in with sendmail as a player's mail client would send it:
alice and bob sign up and confirm by reply, alice challenges bob, bob accepts
by reply and alice moves by reply. Every step waits for the mail it expects
(a deadline, no sleeping). At the end pbm status runs and pbm serve is
stopped; Postfix is left running (``postfix stop`` stops it).
"""

from __future__ import annotations

import argparse
import email
import email.policy
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path("/opt/pbm")
CONFIG = Path("/etc/pbm/pbm.toml")
DATA = Path("/var/lib/pbm")
MAILBOXES = Path("/var/mail/vhosts/players.test")
DOMAIN, PLAYERS = "pbm.test", "players.test"
LMTP_TCP = "127.0.0.1:2424"
SOCKET_DIR = Path("/var/spool/postfix/pbm")  # inside the chroot of Postfix's lmtp client
WAIT = 60.0


def run(*cmd: str, user: str | None = None, check: bool = True, **kw: object) -> str:
    """Run a command (as ``user``), echoed; its stdout."""
    argv = ["runuser", "-u", user, "--", *cmd] if user else list(cmd)
    print("+", shlex.join(argv), flush=True)
    res = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]
    if check and res.returncode != 0:
        sys.exit(f"failed ({res.returncode}): {res.stderr}{res.stdout}")
    return str(res.stdout)


def install() -> None:
    """Postfix from Debian's packages, the users, pbm in /opt/pbm."""
    if not Path("/usr/sbin/postfix").exists():
        Path("/tmp/postfix.debconf").write_text(
            "postfix postfix/main_mailer_type select Local only\n"
            f"postfix postfix/mailname string {DOMAIN}\n"
        )
        run("debconf-set-selections", "/tmp/postfix.debconf")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run("apt-get", "install", "-y", "-qq", "postfix", env=env)
    for user in ("pbm", "vmail"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            home = str(DATA) if user == "pbm" else "/var/mail/vhosts"
            run("useradd", "--system", "--user-group", "--home-dir", home, "--shell",
                "/usr/sbin/nologin", user)  # fmt: skip
    if not (VENV / "bin" / "pbm").exists():
        # Debian's Python 3.11 (python3-venv), which user pbm may run.
        run("/usr/bin/python3", "-m", "venv", str(VENV))
    run(str(VENV / "bin" / "pip"), "install", "--quiet", str(ROOT))


def fresh_site() -> None:
    """The trial starts from nothing: a site and mailboxes of an earlier trial go."""
    CONFIG.unlink(missing_ok=True)
    shutil.rmtree(DATA, ignore_errors=True)
    shutil.rmtree(MAILBOXES, ignore_errors=True)


def configure_pbm(socket: bool) -> str:
    """/etc/pbm/pbm.toml as the document says; what Postfix's transport names."""
    CONFIG.parent.mkdir(exist_ok=True)
    DATA.mkdir(exist_ok=True)
    os.chown(DATA, pwd.getpwnam("pbm").pw_uid, pwd.getpwnam("pbm").pw_gid)
    os.chown(CONFIG.parent, pwd.getpwnam("pbm").pw_uid, pwd.getpwnam("pbm").pw_gid)
    if socket:
        SOCKET_DIR.mkdir(exist_ok=True)
        os.chown(SOCKET_DIR, pwd.getpwnam("pbm").pw_uid, pwd.getpwnam("pbm").pw_gid)
        SOCKET_DIR.chmod(0o750)
        run("usermod", "-a", "-G", "pbm", "postfix")
        listen, nexthop = f"unix:{SOCKET_DIR}/lmtp.sock", "lmtp:unix:pbm/lmtp.sock"
    else:
        listen, nexthop = LMTP_TCP, f"lmtp:inet:{LMTP_TCP}"
    pbm = str(VENV / "bin" / "pbm")
    if not CONFIG.exists():
        run(pbm, "--config", str(CONFIG), "init", "--address", f"pbm@{DOMAIN}",
            "--data-dir", str(DATA), user="pbm")  # fmt: skip
    text = CONFIG.read_text()
    for key, value in (
        ("protocol", '"lmtp"'),
        ("listen", f'"{listen}"'),
        ("transport", '"smtp"'),
        ("smtp_host", '"127.0.0.1"'),
        ("smtp_port", "25"),
    ):
        text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text, count=1)
    CONFIG.write_text(text)
    print(f"{CONFIG}: smtp.listen = {listen}, outbound over SMTP to 127.0.0.1:25", flush=True)
    return nexthop


def configure_postfix(nexthop: str) -> None:
    """main.cf: loopback only, pbm.test to pbm over LMTP, players.test into Maildirs."""
    Path("/etc/postfix/transport").write_text(f"{DOMAIN}  {nexthop}\n")
    Path("/etc/postfix/pbm_recipients").write_text(f"pbm@{DOMAIN}  OK\n")
    # virtual(8) allows no regexp substitution: one Maildir a player.
    Path("/etc/postfix/players").write_text(
        "".join(f"{p}@{PLAYERS}  {PLAYERS}/{p}/\n" for p in ("alice", "bob"))
    )
    vmail = pwd.getpwnam("vmail")
    MAILBOXES.parent.mkdir(parents=True, exist_ok=True)
    os.chown(MAILBOXES.parent, vmail.pw_uid, vmail.pw_gid)
    settings = {
        "myhostname": f"mx.{DOMAIN}",
        "mydomain": DOMAIN,
        "myorigin": "$myhostname",
        "inet_interfaces": "loopback-only",
        "inet_protocols": "ipv4",
        "mydestination": "localhost",
        "mynetworks": "127.0.0.0/8",
        "recipient_delimiter": "+",
        "relay_domains": DOMAIN,
        "relay_recipient_maps": "hash:/etc/postfix/pbm_recipients",
        "transport_maps": "hash:/etc/postfix/transport",
        "virtual_mailbox_domains": PLAYERS,
        "virtual_mailbox_base": "/var/mail/vhosts",
        "virtual_mailbox_maps": "hash:/etc/postfix/players",
        "virtual_uid_maps": f"static:{vmail.pw_uid}",
        "virtual_gid_maps": f"static:{vmail.pw_gid}",
        "smtp_dns_support_level": "disabled",  # no DNS on this machine; nothing leaves it
        "lmtp_host_lookup": "native",
        "maillog_file": "/var/log/postfix.log",  # no syslog daemon here
    }
    run("postconf", "-e", *(f"{k}={v}" for k, v in settings.items()))
    run("postmap", "/etc/postfix/transport")
    run("postmap", "/etc/postfix/pbm_recipients")
    run("postmap", "/etc/postfix/players")
    run("postfix", "check")
    status = subprocess.run(["postfix", "status"], capture_output=True, check=False)
    run("postfix", "reload" if status.returncode == 0 else "start")


def start_pbm() -> subprocess.Popen[str]:
    """pbm serve as the unit starts it: its ExecStart line, as user pbm."""
    unit = (ROOT / "contrib" / "pbm.service").read_text()
    [line] = re.findall(r"(?m)^ExecStart=(.*)$", unit)
    argv = ["runuser", "-u", "pbm", "--", *shlex.split(line)]
    print("+", shlex.join(argv), flush=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=None, text=True, cwd="/", env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    print(first, end="", flush=True)
    if "LMTP on" not in first:
        proc.terminate()
        sys.exit("pbm serve did not start")
    return proc


def sendmail(sender: str, to: str, subject: str, body: str = "", reply_to: str = "") -> None:
    """A player's mail, handed to Postfix's sendmail as a mail client does."""
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg.set_content(body or "\n")
    print(f"> mail from {sender} to {to}: {subject!r}", flush=True)
    subprocess.run(["/usr/sbin/sendmail", "-f", sender, "-i", to], input=msg.as_bytes(), check=True)


SEEN: set[Path] = set()


def wait_for(player: str, subject: str) -> EmailMessage:
    """The first new mail in ``player``'s Maildir whose subject has ``subject``."""
    folder = MAILBOXES / player / "new"
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for path in sorted(folder.glob("*")) if folder.exists() else []:
            if path in SEEN:
                continue
            msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            if subject in str(msg["Subject"]):
                SEEN.add(path)
                print(f"< {player}@{PLAYERS} got {msg['Subject']!r} ({path.name})", flush=True)
                assert isinstance(msg, EmailMessage)
                return msg
        time.sleep(0.2)
    run("postqueue", "-p", check=False)
    sys.exit(f"no mail for {player} about {subject!r} within {WAIT:.0f} s (see the mail log)")


def reply_address(msg: EmailMessage) -> str:
    found = re.search(r"[^<\s]+@[^>\s]+", str(msg["Reply-To"]))
    assert found is not None
    return found.group(0)


def play() -> None:
    """Two players sign up, confirm, start a game and move, all by mail through Postfix."""
    pbm_address = f"pbm@{DOMAIN}"
    for name in ("alice", "bob"):
        addr = f"{name}@{PLAYERS}"
        sendmail(addr, pbm_address, f"signup {name} pw-{name}")
        ask = wait_for(name, f"confirm your account {name}")
        sendmail(addr, reply_address(ask), f"Re: {ask['Subject']}", "Yes, that was me.")
        wait_for(name, f"Welcome to pbm, {name}")
    sendmail(f"alice@{PLAYERS}", pbm_address, "accasta challenge alice bob")
    ask = wait_for("bob", "challenge from")
    sendmail(f"bob@{PLAYERS}", reply_address(ask), f"Re: {ask['Subject']}", "accept")
    board = wait_for("alice", "alice to move")
    token = reply_address(board)
    print(f"  alice's reply address: {token}", flush=True)
    pbm = str(VENV / "bin" / "pbm")
    first = example_move(board)
    sendmail(f"alice@{PLAYERS}", token, f"Re: {board['Subject']}", first)
    wait_for("bob", "bob to move")
    print(run(pbm, "--config", str(CONFIG), "game", "show", "1", user="pbm"))


def example_move(msg: EmailMessage) -> str:
    """The move the board mail itself offers as its example."""
    part = msg.get_body(("plain",))
    assert part is not None
    body = str(part.get_content())  # type: ignore[attr-defined]
    lines = body.splitlines()
    at = next(i for i, line in enumerate(lines) if "just your move on the first line" in line)
    return lines[at + 1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", action="store_true", help="LMTP on a unix socket, not TCP")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: it installs Postfix and configures the system")
    install()
    fresh_site()
    nexthop = configure_pbm(args.socket)
    configure_postfix(nexthop)
    server = start_pbm()
    try:
        play()
        print(run(str(VENV / "bin" / "pbm"), "--config", str(CONFIG), "status", user="pbm",
                  check=False))  # fmt: skip
    finally:
        server.terminate()
        print(f"pbm serve stopped: exit status {server.wait(timeout=30)}", flush=True)
    print("the trial went through: mail in by Postfix over LMTP, replies out through Postfix")


if __name__ == "__main__":
    main()
