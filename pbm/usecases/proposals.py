"""What one player asks and the other answers: take back a move, cancel a board, agree a draw.

``Undo``, ``Cancel`` and ``OfferDraw`` ask; ``Accept`` and ``Reject`` answer
whatever the opponent asked (a cancel is agreed by asking to cancel too).
Any move lets a pending request lapse.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbm import verbs
from pbm.games import BadNotation, IllegalMove, Outcome, Termination
from pbm.model import Account, Board, BoardStatus
from pbm.refusals import BadRequest, IllegalMoveRefused, NotAPlayer
from pbm.replies import MailKind, Reply
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.changes import BoardChange
from pbm.usecases.endings import finish
from pbm.usecases.moves import Move, acting, seat_in_play
from pbm.usecases.text import note, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World
from pbm.verbs import Reader

# What the player asked to agree (to take back a move, to a draw) may answer by reply.
ANSWERS = verbs.listed(verbs.sendable(Reader.ASKED))


def _asking(board: Board, to: str, subject: str, text: str) -> Reply:
    """A request for the opponent ``to``, answerable by reply."""
    body = "\n".join(wrap(text)) + "\n"
    return Reply(
        board.people[to].email, subject, body, board=board.number, reply_as=to, kind=MailKind.BOARD
    )


@dataclass(frozen=True)
class Undo:
    """Ask to take back your last move (before the opponent has answered it)."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, me)
        last = board.moves[-1] if board.moves else None
        if last is None or last.userid != me.userid:
            raise BadRequest(
                "You can only ask to take back your own last move, before your opponent has moved."
            )
        number = board.move_number(last.ply)
        if board.undo_request_by is not None:
            raise BadRequest(f"Taking back move {number} was already asked for.")
        after = replace(board, undo_request_by=me.userid)
        opp = board.people[board.player_at(1 - seat)]
        cmd = f"{board.game} accept {board.number} {opp.display} PASSWORD"
        title = f"{board.title()} - undo asked"
        replies = [
            _asking(
                board,
                opp.userid,
                title,
                f"{me.display} asks to take back move {number} ({last.notation}). Reply to "
                f"this mail with {ANSWERS}, or send: {cmd} (or {verbs.REJECT}).",
            ),
            note(
                me.account.email,
                title,
                f"You asked {opp.display} to let you take back move {number}.",
                board.number,
                kind=MailKind.BOARD,
            ),
        ]
        return Decision(replies, (BoardChange(board, after),))


@dataclass(frozen=True)
class Cancel:
    """Cancel a board: at once with no moves played (or by the admin), else when both ask."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, me, waiting=True)
        opp = board.people[board.player_at(1 - seat)]
        now = world.now
        if (
            board.status == BoardStatus.WAITING
            and board.challenger != me.userid
            and not me.is_admin
        ):
            return _declined(board, me, world)
        if not board.moves or board.cancel_request_by == opp.userid or me.is_admin:
            after = replace(
                board,
                status=BoardStatus.CANCELLED,
                ended_at=now,
                cancel_request_by=None,
                undo_request_by=None,
                draw_offer_by=None,
                queue=(),
            )
            who = "The site admin" if me.is_admin else me.display
            replies = board_mails(after, now, f"{who} cancelled the board.")
            return Decision(replies, (BoardChange(board, after),))
        if board.cancel_request_by == me.userid:
            raise BadRequest(f"You already asked to cancel; waiting for {opp.display}.")
        after = replace(board, cancel_request_by=me.userid)
        title = f"{board.title()} - cancel asked"
        replies = [
            _asking(
                board,
                opp.userid,
                title,
                f"{me.display} asks to cancel board {board.number}. To agree, reply to this "
                f"mail with cancel, or send: {board.game} cancel {board.number} {opp.display} "
                "PASSWORD. To play on, just move.",
            ),
            note(
                me.account.email,
                title,
                f"You asked {opp.display} to cancel board {board.number}.",
                board.number,
                kind=MailKind.BOARD,
            ),
        ]
        return Decision(replies, (BoardChange(board, after),))


@dataclass(frozen=True)
class OfferDraw:
    """Offer a draw (in games that have them); an offer of the opponent's is agreed at once."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, me)
        rules = board.rules
        if not rules.draw_offers:
            raise BadRequest(f"{rules.title} has no draws by agreement.")
        opp = board.people[board.player_at(1 - seat)]
        if board.draw_offer_by == opp.userid:
            return _agreed(board, me, world)
        if board.draw_offer_by == me.userid:
            raise BadRequest(f"You offered a draw already; waiting for {opp.display}.")
        after = replace(board, draw_offer_by=me.userid)
        title = f"{board.title()} - draw offered"
        cmd = f"{board.game} accept {board.number} {opp.display} PASSWORD"
        replies = [
            _asking(
                board,
                opp.userid,
                title,
                f"{me.display} offers a draw on board {board.number}. Reply to this mail with "
                f"{ANSWERS}, or send: {cmd} (or {verbs.REJECT}). To play on, just move.",
            ),
            note(
                me.account.email,
                title,
                f"You offered {opp.display} a draw on board {board.number}.",
                board.number,
                kind=MailKind.BOARD,
            ),
        ]
        return Decision(replies, (BoardChange(board, after),))


def _agreed(board: Board, me: Actor, world: World) -> Decision:
    offerer = board.name(board.draw_offer_by or "")
    after = finish(board, Outcome(None, Termination.AGREEMENT), world.now)
    headline = f"{me.display} accepted {offerer}'s draw offer: the game is drawn."
    return Decision(board_mails(after, world.now, headline), (BoardChange(board, after),))


def _pending(board: Board, me: Actor) -> str:
    """What the opponent asked that ``me`` may answer: ``undo`` or ``draw``; refused if nothing."""
    if board.undo_request_by is not None and board.undo_request_by != me.userid:
        return "undo"
    if board.draw_offer_by is not None and board.draw_offer_by != me.userid:
        return "draw"
    if board.undo_request_by == me.userid:
        raise NotAPlayer("Your opponent answers your undo request, not you.")
    if board.draw_offer_by == me.userid:
        raise NotAPlayer("Your opponent answers your draw offer, not you.")
    raise BadRequest(f"Nobody asked to take back a move on board {board.number}.")


def _challenged(board: Board, me: Actor) -> None:
    """Refused unless ``me`` is the player a waiting board's challenge is for."""
    if board.challenger == me.userid:
        raise NotAPlayer("Your opponent answers your challenge, not you.")


def _declined(board: Board, me: Actor, world: World) -> Decision:
    _challenged(board, me)
    after = replace(board, status=BoardStatus.CANCELLED, ended_at=world.now)
    challenger = board.people[board.challenger or ""]
    subject = f"{board.title()} - challenge declined"
    text = f"{me.display} declined {challenger.display}'s challenge; board {board.number} is off."
    return Decision(
        _both(board, (challenger, me.account), subject, text), (BoardChange(board, after),)
    )


def _both(board: Board, people: tuple[Account, Account], subject: str, text: str) -> list[Reply]:
    """The same note to both players of ``board`` (their board's mail)."""
    return [note(p.email, subject, text, board.number, kind=MailKind.BOARD) for p in people]


ACCEPT = "accept"  # the command's word, a move of a game that lists it (Go's scoring)


def _accepted_as_move(board: Board) -> bool:
    """Whether ``accept`` on ``board`` is a move of its game: nothing is asked of the
    player, and the game lists ``accept`` among its legal moves. Refused in the game's
    words where the game knows the word but not now (Go's ``accept`` before scoring)."""
    if board.undo_request_by is not None or board.draw_offer_by is not None:
        return False
    state = board.state
    if ACCEPT in state.legal_moves():
        return True
    try:
        state.play(ACCEPT)
    except BadNotation:
        return False  # not a word of the game: the refusal of an accept with nothing asked
    except IllegalMove as exc:
        raise IllegalMoveRefused(str(exc)) from None
    return False


@dataclass(frozen=True)
class Accept:
    """Agree to what the opponent asked: his challenge (the board starts), the undo (his
    move is taken back) or the draw. With nothing asked, ``accept`` is a move where the
    game has it (Go's scoring phase: ``_accepted_as_move``)."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat_in_play(board, me, waiting=True)
        if board.status != BoardStatus.WAITING and _accepted_as_move(board):
            return Move(self.board, ACCEPT).decide(world, actor)
        if board.status == BoardStatus.WAITING:
            _challenged(board, me)
            after = replace(board, status=BoardStatus.ACTIVE, clock_since=world.now)
            challenger = board.name(board.challenger or "")
            headline = (
                f"{me.display} accepted {challenger}'s challenge: board {board.number} starts."
            )
            replies = board_mails(after, world.now, headline)
            return Decision(replies, (BoardChange(board, after),))
        if _pending(board, me) == "draw":
            return _agreed(board, me, world)
        requester = board.name(board.undo_request_by or "")
        last = board.moves[-1]
        earlier = board.moves[:-1]
        dropped = bool(board.queue)
        after = replace(
            board,
            position=last.position_before,
            ply=last.ply - 1,
            undo_request_by=None,
            moves=earlier,
            last_move_at=earlier[-1].created_at if earlier else None,
            clock=last.clock_before,  # his time as when he got the move: the move took none
            clock_since=world.now,
            last_nag_at=None,
            queue=(),
        )
        headline = (
            f"{me.display} agreed: move {board.move_number(last.ply)} ({last.notation}) "
            f"by {requester} was taken back."
        )
        if dropped:
            headline += " The queued moves on this board were dropped."
        return Decision(board_mails(after, world.now, headline), (BoardChange(board, after),))


@dataclass(frozen=True)
class Reject:
    """Refuse what the opponent asked: his challenge (the board is off), or the undo (the
    move stands) or the draw (the game goes on)."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat_in_play(board, me, waiting=True)
        if board.status == BoardStatus.WAITING:
            return _declined(board, me, world)
        if _pending(board, me) == "draw":
            asker = board.people[board.draw_offer_by or ""]
            after = replace(board, draw_offer_by=None)
            subject = f"{board.title()} - draw declined"
            text = f"{me.display} declined the draw offer; the game goes on."
        else:
            asker = board.people[board.undo_request_by or ""]
            after = replace(board, undo_request_by=None)
            subject = f"{board.title()} - undo refused"
            text = f"{me.display} did not agree to take back the last move; it stands."
        return Decision(
            _both(board, (asker, me.account), subject, text), (BoardChange(board, after),)
        )
