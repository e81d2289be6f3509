"""Who acts: passwords (argon2id, verifications remembered), reply addresses, admin.

A command names a player and brings credentials (``Who``): his password, the
proof that it came to his reply address for a board (the mail side checks
the address's token before), or the admin's command line. ``authenticate``
turns that into an ``Actor`` or refuses it, once per command, before the
command is decided.

Passwords are hashed with argon2id at a cost OWASP's Password Storage Cheat
Sheet recommends today: of its five configurations of equal strength, the
one that costs a server least (7 MiB of memory, 5 passes, 1 lane: it stays
in the processor's cache, and takes about 15 ms where 19 MiB and 2 passes
take about 21). Hashes made before, with scrypt or another argon2 cost,
still verify and are made anew at the next use. A verification is slow on
purpose, and a player who writes his
password into every move would pay that each time. ``PasswordCheck`` keeps
the answers for recent (stored hash, password) pairs, as mail servers'
authentication caches do: under an HMAC made with a key that exists only in
this process's memory, never the password itself; a new password means a
new stored hash, for which nothing is kept, and ``forget`` drops a hash's
answers at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from pbm.model import Account
from pbm.refusals import ForeignSender, LockedOut, NotConfirmed, WrongPassword
from pbm.replies import MailKind
from pbm.usecases.changes import AccountChange, FailureChange
from pbm.usecases.text import fmt_time, note
from pbm.usecases.world import World

HOUR = timedelta(hours=1)

# A (password, stored hash) pair as remembered: the hash, and an HMAC of both.
Mark = tuple[str, bytes]

# argon2id, the last of OWASP's five configurations (m=7 MiB, t=5, p=1). The tests make it cheap;
# a hash records its own parameters, so a cheaper one never weakens hashes
# stored elsewhere.
ARGON2_TIME_COST, ARGON2_MEMORY_KIB, ARGON2_LANES = 5, 7 * 1024, 1
HASHER = PasswordHasher(
    time_cost=ARGON2_TIME_COST, memory_cost=ARGON2_MEMORY_KIB, parallelism=ARGON2_LANES
)


def hash_password(password: str) -> str:
    """A salted argon2id hash (PHC string: ``$argon2id$v=19$m=...,t=...,p=...$salt$hash``)."""
    return HASHER.hash(password)


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches the stored hash (argon2id, or scrypt from before)."""
    if stored.startswith("$argon2"):
        try:
            return HASHER.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False
    return _verify_scrypt(password, stored)


def needs_rehash(stored: str) -> bool:
    """Whether a stored hash is of an older kind or cost than ``HASHER`` makes."""
    try:
        return not stored.startswith("$argon2") or HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return True


def _verify_scrypt(password: str, stored: str) -> bool:
    """The hashes of before argon2: ``scrypt$N$r$p$salt$hash`` (base64), constant-time."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
            maxmem=256 * 1024 * 1024,
        )
    except (ValueError, TypeError, OverflowError, MemoryError):
        return False  # a hash we cannot read (or whose cost is absurd) matches nothing
    return hmac.compare_digest(got, expected)


class PasswordCheck:
    """``verify_password`` with the answers for recent (hash, password) pairs remembered.

    Safe across threads (the web site's and the runners' share none, but tests do).
    """

    def __init__(self, size: int = 4096) -> None:
        self._key = os.urandom(32)
        self._size = size
        self._known: OrderedDict[Mark, bool] = OrderedDict()
        self._lock = threading.Lock()

    def _mark(self, stored: str, password: str) -> Mark:
        tag = hmac.new(self._key, f"{stored}\0{password}".encode(), hashlib.sha256).digest()
        return (stored, tag)

    def verify(self, password: str, stored: str) -> bool:
        """Whether ``password`` matches ``stored``: remembered, else verified (and kept)."""
        mark = self._mark(stored, password)
        with self._lock:
            known = self._known.get(mark)
            if known is not None:
                self._known.move_to_end(mark)
                return known
        answer = verify_password(password, stored)
        with self._lock:
            self._known[mark] = answer
            if len(self._known) > self._size:
                self._known.popitem(last=False)
        return answer

    def forget(self, stored: str) -> None:
        """Drop what is known about one stored hash (its password was changed)."""
        with self._lock:
            for mark in [m for m in self._known if m[0] == stored]:
                del self._known[mark]


@dataclass(frozen=True, slots=True)
class Password:
    """The player's password, written into the command."""

    password: str


@dataclass(frozen=True, slots=True)
class ByReply:
    """The command came to the player's reply address for ``board`` (its token checked)."""

    board: int


@dataclass(frozen=True, slots=True)
class Admin:
    """The administrator's command line: no password needed."""


ADMIN = Admin()


@dataclass(frozen=True, slots=True)
class Computer:
    """The server's own computer player acting for itself (``pbm.runners.computer_runner``): no
    password, and only for the computer's account; its moves are its own, no admin's."""


COMPUTER = Computer()
Credentials = Password | ByReply | Admin | Computer


@dataclass(frozen=True, slots=True)
class Who:
    """Who a command says acts, and what proves it."""

    userid: str
    credentials: Credentials


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts, authenticated."""

    account: Account
    credentials: Credentials

    @property
    def userid(self) -> str:
        return self.account.userid

    @property
    def display(self) -> str:
        return self.account.display

    @property
    def is_admin(self) -> bool:
        return isinstance(self.credentials, Admin)

    @property
    def has_password(self) -> bool:
        """Whether the password (or the admin) vouches for him, not only a reply address."""
        return not isinstance(self.credentials, ByReply)


def authenticate(
    world: World,
    who: Who,
    board: int | None,
    passwords: PasswordCheck,
    sender: str | None = None,
    envelope: str | None = None,
) -> Actor:
    """The ``Actor`` for ``who`` acting on ``board`` (None: no board); ``WrongPassword`` if not.

    Wrong passwords are counted (``FailureChange``); after
    ``limits.password_failures`` of them within ``limits.password_lockout_minutes``
    password commands for the account are refused without being checked
    (``LockedOut``, answered at most once an hour, but always to mail from the
    account's own address: ``sender``) and the owner is told once. A reply
    address keeps working all the while: its token is no password; but it acts
    only for mail from the account's own address (``from_owner``).
    """
    account = world.account(who.userid)
    credentials = who.credentials
    if isinstance(credentials, Password):
        owner = sender is not None and sender.lower() == account.email.lower()
        _check_password(world, account, credentials.password, passwords, owner)
    elif isinstance(credentials, ByReply):
        if sender is not None:
            from_owner(account, sender, envelope, board)
        if credentials.board != board:
            raise WrongPassword("This reply address does not let you do that; use your password.")
    elif isinstance(credentials, Computer):
        if account.userid != world.config.computer.account:
            raise WrongPassword("Only the computer player acts as the computer.")
        return Actor(account, credentials)
    if not account.active and not isinstance(credentials, Admin):
        raise NotConfirmed(
            f"The account {account.display} is not confirmed yet: reply to the mail that "
            "asked you to confirm it (it was sent to its address)."
        )
    return Actor(account, credentials)


def same_mailbox(a: str, b: str) -> bool:
    """Whether two addresses name one mailbox (the domain is case-insensitive, RFC 5321
    2.4; local parts are compared without case too, as every real mail system does)."""
    return a.strip().lower() == b.strip().lower()


def from_owner(account: Account, sender: str, envelope: str | None, board: int | None) -> None:
    """Let a mail to ``account``'s reply address act only when it comes from his address.

    A board mail forwarded, or leaked, must not hand over the game: the From
    address must be the account's, and the envelope sender (when there is
    one) too, or at least of its domain (many providers write a return path
    of their own there, ``prvs=...`` or a VERP). Anyone else is answered with
    silence, and the owner is told at his own address what happened.
    """
    domain = account.email.rpartition("@")[2].lower()
    envelope_ok = (
        not envelope
        or same_mailbox(envelope, account.email)
        or envelope.rpartition("@")[2].lower() == domain
    )
    if same_mailbox(sender, account.email) and envelope_ok:
        return
    where = f"board {board}" if board is not None else "your account"
    refused = ForeignSender(f"A mail from {sender} used the reply address of {account.display}.")
    refused.silent = True  # never an answer to the other address
    refused.notices = (
        note(
            account.email,
            "pbm - your reply address was used by another address",
            f"A mail from {sender} used your reply address for {where}; nothing was done. "
            "Reply addresses act only for mail from your registered address, "
            f"{account.email}. If that mail was yours, send it again from {account.email}, "
            "or change your address with: address "
            f"{account.display} PASSWORD NEW-ADDRESS",
            board,
        ),
    )
    raise refused


def locked_out(world: World, userid: str) -> bool:
    """Whether ``userid``'s password commands are refused unchecked now: too many wrong
    passwords (``limits.password_failures``) within ``limits.password_lockout_minutes``."""
    return _recent_failures(world, userid) >= world.config.limits.password_failures


def _recent_failures(world: World, userid: str) -> int:
    window = timedelta(minutes=world.config.limits.password_lockout_minutes)
    return world.failures(userid, world.now - window)


def _check_password(
    world: World, account: Account, password: str, passwords: PasswordCheck, owner: bool
) -> None:
    limits = world.config.limits
    window = timedelta(minutes=limits.password_lockout_minutes)
    now = world.now
    failures = _recent_failures(world, account.userid)
    if failures >= limits.password_failures:
        locked = LockedOut(
            f"Too many wrong passwords for {account.display}: password commands for this "
            f"account are refused until {fmt_time(now + window)} at the earliest. Replies to "
            "your board mails, which need no password, still work. Forgot your password? "
            f"Send: password reset {account.display}"
        )
        answered = account.lockout_answered_at
        # The owner is told why each time (his address has its own limits);
        # anyone else once an hour.
        if not owner and answered is not None and now - answered < HOUR:
            locked.silent = True
        elif not owner:
            after = replace(account, lockout_answered_at=now)
            locked.changes = (AccountChange(account, after),)
        raise locked
    if passwords.verify(password, account.password_hash):
        return
    wrong = WrongPassword(
        f"Wrong password for {account.display}. Forgot it? Send: password reset "
        f"{account.display} (a mail to the account's address lets you choose a new one). "
        "Replies to your board mails need no password: reply to one to move."
    )
    wrong.changes = (FailureChange(account.userid, now),)
    told = account.lockout_told_at
    if failures + 1 >= limits.password_failures and (told is None or now - told >= window):
        # The owner hears of it once, at his own address, whoever sent the guesses.
        after = replace(account, lockout_told_at=now)
        wrong.changes += (AccountChange(account, after),)
        wrong.notices = (
            # Told once a lock, whatever his answer limit.
            note(
                account.email,
                "pbm - wrong passwords",
                f"Someone sent {failures + 1} wrong passwords for your account "
                f"{account.display} within {limits.password_lockout_minutes} minutes. Password "
                f"commands for it are refused until {fmt_time(now + window)}; nothing was "
                "changed. Replies to your board mails need no password and still work. "
                "Forgot your password? Send: password reset "
                f"{account.display} (a mail to this address lets you choose a new one). If "
                "it was not you, change your password once the lock has passed.",
                kind=MailKind.NOTICE,
            ),
        )
    raise wrong
