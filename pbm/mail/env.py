"""What the inbox steps may know of the site: its settings, and a few looks at its database.

The steps (``pbm.mail.pipeline``) and the reading of a mail's lines
(``pbm.mail.command_lines``) read the database only through an ``Env``; the inbox
runner makes one over a snapshot, the tests over plain functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pbm.config import Config
from pbm.model import Account


@dataclass(frozen=True)
class Env:
    """The site's settings and the looks at its database a mail's steps need."""

    config: Config
    seen: Callable[[str], bool]  # whether a Message-ID was acted on
    game_of: Callable[[int], str | None]  # the game of a board (None: no such board)
    account: Callable[[str], Account | None] = lambda userid: None  # by userid
    # (userid, board) of the open boards of the accounts of an address
    open_boards: Callable[[str], list[tuple[str, int]]] = lambda address: []
    # the addresses that the replies with these Message-IDs went to
    sent_to: Callable[[Sequence[str]], set[str]] = lambda message_ids: set()
    known: Callable[[str], bool] = lambda address: False  # whether an account has it
