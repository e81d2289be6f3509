"""A rematch with one word: after a game, ``rematch`` challenges the opponent to the same
game, variant, options and time control, colours swapped (``challenges.Challenge``)."""

from __future__ import annotations

from dataclasses import dataclass

from pbm.model import OPEN, BoardStatus
from pbm.refusals import GameOver, NotAPlayer
from pbm.usecases.auth import Actor
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import acting
from pbm.usecases.unit import Decision
from pbm.usecases.world import World


@dataclass(frozen=True)
class Rematch:
    """Challenge the opponent of the finished ``board`` to the same game, colours swapped;
    ``comment`` goes with the challenge."""

    board: int
    comment: str = ""

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        if board.seat_of(me.userid) is None:
            raise NotAPlayer(f"{me.display} did not play on board {board.number}.")
        if board.status in OPEN:
            still = "waits for its challenge to be accepted"
            if board.status == BoardStatus.ACTIVE:
                still = "is still in play"
            raise GameOver(f"Board {board.number} {still}: a rematch is for a game that has ended.")
        if board.status == BoardStatus.CANCELLED:
            raise GameOver(
                f"Board {board.number} was cancelled: a rematch is for a game played to its "
                f"end. Challenge anew: {board.game} challenge {me.display} "
                f"{board.name(board.player_at(1 - (board.seat_of(me.userid) or 0)))}"
            )
        options = dict(board.options)
        if board.computer_level is not None:
            options["level"] = str(board.computer_level)
        comment = self.comment.strip() or f"A rematch of board {board.number}, colours swapped."
        swapped = Challenge(
            board.game,
            board.black,
            board.white,
            sender=me.account.email,
            variant=board.variant,
            options=options,
            comment=comment,
            time=board.time_control,
        )
        return swapped.decide(world, actor)
