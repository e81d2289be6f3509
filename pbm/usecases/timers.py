"""What the clocks do: reminders, losses on time, and the site-wide pause.

``boards_due`` finds the boards whose reminder or end of time may be due,
by an index; ``RunClock`` sends the reminder, spends a vacation day of a
player whose time bank ran out, or ends the board on time, decided afresh
for each board, so a move that arrives meanwhile wins and a timer that runs
twice does nothing twice. ``PauseClocks`` and ``ResumeClocks`` stop and
restart every clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pbm.games import Outcome, Termination, can_win, time_out_outcome
from pbm.model import Account, Away, Board, BoardStatus, Pause
from pbm.refusals import BadRequest
from pbm.replies import Reply
from pbm.store.lists import due_boards
from pbm.store.stops import load_pauses
from pbm.timecontrol import Kind, TimeControl, duration_words
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.boardtext import render_board_mail
from pbm.usecases.boardview import board_view
from pbm.usecases.changes import BoardChange, PauseChange, TimerChange, VacationChange
from pbm.usecases.clocks import clock_state, next_timer
from pbm.usecases.endings import finish
from pbm.usecases.text import fmt_time
from pbm.usecases.unit import Decision
from pbm.usecases.vacations import SPENT, days_words, time_left
from pbm.usecases.waiting import nag_kind
from pbm.usecases.world import World

DAY = timedelta(days=1)


@dataclass(frozen=True)
class RunClock:
    """Send the due reminder of a board, or end it on time; else, when nothing is due,
    write when to look again (``TimerChange``)."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        now = world.now
        if board.status != BoardStatus.ACTIVE:
            return Decision()
        clock = clock_state(board, now)
        if clock.paused_since is not None:
            return Decision()
        late = board.people[clock.to_move]
        if clock.forfeit_due:
            if clock.control.kind is not Kind.CLASSIC and world.config.clock.spend_vacation:
                spent = _spend_a_vacation_day(world, board, late, clock.forfeit_at)
                if spent is not None:
                    return spent
            return _out_of_time(board, late, clock.seat, clock.control, now)
        if clock.nag_due:
            after = replace(board, last_nag_at=now)
            view = board_view(after, now)
            if clock.control.kind is Kind.CLASSIC:
                headline = (
                    f"Reminder: it is your move on board {board.number}, {late.display}, and "
                    f"you have not moved for {clock.running.days} days. Unless you move, the "
                    f"board is forfeited on {fmt_time(view.forfeit_at)}."
                )
            else:
                headline = (
                    f"Reminder: it is your move on board {board.number}, {late.display}, and "
                    f"you have {duration_words(clock.left)} left. Unless you move, you lose "
                    f"on time on {fmt_time(clock.forfeit_at)}."
                )
            subject, body = render_board_mail(view, late.display, headline)
            nag = Reply(
                to=late.email,
                subject=f"Nag: {subject}",
                body=body,
                board=board.number,
                reply_as=late.userid,
                kind=nag_kind(clock, board.reminders),  # the last comes at once, even to a digest
            )
            return Decision((nag,), (BoardChange(board, after),))
        # Not due: its moment was early (a stop came meanwhile). When to look again.
        return Decision(changes=(TimerChange(board, next_timer(board, now)),))


def _out_of_time(
    board: Board, late: Account, seat: int, control: TimeControl, now: datetime
) -> Decision:
    """The board ends on time: the late player loses, or draws when his opponent could
    not have won (chess: a lone king); or as the game says where its rules end it
    otherwise (``time_out_outcome``: Go's scoring phase ends by the marking that stands)."""
    other = board.name(board.player_at(1 - seat))
    ruled = time_out_outcome(board.state, seat)
    if ruled is not None:
        outcome = ruled
        headline = (
            f"{late.display} ran out of time on board {board.number}; by the rules the game "
            "ends as it stands."
        )
    elif control.kind is Kind.CLASSIC:
        outcome = Outcome(1 - seat, Termination.FORFEIT)
        headline = (
            f"{late.display} did not move for {board.forfeit_days} days: board "
            f"{board.number} is forfeited and {other} wins."
        )
    elif can_win(board.state, 1 - seat):
        outcome = Outcome(1 - seat, Termination.FORFEIT)
        headline = f"{late.display} ran out of time on board {board.number}: {other} wins on time."
    else:
        outcome = Outcome(None, Termination.FORFEIT)
        headline = (
            f"{late.display} ran out of time on board {board.number}, but {other} has too "
            "little left to win: the game is drawn."
        )
    after = finish(board, outcome, now)
    return Decision(board_mails(after, now, headline), (BoardChange(board, after),))


def _spend_a_vacation_day(
    world: World, board: Board, late: Account, out_at: datetime
) -> Decision | None:
    """A day of ``late``'s yearly vacation (what is left of one, the last) spent from the
    moment his time ran out, told to both players; None when he has none left."""
    year = out_at.year
    left = time_left(world, late.userid, year)
    if left <= timedelta(0):
        return None
    spent = min(left, DAY)
    day = Away(late.userid, out_at, out_at + spent, kind=SPENT)
    # His reminders are behind him: none comes again while the day lasts.
    after = replace(board, vacations=(*board.vacations, day), last_nag_at=world.now)
    allowance = world.config.clock.vacation_days_per_year
    if spent == DAY:
        what = "a vacation day of his is spent"
    else:
        what = f"the last {duration_words(spent)} of his vacation days are spent"
    headline = (
        f"{late.display}'s time ran out on board {board.number}: {what}, and his "
        f"clocks stand still until {fmt_time(day.ends_at)}. Vacation days left in {year}: "
        f"{days_words(left - spent)} of {allowance}."
    )
    changes = (VacationChange(None, day), BoardChange(board, after))
    return Decision(board_mails(after, world.now, headline), changes)


def boards_due(world: World) -> list[int]:
    """Boards in play whose reminder or end of time may be due now, by their ``timer_at``
    (an index: no board is loaded to find them); none while the clocks are paused."""
    pauses = load_pauses(world.session)
    if any(p.ended_at is None for p in pauses):
        return []
    return due_boards(world.session, world.now)


@dataclass(frozen=True)
class PauseClocks:
    """Stop every clock (a site outage): ``pbm clock pause``."""

    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        open_ = next((p for p in world.pauses() if p.ended_at is None), None)
        if open_ is not None:
            raise BadRequest(f"The clocks are already stopped since {fmt_time(open_.started_at)}.")
        return Decision(changes=(PauseChange(None, Pause(world.now, None)),))


@dataclass(frozen=True)
class ResumeClocks:
    """Start the clocks again; the paused span is not counted."""

    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        open_ = next((p for p in world.pauses() if p.ended_at is None), None)
        if open_ is None:
            raise BadRequest("The clocks are not stopped.")
        ended = replace(open_, ended_at=max(world.now, open_.started_at))
        return Decision(changes=(PauseChange(open_, ended),))
