"""Reply-token addresses: a mail can be answered by Reply, with no password.

Every mail the server sends about a board or an account carries a Reply-To
made here, one per reader and context, holding an HMAC under
``mail.secret`` that only the server can make:

- ``pbm+12.bob.TOKEN@example.org``: bob on board 12 (the token of the
  board and the userid). Addresses of mails already sent stay valid as long
  as the secret does.
- ``pbm+c12.bob.TOKEN@example.org``: bob answering a chat on board 12 (what
  is no command in the reply is chat).
- ``pbm+f12.bob.TOKEN@example.org``: bob following board 12 (a reply can
  only unsubscribe, chat or show).
- ``pbm+a.bob.TOKEN@example.org``: bob's account (the token also covers a
  nonce of the account, so an address made for one signup never confirms a
  later one of the same userid).
- ``pbm+r.bob.TOKEN@example.org``: a password reset of bob's, usable once
  (its nonce is forgotten when used).
- ``pbm+e.bob.TOKEN@example.org``: bob's new address, asked for and not yet
  confirmed: a reply from it confirms it (its nonce is the request's).
- ``pbm+d.bob.TOKEN@example.org``: bob's digest: a reply moves on the boards it
  lists, a line ``B: MOVE`` each (its nonce is his account's, as ``a``).
- ``pbm+bounce-ID.TOKEN@example.org``: the return path (VERP) of outbox row
  ID, so a bounce names the mail that failed and cannot be forged.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

TOKEN_LENGTH = 10
BOARD, CHAT, FOLLOW, ACCOUNT, RESET = "board", "chat", "follow", "account", "reset"
ADDRESS, DIGEST = "address", "digest"
BOARD_KINDS = (BOARD, CHAT, FOLLOW)  # contexts on a board: the address names it
NONCED = (ACCOUNT, RESET, ADDRESS, DIGEST)  # their tokens cover a nonce the account keeps
_KIND_WORDS = {"a": ACCOUNT, "r": RESET, "e": ADDRESS, "d": DIGEST, "c": CHAT, "f": FOLLOW}
_WORD_OF_KIND = {v: k for k, v in _KIND_WORDS.items()}

_TOKEN_LOCAL = re.compile(
    r"^(?P<base>[^+]+)\+(?P<key>[cf]?[0-9]{1,9}|a|r|e|d)\.(?P<userid>[^.]+)\.(?P<token>[0-9a-z]+)$"
)
_BOUNCE_LOCAL = re.compile(r"^(?P<base>[^+]+)\+bounce-(?P<id>[0-9]{1,12})\.(?P<token>[0-9a-z]+)$")


def _mac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()[:TOKEN_LENGTH]


def reply_token(secret: str, board: int, userid: str) -> str:
    """The secret token that lets ``userid`` act on ``board`` by reply."""
    return _mac(secret, f"{board}.{userid.lower()}")


def _token(secret: str, kind: str, board: int | None, userid: str, nonce: str) -> str:
    if kind == BOARD:
        assert board is not None
        return reply_token(secret, board, userid)
    if kind in BOARD_KINDS:
        return _mac(secret, f"{kind}.{board}.{userid.lower()}")
    return _mac(secret, f"{kind}.{userid.lower()}.{nonce}")


def token_address(server_address: str, secret: str, board: int, userid: str) -> str:
    """``pbm+12.bob.k3x9q2abcd@example.org`` for ``pbm@example.org``."""
    return context_address(server_address, secret, BOARD, userid, board=board)


def context_address(
    server_address: str,
    secret: str,
    kind: str,
    userid: str,
    *,
    board: int | None = None,
    nonce: str = "",
) -> str:
    """The reply address of ``userid`` in a context: a board (as a player, answering a
    chat, as a follower), his account, a reset."""
    local, _, domain = server_address.partition("@")
    if kind in BOARD_KINDS:
        assert board is not None
        key = ("" if kind == BOARD else _WORD_OF_KIND[kind]) + str(board)
    else:
        key = _WORD_OF_KIND[kind]
    token = _token(secret, kind, board, userid, nonce)
    return f"{local}+{key}.{userid.lower()}.{token}@{domain}"


@dataclass(frozen=True, slots=True)
class TokenAddress:
    """A parsed reply-token address (not yet checked against the secret)."""

    board: int | None
    userid: str
    token: str
    kind: str = BOARD

    def is_valid(self, secret: str, nonce: str = "") -> bool:
        """Whether the token is the one ``secret`` makes (never with an empty secret).

        ``nonce``: the account's (for the ``NONCED`` kinds).
        """
        if not secret:
            return False
        expected = _token(secret, self.kind, self.board, self.userid, nonce)
        return hmac.compare_digest(expected, self.token)


def parse_token_address(address: str, server_address: str) -> TokenAddress | None:
    """The context, userid and token of a reply-token address of this server.

    None when ``address`` is not of the form ``LOCAL+KEY.UID.TOKEN@DOMAIN`` for
    the server's own local part and domain (case-insensitive).
    """
    local = _ours(address, server_address)
    m = _TOKEN_LOCAL.match(local) if local is not None else None
    if m is None:
        return None
    key, userid, token = m.group("key"), m.group("userid"), m.group("token")
    if key in ("a", "r", "e", "d"):
        return TokenAddress(None, userid, token, _KIND_WORDS[key])
    if key[0] in "cf":
        return TokenAddress(int(key[1:]), userid, token, _KIND_WORDS[key[0]])
    return TokenAddress(int(key), userid, token)


def thread_root(server_address: str, secret: str, board: int) -> str:
    """The Message-ID every mail about ``board`` names first in ``References`` (RFC 5322
    3.6.4): the root of the game's thread in a mail client. No mail has it; clients
    thread under it all the same. Made with the secret: another site's board 1 differs."""
    domain = server_address.rpartition("@")[2]
    return f"<pbm.board-{board}.{_mac(secret, f'thread.{board}')}@{domain}>"


def bounce_address(server_address: str, secret: str, outbox_id: int) -> str:
    """The return path of outbox row ``outbox_id`` (VERP): ``pbm+bounce-ID.TOKEN@domain``."""
    local, _, domain = server_address.partition("@")
    return f"{local}+bounce-{outbox_id}.{_mac(secret, f'bounce.{outbox_id}')}@{domain}"


def parse_bounce_address(address: str, server_address: str, secret: str) -> int | None:
    """The outbox row a bounce address names, if its token is ours."""
    local = _ours(address, server_address)
    m = _BOUNCE_LOCAL.match(local) if local is not None else None
    if m is None or not secret:
        return None
    row = int(m.group("id"))
    return row if hmac.compare_digest(_mac(secret, f"bounce.{row}"), m.group("token")) else None


def _ours(address: str, server_address: str) -> str | None:
    """The local part of ``address`` (lower case) if it is in our domain under our base."""
    local, _, domain = address.strip().strip("<>").rpartition("@")
    s_local, _, s_domain = server_address.rpartition("@")
    local = local.lower()
    if domain.lower() != s_domain.lower() or local.partition("+")[0] != s_local.lower():
        return None
    return local


def ours(address: str, server_address: str) -> bool:
    """Whether ``address`` is the server's or a plus address of it (``pbm+ANYTHING@``
    its domain), whatever its token."""
    return _ours(address, server_address) is not None


def accepts(address: str, server_address: str, secret: str) -> bool:
    """Whether mail for ``address`` is ours: the server's address, or a reply or bounce
    address whose token is one ``secret`` makes.

    What ``secret`` alone signs is checked here, at RCPT, without the database: board,
    chat and follow addresses (the board and the userid) and bounce addresses (the
    outbox row). Account, reset and new-address addresses are taken by their form:
    their token also covers a nonce of the account's, which only the database knows;
    the inbox runner checks them when it reads the mail and answers a wrong one.
    """
    addr = address.strip().strip("<>")
    if addr.lower() == server_address.lower():
        return True
    local = _ours(addr, server_address)
    if local is None:
        return False
    if _BOUNCE_LOCAL.match(local):
        return parse_bounce_address(addr, server_address, secret) is not None
    token = parse_token_address(addr, server_address)
    if token is None:
        return False
    return token.kind in NONCED or token.is_valid(secret)
