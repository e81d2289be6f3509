"""A tiny mail client for trying pbm on this machine, as a player would.

It reads the site's config (``--config``, else ``$PBM_CONFIG``, else
``./pbm.toml``, with the same ``PBM_SECTION_NAME`` overrides as ``pbm``) to
know where the server listens, its address, and the Maildir its replies go
to on the embedded default::

    python scripts/mail.py send FROM SUBJECT [BODY]       # a new mail to the server
    python scripts/mail.py reply FROM WORDS [BODY]        # answer the newest mail to FROM
                                                          # that has WORDS, by Reply
    python scripts/mail.py read FROM WORDS                # print that mail
    python scripts/mail.py list [FROM]                    # the mails the server wrote

``reply`` does what a mail client's Reply button does: to the mail's
Reply-To, ``Re:`` subject, In-Reply-To, and the mail quoted below the body.
It waits up to ``--wait`` seconds for the server's mail to arrive.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import smtplib
import sys
import time
from email.message import EmailMessage
from pathlib import Path

import click

from pbm import config as config_mod


def _config(path: str | None) -> config_mod.Config:
    return config_mod.load(path)


def _mails(cfg: config_mod.Config) -> list[tuple[Path, EmailMessage]]:
    """The mails in the outbox Maildir, oldest first."""
    new = cfg.maildir_path / "new"
    paths = (
        sorted(new.glob("*"), key=lambda p: (p.stat().st_mtime_ns, p.name)) if new.is_dir() else []
    )
    out = []
    for p in paths:
        msg = email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        out.append((p, msg))
    return out


def _plain(msg: EmailMessage) -> str:
    """The plain-text part of a mail (a board mail has an HTML part with a picture too)."""
    part = msg.get_body(("plain",))
    return str(part.get_content()) if part is not None else ""


def _text(msg: EmailMessage) -> str:
    """The subject and the plain-text body of a mail."""
    return f"{msg['Subject']}\n{_plain(msg)}"


def _find(cfg: config_mod.Config, to: str, words: str, wait: float) -> EmailMessage:
    deadline = time.monotonic() + wait
    while True:
        found = [
            m
            for _, m in _mails(cfg)
            if str(m["To"]).lower() == to.lower() and words.lower() in _text(m).lower()
        ]
        if found:
            return found[-1]
        if time.monotonic() > deadline:
            raise click.ClickException(f"no mail to {to} about {words!r} in {cfg.maildir_path}")
        time.sleep(0.1)


def _send(cfg: config_mod.Config, msg: EmailMessage) -> None:
    host, port = cfg.listen_host_port
    with smtplib.SMTP(host, port) as smtp:
        smtp.send_message(msg)


def _body(text: str) -> str:
    return text.replace("\\n", "\n") + ("\n" if not text.endswith("\n") else "")


@click.group()
@click.option("--config", "config_path", default=None, help="The site's config file.")
@click.option("--wait", default=10.0, show_default=True, help="Seconds to wait for a mail.")
@click.pass_context
def main(ctx: click.Context, config_path: str | None, wait: float) -> None:
    """Send mail to a local pbm and read what it writes back."""
    ctx.obj = (_config(config_path), wait)


@main.command()
@click.argument("sender")
@click.argument("subject")
@click.argument("body", default="")
@click.pass_obj
def send(obj: tuple[config_mod.Config, float], sender: str, subject: str, body: str) -> None:
    """Mail SUBJECT (and BODY; \\n for a new line) from SENDER to the server."""
    cfg, _ = obj
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, cfg.mail.address, subject
    msg["Message-ID"] = email.utils.make_msgid(domain="client.invalid")
    msg.set_content(_body(body))
    _send(cfg, msg)


@main.command()
@click.argument("sender")
@click.argument("words")
@click.argument("body", default="")
@click.pass_obj
def reply(obj: tuple[config_mod.Config, float], sender: str, words: str, body: str) -> None:
    """Reply from SENDER to the newest mail to SENDER with WORDS (in subject or body)."""
    cfg, wait = obj
    original = _find(cfg, sender, words, wait)
    quoted = "\n".join("> " + line for line in _plain(original).splitlines())
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = str(original["Reply-To"] or original["From"])
    msg["Subject"] = f"Re: {original['Subject']}"
    msg["Message-ID"] = email.utils.make_msgid(domain="client.invalid")
    msg["In-Reply-To"] = str(original["Message-ID"])
    msg["References"] = str(original["Message-ID"])
    msg.set_content(f"{_body(body)}\nOn {original['Date']}, pbm wrote:\n{quoted}\n")
    _send(cfg, msg)
    click.echo(f"replied to {original['Subject']!r} at {msg['To']}")


@main.command()
@click.argument("sender")
@click.argument("words")
@click.pass_obj
def read(obj: tuple[config_mod.Config, float], sender: str, words: str) -> None:
    """Print the newest mail to SENDER with WORDS (in subject or body)."""
    cfg, wait = obj
    msg = _find(cfg, sender, words, wait)
    click.echo(f"Subject: {msg['Subject']}\nReply-To: {msg['Reply-To'] or '-'}\n")
    click.echo(_plain(msg), nl=False)


@main.command("list")
@click.argument("to", required=False)
@click.pass_obj
def list_mails(obj: tuple[config_mod.Config, float], to: str | None) -> None:
    """The mails the server wrote (to TO only, if given): file, To, Subject."""
    cfg, _ = obj
    for path, msg in _mails(cfg):
        if to is None or str(msg["To"]).lower() == to.lower():
            click.echo(f"{path.name[:20]}  {msg['To']:<24} {msg['Subject']}")


if __name__ == "__main__":
    sys.exit(main())
