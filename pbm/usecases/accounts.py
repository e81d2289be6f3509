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

from pbm import games
from pbm.model import Account, AccountStatus
from pbm.refusals import BadRequest, UserExists, WrongPassword
from pbm.replies import MailKind, Reply
from pbm.store import Session
from pbm.store.accounts import delete_pending
from pbm.usecases.auth import Actor, hash_password
from pbm.usecases.changes import AccountChange, NoticeSent
from pbm.usecases.moves import acting
from pbm.usecases.readers import account_reply_key
from pbm.usecases.text import fmt_time, note
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

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
            status=AccountStatus.ACTIVE if self.confirmed else AccountStatus.PENDING,
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
            note(
                self.email,
                f"pbm - confirm your account {self.userid}",
                text,
                kind=MailKind.CONFIRM,
            ),
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
        after = replace(account, status=AccountStatus.ACTIVE)
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
    ``sender``) whose reply address sets a new one, once, within ``RESET_HOURS``.

    Anyone may ask, so a stranger must not flood the owner with them: one reset
    mail is outstanding at a time (until it is used or ``RESET_HOURS`` pass),
    and at most ``limits.password_resets_per_day`` go out a day. They never
    spend the owner's own answer allowance (``MailKind.RESET``).
    """

    userid: str
    sender: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        outstanding = _reset_asked_at(account)
        if outstanding is not None and world.now - outstanding < timedelta(hours=RESET_HOURS):
            raise BadRequest(
                f"A mail to reset the password of {account.display} went to the account's "
                f"address at {fmt_time(outstanding)}; its reply address works until "
                f"{fmt_time(outstanding + timedelta(hours=RESET_HOURS))}. Reply to that mail; "
                "no other is sent meanwhile."
            )
        today = world.now.replace(hour=0, minute=0, second=0, microsecond=0)
        per_day = world.config.limits.password_resets_per_day
        if world.notices_sent(f"reset:{account.userid}", today) >= per_day:
            raise BadRequest(
                f"{per_day} mails to reset the password of {account.display} went out today, "
                "the most a day; ask again tomorrow."
            )
        nonce = f"{world.now.isoformat()}/{secrets.token_hex(8)}"
        after = replace(account, reset_nonce=nonce)
        text = (
            f"Someone (you, we hope) asked to reset the password of {account.display}. To set "
            "a new one, reply to this mail with the new password alone on the first line. "
            f"This works once, within {RESET_HOURS} hours. If it was not you, ignore this "
            "mail: your password stays as it is."
        )
        ask = replace(
            note(
                account.email,
                f"pbm - reset the password of {account.display}",
                text,
                kind=MailKind.RESET,
            ),
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
        changes = (AccountChange(account, after), NoticeSent(f"reset:{account.userid}", today))
        return Decision(replies, changes)


def _reset_asked_at(account: Account) -> datetime | None:
    """When the reset mail still outstanding was asked for (its nonce says), if any."""
    if not account.reset_nonce:
        return None
    try:
        return datetime.fromisoformat(account.reset_nonce.partition("/")[0])
    except ValueError:
        return None


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
            status=AccountStatus.ACTIVE,
        )
        told = note(
            account.email,
            "pbm - password changed",
            f"The password of {account.display} was changed. It works at once.",
        )
        return Decision((told,), (AccountChange(account, after),))


@dataclass(frozen=True)
class ChangeAddress:
    """Ask for a new address: it is used once a reply from it confirms it (``ConfirmAddress``),
    as a signup is. Until then mail goes to the old address, which is told of the request.
    The admin's command line sets it at once."""

    email: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        check_email(self.email)
        if not me.has_password:
            raise WrongPassword("Changing an address needs the password.")
        old = me.account.email
        if old.lower() == self.email.lower():
            raise BadRequest(f"{self.email} is the address of {me.display} already.")
        if me.is_admin:
            after = replace(me.account, email=self.email, new_email=None, new_email_nonce=None)
            text = f"The address of {me.display} is now {self.email} (it was {old})."
            told = [
                note(a, "pbm - address changed", text, kind=MailKind.NOTICE)
                for a in (self.email, old)
            ]
            return Decision(told, (AccountChange(me.account, after),))
        nonce = f"{world.now.isoformat()}/{secrets.token_hex(8)}"
        after = replace(me.account, new_email=self.email, new_email_nonce=nonce)
        ask = replace(
            note(
                self.email,
                f"pbm - confirm the new address of {me.display}",
                f"Someone (you, we hope) asked to make this the address of the account "
                f"{me.display} on pbm. To confirm it, reply to this mail from this address: any "
                f"text will do. Until then mail for {me.display} goes to the old address. If it "
                "was not you, just ignore this mail.",
                kind=MailKind.CONFIRM,
            ),
            reply_as=me.userid,
            reply_key=f"address:{nonce}",
        )
        warned = note(
            old,
            "pbm - a new address was asked for",
            f"A mail with the password of {me.display} asked to make {self.email} the address "
            "of this account. It is used only once a reply from it confirms it; until then "
            "your mail comes here. If it was not you, change your password now with: "
            f"password {me.display} PASSWORD NEW-PASSWORD",
            kind=MailKind.NOTICE,
        )
        return Decision((ask, warned), (AccountChange(me.account, after),))


@dataclass(frozen=True)
class ConfirmAddress:
    """A reply from the new address (to the mail that asked it, ``nonce`` its request's):
    it becomes the account's address, and the old one is told."""

    userid: str
    nonce: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        if account.new_email is None or account.new_email_nonce != self.nonce:
            raise WrongPassword("This address change was confirmed or replaced already.")
        new = account.new_email
        after = replace(account, email=new, new_email=None, new_email_nonce=None)
        return Decision(_changed(account, new), (AccountChange(account, after),))


def _changed(account: Account, new: str) -> list[Reply]:
    """The news of an address changed, to the new address and the old one."""
    text = f"The address of {account.display} is now {new} (it was {account.email})."
    return [
        note(a, "pbm - address changed", text, kind=MailKind.NOTICE) for a in (new, account.email)
    ]


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
    return delete_pending(session, now - timedelta(days=PENDING_DAYS))
