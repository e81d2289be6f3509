"""A reply to a player's digest (``pbm.usecases.digests``): a line ``B: MOVE`` for each
board he moves on.

The digest's reply address (``pbm+d.UID.TOKEN``, checked with his account's nonce
before this is reached) proves the player, as a board mail's does for its board: each
``B: ...`` line acts on board B as a reply to its board mail would (``4: a1:C+b2``,
``12: e4``, ``7: resign``, ``3: queue if e5 then Nf3``), and a complete command
(with its password) works too. Every line is its own request; their answers go out
as one mail (``usecases.answers``), so a bad line is refused by name while the others
are played.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pbm import commands, games
from pbm.commands import CommandError, Context, Parsed
from pbm.commands.grammar import mask
from pbm.mail.addresses import DIGEST, TokenAddress
from pbm.mail.inbound import Inbound
from pbm.mail.quotes import bottom_text, command_candidates
from pbm.refusals import BadRequest, Refuse, Refused, UnknownBoard
from pbm.usecases.answers import Quoted
from pbm.usecases.auth import Who
from pbm.usecases.unit import Action, Request

__all__ = ["DIGEST", "DigestReply"]

# "4: a1:C+b2", "12. e4", "Board 7: resign": a board, a colon (or a dot), the rest.
_LINE = re.compile(r"(?:board\s*)?([0-9]{1,9})\s*[:.)]\s*(\S.*)", re.IGNORECASE)
HOW = (
    "A reply to your digest holds a line for each board you move on: its number, a "
    "colon and the move, such as 4: a1:C+b2 (or anything a reply to that board's "
    "mail may hold)."
)


class DigestReply:
    """One reply to a digest, its lines read once each: ``requests`` and the passwords
    of the complete commands among them (``secrets``)."""

    def __init__(
        self,
        inbound: Inbound,
        token: TokenAddress,
        game_of: Callable[[int], str | None],
        limit: int,
    ) -> None:
        self.inbound = inbound
        self.token = token
        self.game_of = game_of
        self.limit = limit  # lines carried out at most (``limits.commands_per_mail``)
        self.secrets: set[str] = set()
        self._read: dict[str, tuple[int, Parsed | CommandError | None] | Parsed | None] = {}

    def read(self, line: str) -> tuple[int, Parsed | CommandError | None] | Parsed | None:
        """A ``B: ...`` line as (B, what it says), a complete command, or None."""
        if line not in self._read:
            found = _LINE.fullmatch(line.strip())
            if found is not None:
                board, rest = int(found.group(1)), found.group(2).strip()
                game = self.game_of(board)
                looks = games.looks_like_move_of(game)
                try:
                    said = commands.parse_reply(rest, looks, lenient=True)
                except CommandError as exc:
                    self._read[line] = (board, exc)
                else:
                    self._read[line] = (board, said)
            else:
                try:
                    whole = commands.parse(line)
                except CommandError:
                    whole = None
                if whole is not None:
                    self.secrets |= {w for i, w in enumerate(line.split()) if i in whole.secrets}
                self._read[line] = whole
        return self._read[line]

    def is_command(self, line: str) -> bool:
        return self.read(line) is not None

    def requests(self, message_id: str | None) -> list[Request]:
        """The requests of the reply's lines, in order (one refusal saying what a reply
        holds when it holds none)."""
        inbound, limit = self.inbound, self.limit
        new = inbound.new_text if inbound.new_text.strip() else bottom_text(inbound.text)
        lines, _ = command_candidates(
            inbound.text, new, "", reply_mode=False, is_command=self.is_command, limit=limit
        )
        if not lines:
            unread = BadRequest(HOW)
            unread.mistake = False
            return [self._refused(unread, "", message_id)]
        out = []
        for i, line in enumerate(lines[:limit]):
            key = message_id if (message_id is None or len(lines) == 1) else f"{message_id}#{i + 1}"
            out.append(self._request(line, key))
        if len(lines) > limit:
            why = BadRequest(
                f"Only the first {limit} lines of a mail are carried out; send the rest in "
                "another mail."
            )
            out.append(self._refused(why, "", f"{message_id}#more" if message_id else None))
        return out

    def _request(self, line: str, key: str | None) -> Request:
        found = self.read(line)
        if isinstance(found, Parsed):  # a complete command, with its password
            ctx = Context(sender=self.inbound.sender, message_id=key, game=found.game)
            action, who = found.build(ctx)
            quoted = Quoted(mask(line, found.secrets), action.board, found.game)
            return self._make(action, who, quoted, key)
        assert found is not None
        board, said = found
        game = self.game_of(board)
        if game is None:
            return self._refused(UnknownBoard(f"There is no board {board}."), line, key)
        if not isinstance(said, Parsed):
            why = str(said) if said is not None else f"{line!r} holds no move or command."
            return self._refused(BadRequest(why), line, key, board, game)
        ctx = Context(
            sender=self.inbound.sender,
            message_id=key,
            reply_board=board,
            reply_userid=self.token.userid,
        )
        action, who = said.build(ctx)
        return self._make(action, who, Quoted(line, board, game), key)

    def _refused(
        self,
        error: Refused,
        line: str,
        key: str | None,
        board: int | None = None,
        game: str | None = None,
    ) -> Request:
        return self._make(Refuse(error, board), None, Quoted(line, board, game), key)

    def _make(self, action: Action, who: Who | None, quoted: Quoted, key: str | None) -> Request:
        inbound = self.inbound
        return Request(
            action,
            who,
            sender=inbound.sender,
            in_reply_to=inbound.thread_id,
            message_id=key,
            quoted=quoted,
            envelope=inbound.return_path,
        )
