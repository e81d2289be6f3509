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
from enum import StrEnum


class MailKind(StrEnum):
    """Who a mail is for, and so what it is counted against (``pbm.usecases.limits``)."""

    ANSWER = "answer"  # an answer to what its reader sent: his answer allowance
    BOARD = "board"  # a board's mail to one of its players: never held back
    FOLLOWER = "follower"  # a board's mail to a follower: his answer allowance
    NOTICE = "notice"  # news of his own account or board, told once: never held back
    CONFIRM = "confirm"  # asks an address to confirm a signup or an address change
    RESET = "reset"  # a password reset: within its account's own limits
    CHALLENGE = "challenge"  # a challenge someone sent him: at most one mail an hour
    # A board's news to a player that can wait (his opponent moved, an early reminder):
    # never held back, but left to his digest when he chose one (``usecases.digests``).
    MOVED = "moved"
    DIGEST = "digest"  # his digest: the boards that wait for him, at his times

    @property
    def counted(self) -> bool:
        """Whether it counts against its reader's answer allowance."""
        return self in (MailKind.ANSWER, MailKind.FOLLOWER)


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
    reader says for it, the ASCII diagram of the text part it stands for ("": none), and
    its legend (``pbm.games.legend``: shown under it)."""

    game: str
    position: str
    seat: int
    last: str
    alt: str
    diagram: str = ""
    legend: str = ""

    def to_json(self) -> str:
        return json.dumps(
            [self.game, self.position, self.seat, self.last, self.alt, self.diagram, self.legend]
        )

    @classmethod
    def from_json(cls, stored: str) -> Picture:
        # A row written before pictures had legends has six fields.
        game, position, seat, last, alt, diagram, *legend = json.loads(stored)
        words = str(legend[0]) if legend else ""
        return cls(str(game), str(position), int(seat), str(last), str(alt), str(diagram), words)


@dataclass(frozen=True, slots=True)
class Reply:
    """One mail to send.

    ``reply_as`` names the player (userid) whose reply-token address for
    ``board`` goes in ``Reply-To``; ``board`` is the board the mail is about,
    if any; ``in_reply_to`` the Message-ID of the mail that caused it, for
    threading; ``is_error`` marks the answer to a refused command; ``kind``
    says who it is for and what it counts against.
    ``reply_key`` names another context for ``reply_as``'s reply address than
    playing on the board: ``chat`` (answering a chat on it), ``follow`` (as
    its follower), ``account:NONCE`` (his account) or ``reset:NONCE`` (a
    password reset), see ``pbm.mail.addresses``.
    """

    to: str
    subject: str
    body: str
    board: int | None = None
    reply_as: str | None = None
    in_reply_to: str | None = None
    is_error: bool = False
    reply_key: str | None = None
    kind: MailKind = MailKind.ANSWER
    not_before: datetime | None = None  # sent no earlier than this (a held answer)
    attachments: tuple[Attachment, ...] = ()
    thread: str | None = None  # the subject of its board's thread (``usecases.threads``)
    picture: Picture | None = None  # the board in the HTML part (``usecases.pictures``)
    pictures: tuple[Picture, ...] = ()  # more boards in it, after ``picture`` (a digest)

    @property
    def counted(self) -> bool:
        """Whether it counts against its reader's answer allowance (``MailKind.counted``)."""
        return self.kind.counted


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


def pictures_json(reply: Reply) -> str | None:
    """How the outbox keeps the pictures of a reply: one as ``Picture.to_json``, more as a
    list of them (None: none)."""
    shown = ((reply.picture,) if reply.picture is not None else ()) + reply.pictures
    if len(shown) <= 1:
        return shown[0].to_json() if shown else None
    return json.dumps([json.loads(p.to_json()) for p in shown])


def pictures_of(stored: str | None) -> tuple[Picture, ...]:
    """The pictures the outbox kept (``pictures_json``)."""
    if not stored:
        return ()
    data = json.loads(stored)
    if data and isinstance(data[0], list):
        return tuple(Picture.from_json(json.dumps(one)) for one in data)
    return (Picture.from_json(stored),)
