"""What the clocks do: reminders, forfeits, and the site-wide pause.

``boards_due`` finds the boards whose reminder or forfeit is due; ``RunClock``
sends the reminder or forfeits the board, decided afresh for each board, so
a move that arrives meanwhile wins and a timer that runs twice does nothing
twice. ``PauseClocks`` and ``ResumeClocks`` stop and restart every clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sqlalchemy as sa

from pbm.games import FORFEIT, Outcome
from pbm.replies import Reply
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails, board_view, render_board_mail
from pbm.usecases.changes import BoardChange, PauseChange
from pbm.usecases.clocks import clock_state
from pbm.usecases.endings import finish
from pbm.usecases.refusals import BadRequest
from pbm.usecases.text import fmt_time
from pbm.usecases.unit import Decision
from pbm.usecases.world import GAMES, Pause, World, board_of_row, load_pauses, load_vacations


@dataclass(frozen=True)
class RunClock:
    """Send the due reminder of a board, or forfeit it; nothing if neither is due."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        now = world.now
        if board.status != "active":
            return Decision()
        clock = clock_state(board, now)
        if clock.paused_since is not None:
            return Decision()
        late = board.people[clock.to_move]
        if clock.forfeit_due:
            seat = board.seat_of(late.userid) or 0
            winner = board.name(board.player_at(1 - seat))
            after = finish(board, Outcome(1 - seat, FORFEIT), now)
            headline = (
                f"{late.display} did not move for {board.forfeit_days} days: board "
                f"{board.number} is forfeited and {winner} wins."
            )
            return Decision(board_mails(after, now, headline), (BoardChange(board, after),))
        if clock.nag_due:
            after = replace(board, last_nag_at=now)
            view = board_view(after, now)
            headline = (
                f"Reminder: it is your move on board {board.number}, {late.display}, and you "
                f"have not moved for {clock.running.days} days. Unless you move, the board is "
                f"forfeited on {fmt_time(view.forfeit_at)}."
            )
            subject, body = render_board_mail(view, late.display, headline)
            nag = Reply(
                to=late.email,
                subject=f"Nag: {subject}",
                body=body,
                board=board.number,
                reply_as=late.userid,
                counted=False,
            )
            return Decision((nag,), (BoardChange(board, after),))
        return Decision()


def boards_due(world: World) -> list[int]:
    """Active boards whose reminder or forfeit is due now (none while the clocks are paused)."""
    pauses = load_pauses(world.session)
    if any(p.ended_at is None for p in pauses):
        return []
    active = sa.select(GAMES).where(GAMES.c.status == "active").order_by(GAMES.c.board)
    rows = [row._mapping for row in world.session.execute(active)]
    if not rows:
        return []
    # The clocks need the rows, vacations and pauses only: no moves, no people.
    earliest = min(r["clock_since"] or r["last_move_at"] or r["created_at"] for r in rows)
    players = {u for r in rows for u in (r["white"], r["black"])}
    vacations = load_vacations(world.session, players, ending_after=earliest)
    out = []
    for row in rows:
        mine = (row["white"], row["black"])
        board = board_of_row(
            row, vacations=tuple(v for v in vacations if v.userid in mine), pauses=pauses
        )
        clock = clock_state(board, world.now)
        if clock.nag_due or clock.forfeit_due:
            out.append(board.number)
    return out


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
