"""What a board mail shows of a board: a pure function of a board and the time, no
database.

``board_view`` makes a ``BoardView``: display names, the moves as the mail lists
them, the clock dates (the next reminder and the forfeit date as the service
computed them, with vacations and site pauses taken into account; a time bank's
lines) and, on a rated final board, each player's rating change. The text of
the mail is ``pbm.usecases.boardtext``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from pbm.games import GameState, Result, winner_of
from pbm.model import Board, BoardStatus
from pbm.timecontrol import Kind, duration_words
from pbm.usecases.clocks import ClockState, clock_of, clock_state, control_meaning
from pbm.usecases.text import fmt_time


@dataclass(frozen=True, slots=True)
class MoveLine:
    """One played turn as the board mail shows it; ``ply`` is its move number."""

    ply: int
    userid: str
    notation: str
    comment: str
    at: datetime
    queued: bool = False  # played from the player's queue


@dataclass(frozen=True, slots=True)
class TimeLeft:
    """One player's time on a board whose clock keeps each player's time (not classic)."""

    seat: int
    name: str  # display form
    left: timedelta

    @property
    def words(self) -> str:
        """``4 days 23 hours``."""
        return duration_words(self.left)


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One player's rating before and after a rated game."""

    name: str
    before: int
    after: int


@dataclass(frozen=True)
class BoardView:
    """Everything a board mail shows. Player names are display forms."""

    board: int
    game: str  # the game's command word
    title: str  # the game's title, for people
    seat_names: tuple[str, str]
    variant: str
    options: Mapping[str, str]
    white: str
    black: str
    status: BoardStatus
    result: Result | None
    termination: str | None
    state: GameState
    moves: Sequence[MoveLine]
    created_at: datetime
    last_move_at: datetime | None
    nag_days: int
    forfeit_days: int
    undo_request_by: str | None = None
    cancel_request_by: str | None = None
    draw_offer_by: str | None = None
    subscribers: Sequence[str] = field(default_factory=tuple)
    next_nag_at: datetime | None = None  # the next reminder (None: no more before forfeit)
    forfeit_at: datetime | None = None
    clock_notes: Sequence[str] = field(default_factory=tuple)  # vacations, site pause
    clock_lines: Sequence[str] = field(default_factory=tuple)  # a time bank's, for the mail
    time_control: str = ""  # the clock's spec ("fischer 10d+36h max 10d"), in play
    time_meaning: str = ""  # ... in words ("10 days to start, ...")
    times_left: Sequence[TimeLeft] = field(default_factory=tuple)  # a time bank's, each seat
    forfeit_local: str = ""  # forfeit_at in the clock's zone when that is not UTC
    rating_changes: Sequence[RatingChange] = field(default_factory=tuple)
    waiting_for: str | None = None  # a challenge: the player who has yet to accept
    # The number players give a ply (chess counts pairs); ``Game.move_number``.
    move_number: Callable[[int], int] = int
    position: str = ""  # ``state`` as the board stores it (``GameState.dump``), if known
    event: str | None = None  # the event it is played in: "Tournament 3 (...), round 2"

    @property
    def players(self) -> tuple[str, str]:
        return (self.white, self.black)

    @property
    def to_move_name(self) -> str:
        return self.players[self.state.to_move]

    @property
    def winner(self) -> int | None:
        """The winning seat of a finished game (None: a draw, or not finished)."""
        return winner_of(self.result) if self.result else None

    @property
    def drawn(self) -> bool:
        return (
            self.status == BoardStatus.FINISHED and self.result is not None and self.winner is None
        )


def board_view(board: Board, now: datetime) -> BoardView:
    """What a board mail shows of ``board`` at ``now``: display names, dates, clock notes."""
    rules = board.rules
    next_nag_at = forfeit_at = None
    notes: list[str] = []
    clock_lines: list[str] = []
    times_left: list[TimeLeft] = []
    spec = meaning = local = ""
    if board.status == BoardStatus.ACTIVE:
        clock = clock_state(board, now)
        next_nag_at, forfeit_at = clock.next_nag_at, clock.forfeit_at
        control = clock.control
        spec, meaning = control.spec, control_meaning(control)
        if control.timezone != "UTC":
            local = f"{forfeit_at.astimezone(ZoneInfo(control.timezone)):%Y-%m-%d %H:%M} "
            local += control.timezone
        if control.kind is not Kind.CLASSIC:
            bank = clock_of(board)
            times_left = [
                TimeLeft(seat, board.name(uid), bank.time_left(seat, clock.seat, now, clock.stops))
                for seat, uid in enumerate(board.players)
            ]
            clock_lines = _bank_lines(board, clock, times_left, local)
        for uid in board.players:
            away = [
                v for v in board.vacations if v.userid == uid and v.starts_at <= now < v.ends_at
            ]
            name = board.name(uid)
            if any(v.kind == "bounce" for v in away):
                notes.append(
                    f"Mail to {name} bounces since {fmt_time(away[-1].starts_at)}: {name}'s "
                    f"clock stands still until {name} writes to the server again."
                )
            elif away:
                notes.append(
                    f"{name} is on vacation until {fmt_time(away[-1].ends_at)}: "
                    f"{name}'s clock stands still until then."
                )
        if clock.paused_since is not None:
            notes.append(
                f"All clocks are stopped since {fmt_time(clock.paused_since)} (the site is "
                "paused); the dates below assume they run again now."
            )
    changes = [
        RatingChange(board.name(uid), before, after)
        for uid, before, after in (
            (board.white, board.white_rating_before, board.white_rating_after),
            (board.black, board.black_rating_before, board.black_rating_after),
        )
        if before is not None and after is not None
    ]
    return BoardView(
        board=board.number,
        game=rules.name,
        title=rules.title,
        seat_names=rules.seat_names,
        variant=board.variant,
        options=dict(board.options),
        white=board.name(board.white),
        black=board.name(board.black),
        status=board.status,
        result=board.result,
        termination=board.termination,
        state=board.state,
        moves=[
            MoveLine(m.ply, board.name(m.userid), m.notation, m.comment, m.created_at, m.queued)
            for m in board.moves
        ],
        created_at=board.created_at,
        last_move_at=board.last_move_at,
        nag_days=board.nag_days,
        forfeit_days=board.forfeit_days,
        undo_request_by=board.name(board.undo_request_by) if board.undo_request_by else None,
        cancel_request_by=board.name(board.cancel_request_by) if board.cancel_request_by else None,
        draw_offer_by=board.name(board.draw_offer_by) if board.draw_offer_by else None,
        subscribers=[f.userid or f.email or "" for f in board.followers],
        next_nag_at=next_nag_at,
        forfeit_at=forfeit_at,
        clock_notes=notes,
        clock_lines=clock_lines,
        time_control=spec,
        time_meaning=meaning,
        times_left=times_left,
        forfeit_local=local,
        rating_changes=changes,
        waiting_for=board.name(board.challenged) if board.challenged else None,
        move_number=board.move_number,
        position=board.position,
        event=(
            f"Tournament {board.event.number} ({board.event.name}), round {board.event.round}"
            if board.event is not None
            else None
        ),
    )


def _bank_lines(
    board: Board, clock: ClockState, times_left: Sequence[TimeLeft], local: str
) -> list[str]:
    """A time bank in a board mail: the control, each player's time left, what the next
    move gives, the next reminder and when the time runs out (UTC and the board's zone)."""
    control = clock.control
    lines = [f"Time:      {control.spec} ({control_meaning(control)})"]
    for t in times_left:
        line = f"{board.rules.seat_names[t.seat]} {t.name}: {t.words} left"
        if t.seat == clock.seat:
            line += f" (to move); {control.growth_words()}"
        lines.append(line)
    if clock.next_nag_at is not None:
        lines.append(f"Reminder:  {fmt_time(clock.next_nag_at)}")
    out = f"Time out:  {fmt_time(clock.forfeit_at)}"
    lines.append(f"{out} ({local})" if local else out)
    return lines
