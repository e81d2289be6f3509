"""What the service layer produces instead of sending mail: replies.

A ``Reply`` is who gets what text. The service writes replies to the outbox
in the same transaction as the change that caused them; ``pbm.mail.outbound``
turns them into messages and delivers them. Reply-token addresses let a
player act on a board by replying to its mail, with no password.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from dataclasses import dataclass

TOKEN_LENGTH = 10


@dataclass(frozen=True, slots=True)
class Reply:
    """One mail to send.

    ``reply_as`` names the player (userid) whose reply-token address goes in
    ``Reply-To`` (set on mails that ask that player to move); ``board`` is the
    board number the mail is about, if any; ``in_reply_to`` the Message-ID of
    the mail that caused it, for threading.
    """

    to: str
    subject: str
    body: str
    board: int | None = None
    reply_as: str | None = None
    in_reply_to: str | None = None
    is_error: bool = False


# A move checks a token and writes two or three: the same few boards and players
# over and over, and an HMAC costs more than a look-up.
@functools.lru_cache(maxsize=4096)
def reply_token(secret: str, board: int, userid: str) -> str:
    """The secret token that lets ``userid`` act on ``board`` by reply."""
    msg = f"{board}.{userid.lower()}".encode()
    digest = hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()
    return digest[:TOKEN_LENGTH]


def token_address(server_address: str, secret: str, board: int, userid: str) -> str:
    """``pbm+12.bob.k3x9q2abcd@example.org`` for ``pbm@example.org``."""
    local, _, domain = server_address.partition("@")
    token = reply_token(secret, board, userid)
    return f"{local}+{board}.{userid.lower()}.{token}@{domain}"


_TOKEN_LOCAL = re.compile(
    r"^(?P<base>[^+]+)\+(?P<board>[0-9]{1,9})\.(?P<userid>[^.]+)\.(?P<token>[0-9a-z]+)$"
)


@dataclass(frozen=True, slots=True)
class TokenAddress:
    """A parsed reply-token address (not yet checked against the secret)."""

    board: int
    userid: str
    token: str

    def is_valid(self, secret: str) -> bool:
        expected = reply_token(secret, self.board, self.userid)
        return hmac.compare_digest(expected, self.token)


def parse_token_address(address: str, server_address: str) -> TokenAddress | None:
    """The board, userid and token of a reply-token address of this server.

    None when ``address`` is not of the form ``LOCAL+B.UID.TOKEN@DOMAIN`` for
    the server's own local part and domain (case-insensitive).
    """
    local, _, domain = address.strip().strip("<>").rpartition("@")
    s_local, _, s_domain = server_address.rpartition("@")
    if domain.lower() != s_domain.lower():
        return None
    m = _TOKEN_LOCAL.match(local.lower())
    if m is None or m.group("base") != s_local.lower():
        return None
    return TokenAddress(int(m.group("board")), m.group("userid"), m.group("token"))
