"""Reply-token addresses: a player answers a board's mail by Reply, with no password.

``pbm+12.bob.3f9a0c1d2e@example.org`` lets bob act on board 12: the token is
an HMAC of the board and the userid under ``mail.secret``, so only mail the
server sent to bob carries it. Addresses of mails already sent stay valid as
long as the secret does.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

TOKEN_LENGTH = 10

_TOKEN_LOCAL = re.compile(
    r"^(?P<base>[^+]+)\+(?P<board>[0-9]{1,9})\.(?P<userid>[^.]+)\.(?P<token>[0-9a-z]+)$"
)


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


@dataclass(frozen=True, slots=True)
class TokenAddress:
    """A parsed reply-token address (not yet checked against the secret)."""

    board: int
    userid: str
    token: str

    def is_valid(self, secret: str) -> bool:
        """Whether the token is the one ``secret`` makes (never with an empty secret)."""
        if not secret:
            return False
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


def accepts(address: str, server_address: str) -> bool:
    """Whether mail for ``address`` is ours: the server's address or a reply-token one."""
    addr = address.strip().strip("<>")
    if addr.lower() == server_address.lower():
        return True
    return parse_token_address(addr, server_address) is not None
