"""Playing: a move, a resignation, a claimed draw, and the queued answer a move sets off.

``Move.decide`` is the one move path: whether it came by mail, by reply,
from the command line or out of a queue, a move is checked by the game's
rules and played on the board value here, and ``pbm.usecases.unit`` saves
the difference.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from pbm import verbs
from pbm.games import GameState, IllegalMove, Outcome, Termination
from pbm.model import OPEN, Board, BoardStatus, PlayedMove
from pbm.refusals import (
    BadRequest,
    BoardChanged,
    GameOver,
    IllegalMoveRefused,
    NotAPlayer,
    NotYourTurn,
)
from pbm.timecontrol import Kind
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.changes import BoardChange
from pbm.usecases.clocks import clock_json, clock_of, control_of
from pbm.usecases.endings import finish
from pbm.usecases.text import wrap
from pbm.usecases.trees import Tree
from pbm.usecases.unit import Decision
from pbm.usecases.waiting import news_kinds
from pbm.usecases.world import World


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
    if board.status == BoardStatus.WAITING and not waiting:
        other = board.name(board.player_at(1 - (board.seat_of(board.challenger or "") or 0)))
        raise GameOver(
            f"Board {board.number} has not started: it waits for {other} to accept the challenge."
        )
    if board.status not in OPEN:
        word = "cancelled" if board.status == BoardStatus.CANCELLED else "over"
        raise GameOver(f"Board {board.number} is {word} ({board.result or board.status}).")
    return seat


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
    """Play a move: its ``notation`` as the game writes it, read once where the command
    was read (its guard ``#N`` apart, as ``expect``: only as move N).

    ``claim``: claim the draw the position after the move allows.
    ``message_id``: of the mail it came in, kept with the move.
    """

    board: int
    notation: str
    expect: int | None = None
    comment: str = ""
    claim: bool = False
    message_id: str | None = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        text, expect = self.notation.strip(), self.expect
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
            if mover.is_admin:
                raise NotYourTurn(
                    f"It is {other}'s turn on board {board.number}, not {mover.display}'s."
                )
            raise NotYourTurn(
                f"It is {other}'s turn on board {board.number}, not yours. To have your move "
                f"played as soon as {other} has moved, reply to your board mail with "
                f"{verbs.QUEUE.name} MOVE [if THEIR-MOVE], or send: {board.game} "
                f"{verbs.QUEUE.name} {board.number} {mover.display} PASSWORD MOVE"
            )
        new_state, canonical = play(state, text)
        now = world.now
        comment, cut = bounded_comment(self.comment)
        after = played(
            board, mover.userid, new_state, canonical, text, comment, now, self.message_id
        )
        # A repair by the site admin is never passed off as the player's own move.
        headline = f"Move played by the site admin for {mover.display}." if mover.is_admin else ""
        if self.claim and after.status == BoardStatus.ACTIVE:
            after, said = claimed(after, new_state, mover, now)
            headline = (headline + "\n" if headline else "") + said
        told: dict[str, list[str]] = {}
        if cut:
            told[mover.userid] = wrap(cut)
        if after.status == BoardStatus.ACTIVE:
            # The opponent's queued answer is played at once: one board mail for both moves.
            mine = after.moves[-1]
            after, owner, lines = answer_from_queue(after, mine, now)
            if owner is not None:
                told[owner] = [*told.get(owner, []), *lines]
            if after.moves[-1] is not mine:
                theirs = after.moves[-1]
                headline = (headline + "\n" if headline else "") + (
                    f"{mover.display} played {mine.notation} "
                    f"(move {after.move_number(mine.ply)}); {after.name(theirs.userid)}'s "
                    f"answer {theirs.notation} from the conditional tree was played at once "
                    f"(move {after.move_number(theirs.ply)}), costing no time."
                )
                if mine.comment.strip():
                    quoted = "\n".join(wrap(mine.comment.strip(), indent="  > "))
                    headline += f"\n{mover.display} writes:\n{quoted}"
        mails = news_kinds(after, board_mails(after, now, headline, told), mover.userid)
        return Decision(mails, (BoardChange(board, after),))


MAX_COMMENT_BYTES = 4096  # a comment goes into every board mail and the records


def bounded_comment(comment: str) -> tuple[str, str]:
    """``comment`` within ``MAX_COMMENT_BYTES``, and what to tell its writer if it was cut."""
    data = comment.encode()
    if len(data) <= MAX_COMMENT_BYTES:
        return comment, ""
    kept = data[:MAX_COMMENT_BYTES].decode(errors="ignore").rstrip() + " [...]"
    return kept, (
        f"Your comment was cut to its first {MAX_COMMENT_BYTES // 1024} KB: a comment goes into "
        "every board mail and the game's records, and holds at most that."
    )


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
        after = finish(board, Outcome(1 - seat, Termination.RESIGN), world.now)
        headline = (
            f"The site admin resigned the game for {loser.display}."
            if loser.is_admin
            else f"{loser.display} resigned."
        )
        comment, cut = bounded_comment(self.comment.strip())
        if comment:
            headline += "\n" + comment
        told = {loser.userid: wrap(cut)} if cut else None
        return Decision(board_mails(after, world.now, headline, told), (BoardChange(board, after),))


def answer_from_queue(
    board: Board, theirs: PlayedMove, now: datetime
) -> tuple[Board, str | None, list[str]]:
    """Play the answer the conditional tree of the player now to move gives to ``theirs``
    (``pbm.usecases.trees``), if it has one.

    The answer is played at once, so it costs its player no time (his clock started
    with ``theirs``); what follows it in the tree stays for the next reply. A move the
    tree does not answer, or an answer the rules refuse, drops the tree. Returns the
    board, the tree's owner (None: he has none) and what to tell him.
    """
    state = board.state
    owner = board.player_at(state.to_move)
    mine = next((q for q in board.queue if q.userid == owner), None)
    if mine is None:
        return board, None, []
    others = tuple(q for q in board.queue if q.userid != owner)
    them = board.name(theirs.userid)
    found = Tree.from_json(mine.lines).answer(theirs.notation)
    if found is None:
        text = (
            f"{them} played {theirs.notation}, a move off your conditional tree: the tree "
            f"on board {board.number} is dropped, and it is your turn."
        )
        return replace(board, queue=others), owner, wrap(text)
    answer, rest = found
    try:
        new_state, canonical = state.play(answer)
    except IllegalMove as exc:
        text = (
            f"Your tree's answer {answer} is not legal after {them}'s {theirs.notation}: "
            f"{exc}. The tree on board {board.number} is dropped, and it is your turn."
        )
        return replace(board, queue=others), owner, wrap(text)
    kept = (replace(mine, lines=rest.to_json()),) if rest else ()
    board = replace(board, queue=(*others, *kept))
    board = played(board, owner, new_state, canonical, answer, "", now, queued=True)
    number = board.move_number(new_state.ply)
    lines = wrap(
        f"Your conditional tree answered {them}'s {theirs.notation} with {canonical}: played "
        f"at once as move {number}, costing no time on your clock."
    )
    if rest:
        lines += ["The rest of your tree:", *rest.render(them, indent="    ")]
    else:
        lines += wrap(f"Your tree on board {board.number} is used up.")
    return board, owner, lines
