"""Accounts: sign up (confirmed by the address's owner), change the password or address.

Anyone can write any address into a signup: the account stays ``pending``,
able to do nothing, until a reply to the one confirmation mail sent to that
address confirms it (``Confirm``); unconfirmed accounts are forgotten after
``PENDING_DAYS`` (``expire_signups``). The admin's ``pbm player add`` makes
accounts that are confirmed at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from pbm import games
from pbm.replies import Reply
from pbm.usecases.auth import Actor, hash_password
from pbm.usecases.changes import AccountChange
from pbm.usecases.moves import acting
from pbm.usecases.refusals import BadRequest, UserExists, WrongPassword
from pbm.usecases.text import note
from pbm.usecases.unit import Decision
from pbm.usecases.world import PLAYERS, Account, World

USERID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,19}$")
# One mailbox, no spaces, no control characters (it goes into To headers).
EMAIL = re.compile(r"^[^@\s<>\x00-\x1f\x7f]+@[^@\s<>\x00-\x1f\x7f]+$")
PENDING_DAYS = 7


def account_nonce(account: Account) -> str:
    """What makes an account's reply address its own: one signup, not a later one."""
    return account.created_at.isoformat()


def account_key(account: Account) -> str:
    """``Reply.reply_key`` of mail whose reply acts for the account (``pbm.mail.addresses``)."""
    return f"account:{account_nonce(account)}"


def welcome(account: Account) -> Reply:
    """The mail that says an account is ready."""
    first = games.names()[0]
    text = (
        f"Your account {account.display} is ready. Start a game with: "
        f"{first} challenge {account.display} OPPONENT. Help: help {first}."
    )
    return replace(
        note(account.email, f"Welcome to pbm, {account.display}", text),
        reply_as=account.userid,
        reply_key=account_key(account),
    )


def check_password(password: str) -> None:
    if not password or any(c.isspace() for c in password) or len(password) > 100:
        raise BadRequest("A password is one word: 1 to 100 characters, no spaces.")


def check_email(email: str) -> None:
    if not EMAIL.match(email):
        raise BadRequest(f"{email!r} is not a mail address.")


@dataclass(frozen=True)
class Signup:
    """A new account at ``email``: pending, and a mail there asks to confirm it.

    ``confirmed``: the admin's, active at once (the welcome goes to ``email``).
    """

    userid: str
    password: str
    email: str
    full_name: str = ""
    confirmed: bool = False
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        if not USERID.match(self.userid):
            raise BadRequest(
                f"{self.userid!r} cannot be a userid: use 1 to 20 letters, digits, '-' or '_', "
                "starting with a letter."
            )
        check_password(self.password)
        check_email(self.email)
        if world.find_account(self.userid) is not None:
            raise UserExists(f"The userid {self.userid} is taken; choose another.")
        account = Account(
            userid=self.userid.lower(),
            display=self.userid,
            email=self.email,
            full_name=self.full_name,
            password_hash=hash_password(self.password),
            created_at=world.now,
            status="active" if self.confirmed else "pending",
        )
        if self.confirmed:
            return Decision((welcome(account),), (AccountChange(None, account),))
        text = (
            f"Someone (you, we hope) signed up for the account {self.userid} with this "
            "address. To confirm it, reply to this mail: any text will do. Until then the "
            f"account can do nothing, and if it is not confirmed within {PENDING_DAYS} days "
            "it is forgotten. If it was not you, just ignore this mail."
        )
        ask = replace(
            note(self.email, f"pbm - confirm your account {self.userid}", text),
            reply_as=account.userid,
            reply_key=account_key(account),
        )
        return Decision((ask,), (AccountChange(None, account),))


@dataclass(frozen=True)
class Confirm:
    """The owner of the address replied to the confirmation mail: the account is active.

    The reply address proved it (its token, checked by the mail side, is the
    account's own); a second reply changes nothing.
    """

    userid: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        if account.active:
            return Decision()
        after = replace(account, status="active")
        return Decision((welcome(after),), (AccountChange(account, after),))


@dataclass(frozen=True)
class ChangePassword:
    """Set a new password; the confirmation goes to the account's address."""

    new_password: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        check_password(self.new_password)
        if not me.has_password:
            raise WrongPassword("Changing a password needs the old password.")
        after = replace(me.account, password_hash=hash_password(self.new_password))
        told = note(
            me.account.email, "pbm - password changed", f"The password of {me.display} was changed."
        )
        return Decision((told,), (AccountChange(me.account, after),))


@dataclass(frozen=True)
class ChangeAddress:
    """Set a new address; both the old and the new one are told."""

    email: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        check_email(self.email)
        if not me.has_password:
            raise WrongPassword("Changing an address needs the password.")
        old = me.account.email
        after = replace(me.account, email=self.email)
        text = f"The address of {me.display} is now {self.email} (it was {old})."
        replies = [note(self.email, "pbm - address changed", text)]
        if old.lower() != self.email.lower():
            replies.append(note(old, "pbm - address changed", text))
        return Decision(replies, (AccountChange(me.account, after),))


def expire_signups(session: Session, now: datetime) -> int:
    """Forget the accounts whose signup was not confirmed within ``PENDING_DAYS``."""
    stmt = sa.delete(PLAYERS).where(
        PLAYERS.c.status == "pending", PLAYERS.c.created_at < now - timedelta(days=PENDING_DAYS)
    )
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]
