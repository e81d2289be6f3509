"""What the use cases produce instead of sending mail: replies.

A ``Reply`` is who gets what text. Use cases return replies; the unit of work
writes them to the outbox in the same transaction as the change that caused
them; the mail side (``pbm.mail.message``) turns them into messages, with a
``Reply-To`` address made from ``board`` and ``reply_as``, and the outbox
sender delivers them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file that goes with a mail (a game record): its name, MIME type and text."""

    filename: str
    content_type: str
    text: str


@dataclass(frozen=True, slots=True)
class Picture:
    """The board a mail shows as a picture in its HTML part: the game, its position
    (``GameState.dump``), the reader's seat, the last move's notation, the words a screen
    reader says for it, and the ASCII diagram of the text part it stands for ("": none)."""

    game: str
    position: str
    seat: int
    last: str
    alt: str
    diagram: str = ""

    def to_json(self) -> str:
        return json.dumps([self.game, self.position, self.seat, self.last, self.alt, self.diagram])

    @classmethod
    def from_json(cls, stored: str) -> Picture:
        game, position, seat, last, alt, diagram = json.loads(stored)
        return cls(str(game), str(position), int(seat), str(last), str(alt), str(diagram))


@dataclass(frozen=True, slots=True)
class Reply:
    """One mail to send.

    ``reply_as`` names the player (userid) whose reply-token address for
    ``board`` goes in ``Reply-To``; ``board`` is the board the mail is about,
    if any; ``in_reply_to`` the Message-ID of the mail that caused it, for
    threading; ``is_error`` marks the answer to a refused command.
    ``reply_key`` names another context for ``reply_as``'s reply address than
    playing on the board: ``chat`` (answering a chat on it), ``follow`` (as
    its follower), ``account:NONCE`` (his account) or ``reset:NONCE`` (a
    password reset), see ``pbm.mail.addresses``.
    ``counted``: an automatic mail to an address that does not play or follow
    the game it is about (help, errors, answers, account mail): the site's
    answer limit counts it. A board's mails to its players and followers are
    not counted. ``waits``: one that someone else asked for (a challenge): past
    the limit it is held (``not_before``), never dropped.
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
    waits: bool = False  # past the answer limit: held until answers resume, not dropped
    not_before: datetime | None = None  # sent no earlier than this (a held answer)
    attachments: tuple[Attachment, ...] = ()
    thread: str | None = None  # the subject of its board's thread (``usecases.threads``)
    picture: Picture | None = None  # the board in the HTML part (``usecases.pictures``)


def attachments_json(attachments: tuple[Attachment, ...]) -> str | None:
    """How the outbox keeps a reply's attachments (None: none)."""
    if not attachments:
        return None
    return json.dumps([[a.filename, a.content_type, a.text] for a in attachments])


def attachments_of(stored: str | None) -> tuple[Attachment, ...]:
    """The attachments the outbox kept (``attachments_json``)."""
    if not stored:
        return ()
    return tuple(Attachment(str(f), str(t), str(x)) for f, t, x in json.loads(stored))
