"""Accounts: sign up (confirmed by the address's owner), change the password or address.

Anyone can write any address into a signup: the account stays ``pending``,
able to do nothing, until a reply to the one confirmation mail sent to that
address confirms it (``Confirm``); unconfirmed accounts are forgotten after
``PENDING_DAYS`` (``expire_signups``). The admin's ``pbm player add`` makes
accounts that are confirmed at once.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from pbm import games
from pbm.replies import Reply
from pbm.usecases.auth import Actor, hash_password
from pbm.usecases.changes import AccountChange
from pbm.usecases.moves import acting
from pbm.usecases.readers import account_reply_key
from pbm.usecases.refusals import BadRequest, UserExists, WrongPassword
from pbm.usecases.text import note
from pbm.usecases.unit import Decision
from pbm.usecases.world import PLAYERS, Account, World

USERID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,19}$")
# One mailbox, no spaces, no control characters (it goes into To headers).
EMAIL = re.compile(r"^[^@\s<>\x00-\x1f\x7f]+@[^@\s<>\x00-\x1f\x7f]+$")
PENDING_DAYS = 7


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
        reply_key=account_reply_key(account),
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
            reply_key=account_reply_key(account),
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


RESET_HOURS = 24


@dataclass(frozen=True)
class AskReset:
    """A forgotten password: a mail to the account's registered address (never to
    ``sender``) whose reply address sets a new one, once, within ``RESET_HOURS``."""

    userid: str
    sender: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        nonce = f"{world.now.isoformat()}/{secrets.token_hex(8)}"
        after = replace(account, reset_nonce=nonce)
        text = (
            f"Someone (you, we hope) asked to reset the password of {account.display}. To set "
            "a new one, reply to this mail with the new password alone on the first line. "
            f"This works once, within {RESET_HOURS} hours. If it was not you, ignore this "
            "mail: your password stays as it is."
        )
        ask = replace(
            note(account.email, f"pbm - reset the password of {account.display}", text),
            reply_as=account.userid,
            reply_key=f"reset:{nonce}",
        )
        replies = [ask]
        if self.sender.lower() != account.email.lower():
            replies.append(
                note(
                    self.sender,
                    "pbm - password reset",
                    f"A mail to reset the password of {account.display} went to the "
                    "account's own address.",
                )
            )
        return Decision(replies, (AccountChange(account, after),))


@dataclass(frozen=True)
class SetPassword:
    """The reply to a reset mail (``AskReset``, its ``nonce``): the new password is set
    and the reset address used up; a pending signup is confirmed by it too."""

    userid: str
    nonce: str
    new_password: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        if account.reset_nonce != self.nonce:
            raise WrongPassword("This reset address was used already; ask for a new one.")
        asked = datetime.fromisoformat(self.nonce.partition("/")[0])
        if world.now - asked > timedelta(hours=RESET_HOURS):
            raise WrongPassword(
                f"This reset address is older than {RESET_HOURS} hours; ask for a new one "
                f"with: password reset {account.display}"
            )
        check_password(self.new_password)
        after = replace(
            account,
            password_hash=hash_password(self.new_password),
            reset_nonce=None,
            status="active",
        )
        told = note(
            account.email,
            "pbm - password changed",
            f"The password of {account.display} was changed. It works at once.",
        )
        return Decision((told,), (AccountChange(account, after),))


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


@dataclass(frozen=True)
class SetFormat:
    """How the player's mail comes: ``html`` (a picture of the board with the text, the
    default) or ``text`` (plain text only)."""

    format: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        if self.format not in ("html", "text"):
            raise BadRequest(f"The format is html or text, not {self.format!r}.")
        after = replace(me.account, format=self.format)
        what = (
            "with a picture of the board beside the text"
            if self.format == "html"
            else "as plain text only"
        )
        text = f"Mail to {me.display} comes {what} from now on."
        told = note(me.account.email, "pbm - format", text)
        return Decision((told,), (AccountChange(me.account, after),))


def expire_signups(session: Session, now: datetime) -> int:
    """Forget the accounts whose signup was not confirmed within ``PENDING_DAYS``."""
    stmt = sa.delete(PLAYERS).where(
        PLAYERS.c.status == "pending", PLAYERS.c.created_at < now - timedelta(days=PENDING_DAYS)
    )
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]
