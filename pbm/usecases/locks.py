"""What holds a player back, for the admin: a password lockout, answers held by the limits.

``player_locks`` says it (``pbm player show``); ``Unlock`` lifts it all
(``pbm player unlock``): his wrong passwords are forgotten, what the answer
limits counted for his address too, and answers held for it are sent now.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pbm.config import LimitsConfig
from pbm.model import AccountStatus, Key
from pbm.replies import MailKind
from pbm.store import Session
from pbm.store import answer_counts as counts
from pbm.store.accounts import forget_failures, last_failure
from pbm.usecases.auth import Actor, locked_out
from pbm.usecases.text import fmt_time, note
from pbm.usecases.unit import Decision
from pbm.usecases.world import World


@dataclass(frozen=True)
class PlayerLocks:
    """A player's locks now."""

    userid: str
    email: str
    status: AccountStatus
    failures: int  # wrong passwords within the lockout time
    locked_until: datetime | None  # password commands refused until then
    answers: int  # automatic mails counted for his address (this clock hour and the last)
    errors: int
    held: int  # answers held for his address, to be sent when they resume
    answer_limit: int
    error_limit: int

    def lines(self) -> list[str]:
        """What ``pbm player show`` prints."""
        lock = (
            f"locked until {fmt_time(self.locked_until)} ({self.failures} wrong passwords)"
            if self.locked_until
            else f"not locked ({self.failures} wrong passwords lately)"
        )
        return [
            f"player {self.userid} <{self.email}> ({self.status})",
            f"password commands: {lock}",
            f"answers to {self.email}: {self.answers} counted in the last two clock hours, "
            f"{self.errors} of them errors (limits: {self.answer_limit} and "
            f"{self.error_limit} an hour)",
            f"held answers: {self.held} (sent when answers resume, or at once after "
            f"pbm player unlock {self.userid})",
        ]


def player_locks(world: World, userid: str) -> PlayerLocks:
    """``userid``'s locks as of ``world.now``."""
    account = world.account(userid)
    limits: LimitsConfig = world.config.limits
    window = timedelta(minutes=limits.password_lockout_minutes)
    since = world.now - window
    failures = world.failures(account.userid, since)
    until = None
    if locked_out(world, account.userid):
        last = last_failure(world.session, account.userid, since)
        until = (last or world.now) + window
    hour = world.now.replace(minute=0, second=0, microsecond=0)
    answers, errors = counts.held_for(world.session, account.email, hour)
    player = account.active
    return PlayerLocks(
        account.display,
        account.email,
        AccountStatus.ACTIVE if account.active else AccountStatus.PENDING,
        failures,
        until,
        answers,
        errors,
        counts.held_answers(world.session, account.email, world.now),
        limits.player_answers_per_hour if player else limits.answers_per_address_per_hour,
        limits.player_error_replies_per_hour if player else limits.error_replies_per_hour,
    )


@dataclass(frozen=True)
class LocksLifted:
    """The change ``Unlock`` makes: failures, counts and holds of one account gone."""

    userid: str
    email: str
    now: datetime

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("failures", self.userid)})

    def save(self, session: Session) -> None:
        forget_failures(session, self.userid)
        counts.forget_address(session, self.email)
        counts.release_held(session, self.email, self.now)


@dataclass(frozen=True)
class Unlock:
    """The admin lifts a player's password lockout and answer limits (``pbm player unlock``)."""

    userid: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        told = note(
            account.email,
            "pbm - your account is unlocked",
            f"The site admin lifted the locks of {account.display}: password commands work "
            "again, and answers to this address are sent again.",
            kind=MailKind.NOTICE,
        )
        return Decision((told,), (LocksLifted(account.userid, account.email, world.now),))
