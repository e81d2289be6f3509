"""Who reads a mail, and so which reply address it carries: every mail can be answered.

A mail about a board goes to a player of it (his reply address on the board:
a reply may hold a move, resign, chat...), to a follower (a follower's
address: unsubscribe, chat or show), or to someone else (no reply address).
Any other mail to an account's own address carries the account's reply
address (a reply is read as commands, or confirms a signup). A reply
address is only ever sent to its owner's registered address: a stranger who
writes in someone's name gets answers without one.

``addressed`` applies this to every reply the unit of work writes that does
not name its context itself (a chat names ``chat``; a confirmation the
account it asks about).
"""

from __future__ import annotations

from dataclasses import replace

from pbm.model import Account, Board
from pbm.refusals import UnknownBoard
from pbm.replies import Reply
from pbm.store.accounts import first_userid_at
from pbm.usecases.world import World

FOLLOW, CHAT = "follow", "chat"  # ``Reply.reply_key``s of the board contexts


def account_nonce(account: Account) -> str:
    """What makes an account's reply address its own: one signup, not a later one."""
    return account.created_at.isoformat()


def account_reply_key(account: Account) -> str:
    """``Reply.reply_key`` of mail whose reply acts for the account (``pbm.mail.addresses``)."""
    return f"account:{account_nonce(account)}"


def reader_on(board: Board, address: str) -> tuple[str, str | None] | None:
    """(userid, reply_key) of the player (key None) or follower (``follow``) of ``board``
    whose registered address is ``address``; None for anyone else."""
    wanted = address.lower()
    for uid in board.players:
        person = board.people.get(uid)
        if person is not None and person.email.lower() == wanted:
            return uid, None
    for follower in board.followers:
        person = board.people.get(follower.userid or "")
        if person is not None and person.email.lower() == wanted:
            return person.userid, FOLLOW
    return None


def addressed(world: World, reply: Reply) -> Reply:
    """``reply`` with the reply address of its reader, unless it names one already."""
    if reply.reply_as is not None:
        return reply
    if reply.board is not None:
        try:
            board = world.board(reply.board)
        except UnknownBoard:
            return reply
        found = reader_on(board, reply.to)
        if found is None:
            return reply
        return replace(reply, reply_as=found[0], reply_key=found[1])
    account = _account_at(world, reply.to)
    if account is None or not account.active:
        return reply
    return replace(reply, reply_as=account.userid, reply_key=account_reply_key(account))


def _account_at(world: World, address: str) -> Account | None:
    """The (first) account whose registered address is ``address``."""
    userid = first_userid_at(world.session, address)
    return world.find_account(userid) if userid is not None else None
