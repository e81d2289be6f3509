"""Who acts: passwords (hashed with scrypt, verifications remembered), reply addresses, admin.

A command names a player and brings credentials (``Who``): his password, the
proof that it came to his reply address for a board (the mail side checks
the address's token before), or the admin's command line. ``authenticate``
turns that into an ``Actor`` or refuses it, once per command, before the
command is decided.

scrypt is slow on purpose (tens of milliseconds), and a player who writes his
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
from collections import OrderedDict
from dataclasses import dataclass

from pbm.usecases.refusals import WrongPassword
from pbm.usecases.world import Account, World

# scrypt cost. The tests lower SCRYPT_N to keep the suite fast; a hash records
# its own parameters, so a lower cost never weakens hashes stored elsewhere.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1


def hash_password(password: str) -> str:
    """A salted scrypt hash: ``scrypt$N$r$p$salt$hash`` (base64)."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    b64 = base64.b64encode
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches the stored hash (constant-time compare)."""
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
    """``verify_password`` with the answers for recent (hash, password) pairs remembered."""

    def __init__(self, size: int = 4096) -> None:
        self._key = os.urandom(32)
        self._size = size
        self._known: OrderedDict[tuple[str, bytes], bool] = OrderedDict()

    def _mark(self, stored: str, password: str) -> tuple[str, bytes]:
        tag = hmac.new(self._key, f"{stored}\0{password}".encode(), hashlib.sha256).digest()
        return (stored, tag)

    def verify(self, password: str, stored: str) -> bool:
        mark = self._mark(stored, password)
        known = self._known.get(mark)
        if known is None:
            known = verify_password(password, stored)
            self._known[mark] = known
            if len(self._known) > self._size:
                self._known.popitem(last=False)
        else:
            self._known.move_to_end(mark)
        return known

    def forget(self, stored: str) -> None:
        """Drop what is known about one stored hash (its password was changed)."""
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
Credentials = Password | ByReply | Admin


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


def authenticate(world: World, who: Who, board: int | None, passwords: PasswordCheck) -> Actor:
    """The ``Actor`` for ``who`` acting on ``board`` (None: no board); ``WrongPassword`` if not."""
    account = world.account(who.userid)
    credentials = who.credentials
    if isinstance(credentials, Password):
        if not passwords.verify(credentials.password, account.password_hash):
            raise WrongPassword(f"Wrong password for {account.display}.")
    elif isinstance(credentials, ByReply) and credentials.board != board:
        raise WrongPassword("This reply address does not let you do that; use your password.")
    return Actor(account, credentials)
