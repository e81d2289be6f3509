"""Accounts: sign up, change the password, change the address."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pbm import games
from pbm.usecases.auth import Actor, hash_password
from pbm.usecases.boardmail import note
from pbm.usecases.changes import AccountChange
from pbm.usecases.moves import acting
from pbm.usecases.refusals import BadRequest, UserExists, WrongPassword
from pbm.usecases.unit import Decision
from pbm.usecases.world import Account, World

USERID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,19}$")
EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")


def check_password(password: str) -> None:
    if not password or any(c.isspace() for c in password) or len(password) > 100:
        raise BadRequest("A password is one word: 1 to 100 characters, no spaces.")


def check_email(email: str) -> None:
    if not EMAIL.match(email):
        raise BadRequest(f"{email!r} is not a mail address.")


@dataclass(frozen=True)
class Signup:
    """A new account; the welcome goes to ``email``."""

    userid: str
    password: str
    email: str
    full_name: str = ""
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
        )
        first = games.names()[0]
        welcome = note(
            self.email,
            f"Welcome to pbm, {self.userid}",
            f"Your account {self.userid} is ready. Start a game with: "
            f"{first} challenge {self.userid} OPPONENT. Help: help {first}.",
        )
        return Decision((welcome,), (AccountChange(None, account),))


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
