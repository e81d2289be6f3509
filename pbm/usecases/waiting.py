"""The next game first: the boards that wait for a player's move, the one with the least
time left first, and which board mails can wait for his digest.

``waiting_for`` orders boards (pure); ``boards_of`` reads a player's boards in play;
``with_next`` names, in the board mail that answers a player's move, the board that
waits for him next ("Next: board 7, 1 day 3 hours left"); ``news_kinds`` and
``nag_kind`` mark the board mails that can wait for a digest (``MailKind.MOVED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pbm.model import Board, BoardOf, BoardStatus
from pbm.replies import MailKind, Reply
from pbm.store.boards import load_boards
from pbm.store.digests import boards_in_play_of
from pbm.timecontrol import Kind, duration_words
from pbm.usecases.clocks import ClockState, clock_state
from pbm.usecases.world import World


@dataclass(frozen=True, slots=True)
class Waiting:
    """A board in play where it is ``userid``'s move: his time left and his time-out."""

    board: Board
    seat: int
    left: timedelta
    time_out: datetime

    @property
    def number(self) -> int:
        return self.board.number


def waiting_for(boards: Iterable[Board], userid: str, now: datetime) -> list[Waiting]:
    """The boards of ``boards`` that wait for ``userid``'s move, the least time left (the
    earliest time-out) first."""
    found = []
    for board in boards:
        seat = board.seat_of(userid)
        if board.status != BoardStatus.ACTIVE or seat is None or board.state.to_move != seat:
            continue
        clock = clock_state(board, now)
        found.append(Waiting(board, seat, clock.left, clock.forfeit_at))
    return sorted(found, key=lambda w: (w.time_out, w.number))


def boards_of(world: World, userid: str) -> list[Board]:
    """``userid``'s boards in play, as values (what anyone may see of them: no trees, no
    followers), by number."""
    uid = userid.lower()
    world.reads.add(("boards of", uid))
    numbers = boards_in_play_of(world.session, uid)
    config = world.config
    loaded = load_boards(
        world.session, numbers, now=world.now, reminders=config.clock.reminders, public=True
    )
    return [loaded[n] for n in numbers if n in loaded]


def next_line(waiting: Sequence[Waiting]) -> str:
    """``Next: board 7, 1 day 3 hours left.``; "" when no board waits."""
    if not waiting:
        return ""
    first = waiting[0]
    more = f" ({len(waiting) - 1} more wait)" if len(waiting) > 2 else ""
    more = " (1 more waits)" if len(waiting) == 2 else more
    return f"Next: board {first.number}, {duration_words(first.left)} left{more}."


def with_next(world: World, reply: Reply, sender: str | None, board_of: BoardOf) -> Reply:
    """The board mail that answers a player's move (he is not to move on its board now),
    with the board that waits for him next: its last line."""
    if (
        sender is None
        or reply.board is None
        or reply.kind is not MailKind.BOARD
        or reply.reply_key is not None
        or reply.reply_as is None
        or reply.to.lower() != sender.lower()
    ):
        return reply
    board = board_of(reply.board)
    seat = board.seat_of(reply.reply_as) if board is not None else None
    if board is None or seat is None or board.status != BoardStatus.ACTIVE:
        return reply
    if board.state.to_move == seat:
        return reply
    last = board.moves[-1] if board.moves else None
    if last is None or last.created_at != world.now or last.userid != reply.reply_as:
        return reply  # not the mail of his move (a show, a chat...)
    others = [b for b in boards_of(world, reply.reply_as) if b.number != board.number]
    line = next_line(waiting_for(others, reply.reply_as, world.now))
    if not line:
        return reply
    return replace(reply, body=f"{reply.body.rstrip()}\n\n{line}\n")


def news_kinds(board: Board, replies: Sequence[Reply], mover: str) -> list[Reply]:
    """``replies`` (a move's board mails), that to the player now to move, who did not make
    the move, marked as news that can wait for his digest (``MailKind.MOVED``)."""
    if board.status != BoardStatus.ACTIVE:
        return list(replies)  # the end of a game comes at once
    to_move = board.player_at(board.state.to_move)
    if to_move == mover:
        return list(replies)
    return [
        replace(r, kind=MailKind.MOVED)
        if r.kind is MailKind.BOARD and r.reply_as == to_move and r.reply_key is None
        else r
        for r in replies
    ]


def nag_kind(clock: ClockState, reminders: Sequence[timedelta]) -> MailKind:
    """A reminder at its last warning (under the smallest of a time bank's reminders: an
    hour, by default) comes at once; an earlier one can wait for a digest."""
    last = min(reminders, default=timedelta(0))
    if clock.control.kind is not Kind.CLASSIC and clock.left <= last:
        return MailKind.BOARD
    return MailKind.MOVED
