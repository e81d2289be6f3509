"""A move sent without a board: to the server's address, or in a reply to a mail that
names none (the help, an account mail, the From address instead of the Reply-To).

A player with one active board whose turn it is means that board: the move
is played there, as if he had replied to its board mail, when the mail
proves it is his (it answers a mail the server sent to his address, which
only he has seen) and comes from his registered address (``auth.from_owner``).
Otherwise, or with several boards, he gets the list of his boards with
each one's reply address; nothing is changed, and no error is counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pbm.model import BoardStatus
from pbm.replies import Reply
from pbm.usecases.auth import Actor, ByReply, from_owner
from pbm.usecases.moves import Move
from pbm.usecases.text import wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World


@dataclass(frozen=True)
class UnaddressedMove:
    """``text`` from ``sender`` with no board: ``addresses`` are the reply addresses of the
    sender's open boards (board -> (userid, address)); ``proven``: the mail answers one
    the server sent to that address."""

    sender: str
    envelope: str
    text: str
    comment: str
    addresses: Mapping[int, tuple[str, str]]
    proven: bool
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        boards = [world.board(n) for n in sorted(self.addresses)]
        to_move = [
            b
            for b in boards
            if b.status == BoardStatus.ACTIVE
            and b.seat_of(self.addresses[b.number][0]) == b.state.to_move
            and b.rules.looks_like_move(self.text)
        ]
        if self.proven and len(to_move) == 1:
            (board,) = to_move
            account = world.account(self.addresses[board.number][0])
            from_owner(account, self.sender, self.envelope, board.number)
            move = Move(board.number, self.text, None, self.comment)
            return move.decide(world, Actor(account, ByReply(board.number)))
        lines = [
            *wrap(
                f"Your mail held the move {self.text}, but no board: a move is played on a "
                "board by replying to its board mail (no password needed), or with the "
                "command shown for it below."
            ),
            "",
        ]
        if not self.proven and len(to_move) == 1:
            lines += [*wrap("This mail did not answer one of the server's: reply to one."), ""]
        lines.append("Your open boards, the address to send a move to, and the command:")
        for b in boards:
            userid, address = self.addresses[b.number]
            if b.status != BoardStatus.ACTIVE:
                turn = "waiting for the challenge to be accepted"
            elif b.seat_of(userid) == b.state.to_move:
                turn = "your turn"
            else:
                turn = f"{b.name(b.player_at(b.state.to_move))} to move"
            lines += [
                "",
                f"  Board {b.number}: {b.rules.title}, {b.name(b.white)} vs {b.name(b.black)} "
                f"({turn})",
                f"    {address}",
            ]
            if b.status == BoardStatus.ACTIVE:
                written = self.text if b.rules.looks_like_move(self.text) else "MOVE"
                lines.append(f"    {b.game} move {b.number} {b.name(userid)} PASSWORD {written}")
        body = "\n".join(lines) + "\n"
        return Decision((Reply(to=self.sender, subject="pbm - which board?", body=body),))
