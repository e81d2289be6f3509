"""Playing: a move, a resignation, a claimed draw, and the queued answer a move sets off.

``Move.decide`` is the one move path: whether it came by mail, by reply,
from the command line or out of a queue, a move is checked by the game's
rules and played on the board value here, and ``pbm.usecases.unit`` saves
the difference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

from pbm.games import RESIGN, GameState, IllegalMove, Outcome
from pbm.timecontrol import Kind
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.changes import BoardChange
from pbm.usecases.clocks import clock_json, clock_of, control_of
from pbm.usecases.endings import finish
from pbm.usecases.refusals import (
    BadRequest,
    BoardChanged,
    GameOver,
    IllegalMoveRefused,
    NotAPlayer,
    NotYourTurn,
)
from pbm.usecases.text import wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import Board, PlayedMove, World

_GUARD = re.compile(r"^(?P<move>.*?)\s*#\s*(?P<n>\d+)\s*$")


def acting(actor: Actor | None) -> Actor:
    """The actor of a command that needs one (the command declares who acts)."""
    if actor is None:
        raise BadRequest("This command needs a player: give your userid and password.")
    return actor


def seat_in_play(board: Board, actor: Actor, *, waiting: bool = False) -> int:
    """The actor's seat on a board in play; refused for anyone else or a board that ended.

    ``waiting``: a challenge not yet accepted will do (to answer or take it back).
    """
    seat = board.seat_of(actor.userid)
    if seat is None:
        raise NotAPlayer(f"{actor.display} does not play on board {board.number}.")
    if board.status == "waiting" and not waiting:
        other = board.name(board.player_at(1 - (board.seat_of(board.challenger or "") or 0)))
        raise GameOver(
            f"Board {board.number} has not started: it waits for {other} to accept the challenge."
        )
    if board.status not in ("active", "waiting"):
        word = "cancelled" if board.status == "cancelled" else "over"
        raise GameOver(f"Board {board.number} is {word} ({board.result or board.status}).")
    return seat


def split_guard(text: str, expect: int | None) -> tuple[str, int | None]:
    """``MOVE#N`` -> (MOVE, N); an ``expect`` given apart wins over the guard."""
    text = text.strip()
    guard = _GUARD.match(text)
    if guard is not None:
        text = guard.group("move")
        if expect is None:
            expect = int(guard.group("n"))
    return text, expect


def play(state: GameState, text: str) -> tuple[GameState, str]:
    """The game's ``play``, its refusal in the game's own words."""
    try:
        return state.play(text)
    except IllegalMove as exc:
        raise IllegalMoveRefused(str(exc)) from None


def played(
    board: Board,
    userid: str,
    after: GameState,
    canonical: str,
    text: str,
    comment: str,
    now: datetime,
    message_id: str | None = None,
    *,
    queued: bool = False,
) -> Board:
    """``board`` after a checked move: the move recorded, the opponent's clock started.

    A pending undo, cancel or draw request lapses; a move that ends the game
    finishes it.
    """
    move = PlayedMove(
        ply=after.ply,
        userid=userid,
        notation=canonical,
        text=text,
        comment=comment,
        created_at=now,
        position_before=board.position,
        queued=queued,
        message_id=message_id,
        clock_before=board.clock,
    )
    moved = replace(
        board,
        position=after.dump(),
        ply=after.ply,
        last_move_at=now,
        clock=_clock_after(board, userid, now),
        clock_since=now,
        last_nag_at=None,
        undo_request_by=None,
        cancel_request_by=None,
        draw_offer_by=None,
        moves=(*board.moves, move),
    )
    outcome = after.outcome
    return finish(moved, outcome, now) if outcome is not None else moved


def _clock_after(board: Board, userid: str, now: datetime) -> str | None:
    """The board's clock once ``userid`` moved at ``now``: his time less what the move
    took, then what his control gives him (a classic clock keeps none: None)."""
    control = control_of(board)
    if control.kind is Kind.CLASSIC:
        return board.clock
    seat = board.seat_of(userid) or 0
    return clock_json(clock_of(board).moved(seat, now, board.stops(userid, now)))


@dataclass(frozen=True)
class Move:
    """Play a move (``MOVE#N`` or ``expect``: only as move N); ``resign`` resigns.

    ``claim``: claim the draw the position after the move allows.
    ``message_id``: of the mail it came in, kept with the move.
    """

    board: int
    text: str
    expect: int | None = None
    comment: str = ""
    claim: bool = False
    message_id: str | None = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        text, expect = split_guard(self.text, self.expect)
        if text.lower() == "resign":
            return Resign(self.board, self.comment).decide(world, actor)
        if not text:
            raise BadRequest("No move given.")
        mover = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, mover)
        due = board.move_number(board.ply + 1)
        if expect is not None and expect != due:
            raise BoardChanged(
                f"Your move was meant as move {expect}, but board {board.number} is at "
                f"move {due} now. Look at the board and send a new move."
            )
        state = board.state
        if state.to_move != seat:
            other = board.name(board.player_at(state.to_move))
            whose = f"{mover.display}'s" if mover.is_admin else "yours"
            raise NotYourTurn(f"It is {other}'s turn on board {board.number}, not {whose}.")
        new_state, canonical = play(state, text)
        now = world.now
        after = played(
            board, mover.userid, new_state, canonical, text, self.comment, now, self.message_id
        )
        # A repair by the site admin is never passed off as the player's own move.
        headline = f"Move played by the site admin for {mover.display}." if mover.is_admin else ""
        if self.claim and after.status == "active":
            after, said = claimed(after, new_state, mover, now)
            headline = (headline + "\n" if headline else "") + said
        told: dict[str, list[str]] = {}
        if after.status == "active":
            # The opponent's queued answer is played at once: one board mail for both moves.
            mine = after.moves[-1]
            after, owner, lines = answer_from_queue(after, mine, now)
            if owner is not None:
                told[owner] = lines
            if after.moves[-1] is not mine:
                theirs = after.moves[-1]
                headline = (headline + "\n" if headline else "") + (
                    f"{mover.display} played {mine.notation} "
                    f"(move {after.move_number(mine.ply)}); {after.name(theirs.userid)}'s "
                    f"queued answer {theirs.notation} was played at once "
                    f"(move {after.move_number(theirs.ply)})."
                )
                if mine.comment.strip():
                    quoted = "\n".join(wrap(mine.comment.strip(), indent="  > "))
                    headline += f"\n{mover.display} writes:\n{quoted}"
        return Decision(board_mails(after, now, headline, told), (BoardChange(board, after),))


def claimed(board: Board, state: GameState, actor: Actor, now: datetime) -> tuple[Board, str]:
    """The board after ``actor``'s claim of the draw ``state`` allows; refused with the reason."""
    try:
        outcome = state.claim_draw()
    except IllegalMove as exc:
        raise IllegalMoveRefused(str(exc)) from None
    return finish(board, outcome, now), f"{actor.display} claimed a draw ({outcome.termination})."


@dataclass(frozen=True)
class Claim:
    """Claim a draw the rules allow in the position on the board (threefold repetition...)."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        claimer = acting(actor)
        board = world.board(self.board)
        seat_in_play(board, claimer)
        after, headline = claimed(board, board.state, claimer, world.now)
        return Decision(board_mails(after, world.now, headline), (BoardChange(board, after),))


@dataclass(frozen=True)
class Resign:
    """Give up the game: the opponent wins (termination ``resign``)."""

    board: int
    comment: str = ""

    def decide(self, world: World, actor: Actor | None) -> Decision:
        loser = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, loser)
        after = finish(board, Outcome(1 - seat, RESIGN), world.now)
        headline = (
            f"The site admin resigned the game for {loser.display}."
            if loser.is_admin
            else f"{loser.display} resigned."
        )
        if self.comment.strip():
            headline += "\n" + self.comment.strip()
        return Decision(board_mails(after, world.now, headline), (BoardChange(board, after),))


def answer_from_queue(
    board: Board, theirs: PlayedMove, now: datetime
) -> tuple[Board, str | None, list[str]]:
    """Play the queued answer of the player now to move, if one fits ``theirs``.

    The first queued move whose ``if`` is the move just played (both in
    canonical notation, the ``if`` read in the position it was played from)
    or that has no ``if``, and that is legal, is played; the owner's whole
    queue is then gone. Returns the board, the owner (None: he queued
    nothing) and what to tell him of each of his queued moves.
    """
    rules = board.rules
    state = board.state
    owner = board.player_at(state.to_move)
    mine = [q for q in board.queue if q.userid == owner]
    if not mine:
        return board, None, []
    before = rules.load(theirs.position_before)
    them = board.name(theirs.userid)
    chosen: tuple[str, GameState, str] | None = None
    notes: list[str] = []
    for q in mine:
        label = q.move_text + (f" if {q.if_move}" if q.if_move else "")
        if chosen is not None:
            notes.append(f"{label}: dropped, a move before it in your queue was played.")
            continue
        if q.if_move is not None:
            try:
                condition: str | None = before.play(q.if_move)[1]
            except IllegalMove:
                condition = None
            if condition != theirs.notation:
                notes.append(f"{label}: dropped, {them} played {theirs.notation}.")
                continue
        try:
            new_state, canonical = state.play(q.move_text)
        except IllegalMove as exc:
            notes.append(
                f"{label}: dropped, it is not legal after {them}'s {theirs.notation}: {exc}"
            )
            continue
        chosen = (q.move_text, new_state, canonical)
    board = replace(board, queue=tuple(q for q in board.queue if q.userid != owner))
    if chosen is not None:
        text, new_state, canonical = chosen
        board = played(board, owner, new_state, canonical, text, "", now, queued=True)
        number = board.move_number(new_state.ply)
        head = f"Your queued move {canonical} was played at once as move {number}."
    else:
        head = (
            f"None of your queued moves could be played after {them}'s {theirs.notation}, "
            "so it is your turn."
        )
    lines = wrap(head)
    if notes:
        lines += ["The rest of your queue:" if chosen else "Your queue:"]
        for note in notes:
            lines += wrap(note, indent="    ")
    return board, owner, lines
