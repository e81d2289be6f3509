"""What the use cases produce instead of sending mail: replies.

A ``Reply`` is who gets what text. Use cases return replies; the unit of work
writes them to the outbox in the same transaction as the change that caused
them; the mail side (``pbm.mail.message``) turns them into messages, with a
``Reply-To`` address made from ``board`` and ``reply_as``, and the outbox
sender delivers them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reply:
    """One mail to send.

    ``reply_as`` names the player (userid) whose reply-token address for
    ``board`` goes in ``Reply-To``; ``board`` is the board the mail is about,
    if any; ``in_reply_to`` the Message-ID of the mail that caused it, for
    threading; ``is_error`` marks the answer to a refused command.
    ``reply_key`` names another context for ``reply_as``'s reply address than
    the board: ``account:NONCE`` (his account) or ``reset:NONCE`` (a password
    reset), see ``pbm.mail.addresses``.
    ``counted``: an automatic mail to an address that does not play or follow
    the game it is about (help, errors, answers, account mail): the site's
    answer limit counts it. A board's mails to its players and followers are
    not counted.
    """

    to: str
    subject: str
    body: str
    board: int | None = None
    reply_as: str | None = None
    in_reply_to: str | None = None
    is_error: bool = False
    counted: bool = True
    reply_key: str | None = None
