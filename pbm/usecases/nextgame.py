"""The next game first: ``games UID`` lists a player's boards, those waiting for his move
first, the least time left first; ``next UID PW`` answers with the board mail of the most
urgent one, to be answered by reply."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from datetime import timedelta

from pbm.model import Board, BoardStatus
from pbm.refusals import BadRequest
from pbm.replies import MailKind, Reply
from pbm.store.digests import lapsed_of
from pbm.timecontrol import duration_words
from pbm.usecases.auth import Actor
from pbm.usecases.boardtext import render_board_mail
from pbm.usecases.boardview import board_view
from pbm.usecases.clocks import clock_state
from pbm.usecases.moves import acting
from pbm.usecases.queries import summaries
from pbm.usecases.text import fmt_time
from pbm.usecases.unit import Decision
from pbm.usecases.waiting import boards_of, waiting_for
from pbm.usecases.world import World

WIDTH = 78


def _wrapped(line: str) -> list[str]:
    """A list's line within ``WIDTH``, what does not fit below it, indented."""
    return textwrap.wrap(line, WIDTH, subsequent_indent=" " * 13, break_on_hyphens=False) or [""]


def _line(board: Board, to_move: str, left: timedelta) -> str:
    number = board.move_number(board.ply + 1)
    them = f"{board.name(board.white)} - {board.name(board.black)}"
    head = f"Board {board.number:>5}  {board.game} {board.variant:<8}  {them}"
    return f"{head}  move {number}, {to_move} to move, {duration_words(left)} left"


@dataclass(frozen=True)
class PlayerGames:
    """``userid``'s boards for ``to``: in play (those waiting for him first, by the least
    time left, then the others by his opponents' time left), challenges waiting for an
    answer, and challenges that lapsed within ``clock.challenge_days``."""

    to: str
    userid: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        account = world.account(self.userid)
        now = world.now
        boards = boards_of(world, account.userid)
        mine = waiting_for(boards, account.userid, now)
        theirs = sorted(
            (b for b in boards if b.number not in {w.number for w in mine}),
            key=lambda b: (clock_state(b, now).forfeit_at, b.number),
        )
        lines: list[str] = []
        if mine:
            lines.append(f"Waiting for {account.display}'s move, the least time left first:")
            lines += [_line(w.board, account.display, w.left) for w in mine]
        if theirs:
            lines += [*([""] if lines else []), "Waiting for the opponent's move:"]
            for b in theirs:
                clock = clock_state(b, now)
                lines.append(_line(b, b.name(clock.to_move), clock.left))
        challenges = [
            s for s in summaries(world.session, BoardStatus.WAITING, account.userid) if s.to_move
        ]
        days = world.config.clock.challenge_days
        if challenges:
            lines += [*([""] if lines else []), f"Challenges (lapsing after {days} days):"]
            lines += [
                f"Board {c.board:>5}  {c.game} {c.variant:<8}  {c.white} - {c.black}  "
                f"{c.to_move} to accept by {fmt_time(c.created_at + timedelta(days=days))}"
                for c in challenges
            ]
        lapsed = lapsed_of(world.session, account.userid, now - timedelta(days=days))
        if lapsed:
            lines += [*([""] if lines else []), "Challenges that lapsed unanswered:"]
            lines += [
                f"Board {number:>5}  with {world.account(other).display}, lapsed {fmt_time(at)}"
                for number, other, at in lapsed
            ]
        if not lines:
            lines = [f"{account.display} has no boards in play and no challenges."]
        body = "\n".join(out for line in lines for out in _wrapped(line)) + "\n"
        subject = f"pbm - active boards of {account.display}"
        return Decision((Reply(to=self.to, subject=subject, body=body),))


@dataclass(frozen=True)
class Next:
    """The board mail of the acting player's most urgent board (the least time left of
    those waiting for his move), answerable by reply."""

    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        waiting = waiting_for(boards_of(world, me.userid), me.userid, world.now)
        if not waiting:
            idle = BadRequest(
                f"No board waits for {me.display}'s move: your opponents are to move "
                f"everywhere. The list of your boards: games {me.display}"
            )
            idle.mistake = False
            raise idle
        first, rest = waiting[0], waiting[1:]
        headline = f"Your most urgent board: {duration_words(first.left)} left."
        if rest:
            more = ", ".join(f"board {w.number} ({duration_words(w.left)})" for w in rest[:5]) + (
                ", ..." if len(rest) > 5 else ""
            )
            headline += f" Waiting too: {more}."
        subject, body = render_board_mail(board_view(first.board, world.now), me.display, headline)
        reply = Reply(
            to=me.account.email,
            subject=subject,
            body=body,
            board=first.number,
            reply_as=me.userid,
            kind=MailKind.BOARD,
        )
        return Decision((reply,))
