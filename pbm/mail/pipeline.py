"""The inbox pipeline: a received mail goes through small named steps to the commands it holds.

Each step is a plain function ``step(mail, env)`` that either lets the mail
go on or settles it (``Mail.settle``): ``parse`` (decode; never fails) ->
``bounce`` (a delivery report to a return path of ours marks the address) ->
``screen`` (robots, bounces, lists and loops get no answer) -> ``dedupe`` (a
Message-ID already acted on) -> ``find_commands`` (reply, subject or body
mode; each line parsed once: ``pbm.mail.command_lines``). What a mail asks for ends
up as ``Request``s in ``Mail.requests``, for the inbox runner to carry out
(``pbm.usecases.unit``). Steps read the database only through ``Env``; they write
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pbm.mail.command_lines import read_commands
from pbm.mail.dsn import report_for
from pbm.mail.env import Env
from pbm.mail.inbound import Inbound, read_message
from pbm.model import MailStatus
from pbm.usecases.bounces import Bounced
from pbm.usecases.unit import Outcome, Request

__all__ = ["STEPS", "Env", "Mail", "Step", "run_steps"]


@dataclass
class Mail:
    """One inbox row on its way through the steps.

    ``outcome`` None: the steps go on; else how the mail ends, ``note`` says why.
    ``commands`` False: it ended with no command of its own (a confirmation, a
    reply address that is not valid...), and ``note`` is what it was.
    """

    row_id: int
    raw: bytes
    mail_from: str
    rcpt: list[str]
    attempts: int = 0  # failed attempts at working it out before this one
    inbound: Inbound | None = None
    outcome: MailStatus | None = None
    note: str = ""
    commands: bool = True
    requests: list[Request] = field(default_factory=list)
    fault: str | None = None  # why working it out failed this time (the runner's business)
    secrets: set[str] = field(default_factory=set)  # the passwords it holds, once read

    def settle(self, outcome: MailStatus, note: str, *, commands: bool = True) -> None:
        self.outcome, self.note, self.commands = outcome, note, commands

    @property
    def message_id(self) -> str | None:
        return (self.inbound.message_id or None) if self.inbound is not None else None

    @property
    def sender(self) -> str | None:
        """Who the mail's answers go to (its From), once read."""
        return self.inbound.sender if self.inbound is not None else None

    def finished(self, outcomes: Sequence[Outcome]) -> tuple[MailStatus, str]:
        """How the mail's row ends: its status and a note of what its commands did."""
        if self.outcome in (MailStatus.IGNORED, MailStatus.FAILED):
            return self.outcome, self.note
        if outcomes and all(o.already_done for o in outcomes):
            # A copy of a mail acted on meanwhile (by another runner, say).
            return MailStatus.IGNORED, f"duplicate of {self.message_id}"
        if not self.commands:
            return MailStatus.DONE, self.note
        done = sum(1 for o in outcomes if not o.refused and not o.already_done)
        return MailStatus.DONE, f"{done} of {len(outcomes)} command(s) carried out"


Step = Callable[[Mail, Env], None]


def parse(mail: Mail, env: Env) -> None:
    """Decode the message (never raises: garbage comes back with an ignore reason)."""
    mail.inbound = read_message(
        mail.raw,
        mail_from=mail.mail_from,
        rcpt_tos=mail.rcpt,
        server_address=env.config.mail.address,
    )


def bounce(mail: Mail, env: Env) -> None:
    """A delivery report to one of our return paths: a permanent failure marks the
    address (``usecases.bounces``); nothing is ever answered."""
    assert mail.inbound is not None
    mail_cfg = env.config.mail
    report = report_for(
        mail.raw, mail.inbound.rcpt, mail_cfg.address, mail_cfg.secret, mail.inbound.return_path
    )
    if report is None:
        return
    if not report.genuine:
        why = "not from the mail system (a return path, or no RFC 3464 report)"
        mail.settle(
            MailStatus.IGNORED, f"mail to the bounce address of outbox {report.outbox_id}: {why}"
        )
        return
    if not report.permanent:
        mail.settle(
            MailStatus.IGNORED, f"delivery report for outbox {report.outbox_id}: no failure"
        )
        return
    bounced = Bounced(report.outbox_id, report.recipients)
    mail.requests.append(Request(bounced, message_id=mail.message_id))
    mail.settle(MailStatus.DONE, f"bounce of outbox {report.outbox_id}", commands=False)


def screen(mail: Mail, env: Env) -> None:
    """Never answer robots: auto-replies, bounces, list mail, ourselves (RFC 3834 2)."""
    assert mail.inbound is not None
    if mail.inbound.ignore_reason:
        mail.settle(MailStatus.IGNORED, mail.inbound.ignore_reason)


def dedupe(mail: Mail, env: Env) -> None:
    """A Message-ID already acted on is not acted on again (redelivery, a second copy)."""
    mid = mail.message_id
    if mid and env.seen(mid):
        mail.settle(MailStatus.IGNORED, f"duplicate of {mid}")


def find_commands(mail: Mail, env: Env) -> None:
    """Find the commands (reply, subject or body mode: ``pbm.mail.command_lines``) and
    make each a request; the passwords they hold are noted (``Mail.secrets``), so the
    stored mail keeps none."""
    assert mail.inbound is not None
    found = read_commands(mail.inbound, env, mail.message_id)
    mail.requests += found.requests
    mail.secrets |= found.secrets
    if found.note is not None:
        mail.settle(MailStatus.DONE, found.note, commands=False)


STEPS: tuple[Step, ...] = (parse, bounce, screen, dedupe, find_commands)


def run_steps(mail: Mail, env: Env) -> Mail:
    """Run ``STEPS`` until one settles the mail; a broken mail fails alone."""
    try:
        for step in STEPS:
            step(mail, env)
            if mail.outcome is not None:
                break
    except Exception as exc:  # a bug must never stop the runner
        mail.requests.clear()
        mail.settle(MailStatus.FAILED, f"{type(exc).__name__}: {exc}")
    return mail
