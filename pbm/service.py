"""The use cases: one method each, one database transaction each.

Every method either happens whole (its changes and its replies committed
together; the replies are also written to the outbox) or not at all: it
raises a ``ServiceError`` whose ``.message`` tells the player why, and the
database is as it was. Nothing here sends mail.

Who acts is given as ``userid`` plus an ``Auth``: ``Password(pw)``,
``ReplyToken(token)`` (the token of a board's reply address, checked here
against ``mail.secret``), or ``ADMIN`` (the admin CLI, no password).
``sender`` is the address answers go to (None: the caller, e.g. the CLI,
gets them only as return value). ``message_id`` is the command mail's
Message-ID: a mail already acted on raises ``AlreadyProcessed`` and changes
nothing, and it is remembered in the same transaction as the change.

Undo: every move row keeps the position it was played from
(``moves.position_before``), so an accepted undo restores that text; no
game is ever replayed.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

import pbm.games
from pbm.boardmail import BoardView, MoveLine, board_subject, render_board_mail, wrap
from pbm.config import Config
from pbm.games import BadOption, IllegalMove
from pbm.games import Game as GameRules
from pbm.replies import Reply, reply_token
from pbm.store import (
    Database,
    Game,
    Move,
    Player,
    ProcessedMessage,
    StaleGame,
    Subscription,
    bump_version,
    enqueue_replies,
    hash_password,
    lock_game,
    verify_password,
)

# ---------------------------------------------------------------- errors


class ServiceError(Exception):
    """A refused command; ``message`` says why, in words for a player."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WrongPassword(ServiceError):
    """Bad password, or a reply address whose token is not valid."""


class UnknownPlayer(ServiceError):
    pass


class UnknownBoard(ServiceError):
    pass


class NotYourTurn(ServiceError):
    pass


class NotAPlayer(ServiceError):
    """The acting player does not play on that board (or may not do this)."""


class GameOver(ServiceError):
    """The board is finished or cancelled."""


class IllegalMoveError(ServiceError):
    """The rules refuse the move; wraps ``pbm.games.IllegalMove``."""

    def __init__(self, error: IllegalMove) -> None:
        super().__init__(str(error))
        self.error = error


class BoardChanged(ServiceError):
    """A stale ``#N``, or the board changed while the command ran."""


class AlreadyProcessed(ServiceError):
    """A mail with this Message-ID was already acted on; send no reply."""


class UserExists(ServiceError):
    pass


class BadRequest(ServiceError):
    """A command that cannot work as given (bad userid, bad option, ...)."""


# ---------------------------------------------------------------- auth


@dataclass(frozen=True, slots=True)
class Password:
    password: str


@dataclass(frozen=True, slots=True)
class ReplyToken:
    """The token from a reply-token address (``pbm.replies.parse_token_address``)."""

    token: str


@dataclass(frozen=True, slots=True)
class Admin:
    """The administrator: no password needed."""


ADMIN = Admin()
Auth = Password | ReplyToken | Admin

USERID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,19}$")
EMAIL_RE = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")
_GUARD_RE = re.compile(r"^(?P<move>.*?)\s*#\s*(?P<n>\d+)\s*$")

T = TypeVar("T")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    """A player account as the CLI shows it (no password hash)."""

    userid: str
    display: str
    email: str
    full_name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BoardSummary:
    """One line of a board list. Names are display forms; ``to_move`` None when over."""

    board: int
    game: str
    variant: str
    white: str
    black: str
    status: str
    result: str | None
    termination: str | None
    ply: int
    to_move: str | None
    created_at: datetime
    last_move_at: datetime | None


COMMANDS_HELP = """\
Commands (G is a game name such as accasta, B a board number, UID your
userid, PW your password; words are case-insensitive):

  signup UID PW [EMAIL]           a new account (EMAIL: the sender)
  password UID PW NEWPW           change your password
  address UID PW EMAIL            change your address
  help [G]                        this text, or the rules of G
  games UID                       your active boards
  G challenge UID1 UID2 [--variant=V] [--nagtime=D] [--forfeittime=D]
                                  a new board; UID1 moves first
  G move B UID PW MOVE[#N]        play MOVE (only as move N with #N)
  G show B / G history B          the board / the moves with comments
  G moves B                       every legal move
  G resign B UID PW               give up
  G undo B UID PW                 ask to take back your last move;
                                  the opponent sends accept or reject
  G cancel B UID PW               cancel (at once before any move)
  G chat B UID PW                 send the mail's text to the board
  G subscribe B UID PW            follow a board (unsubscribe: stop)
  G games [UID]                   active boards of G

The easiest way to move: reply to the board mail with just your move.
"""


# ---------------------------------------------------------------- the service


class Service:
    """The use cases over one database; see the module docstring."""

    def __init__(
        self,
        db: Database,
        config: Config,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.db = db
        self.config = config
        self.clock = clock

    # -- plumbing

    @contextmanager
    def _unit(self, message_id: str | None) -> Iterator[tuple[Session, datetime]]:
        """One transaction; remembers ``message_id``; maps conflicts to errors."""
        now = self.clock()
        try:
            with self.db.transaction() as session:
                if message_id:
                    if session.get(ProcessedMessage, message_id) is not None:
                        raise AlreadyProcessed(f"The mail {message_id} was already acted on.")
                    session.add(ProcessedMessage(message_id=message_id, processed_at=now))
                    session.flush()
                yield session, now
        except StaleGame:
            raise BoardChanged(
                "The board changed while your command was being processed. "
                "Look at the new position and send it again."
            ) from None
        except IntegrityError:
            # A concurrent transaction got there first: the same mail
            # delivered twice, or a move for the same board and move number.
            if message_id and self.message_seen(message_id):
                raise AlreadyProcessed(f"The mail {message_id} was already acted on.") from None
            raise BoardChanged(
                "Another command changed the same data at the same moment; nothing was done. "
                "Look at the board and send your command again."
            ) from None

    def message_seen(self, message_id: str) -> bool:
        """Whether a mail with this Message-ID was already acted on."""
        with self.db.transaction() as s:
            return s.get(ProcessedMessage, message_id) is not None

    def _send(
        self,
        session: Session,
        now: datetime,
        replies: list[Reply],
        sender: str | None,
        message_id: str | None,
    ) -> list[Reply]:
        """Thread replies to the sender under the command mail, queue them all."""
        if message_id and sender:
            replies = [
                replace(r, in_reply_to=message_id) if r.to.lower() == sender.lower() else r
                for r in replies
            ]
        enqueue_replies(session, replies, self.config, now)
        return replies

    def _rules(self, name: str) -> GameRules:
        try:
            return pbm.games.get(name)
        except KeyError:
            names = ", ".join(pbm.games.names())
            raise BadRequest(f"There is no game called {name!r}; games here: {names}.") from None

    def _player(self, session: Session, userid: str) -> Player:
        player = session.get(Player, userid.lower())
        if player is None:
            raise UnknownPlayer(f"There is no player {userid!r}; sign up with: signup UID PW")
        return player

    def _authenticate(
        self, session: Session, userid: str, auth: Auth, board: int | None = None
    ) -> Player:
        player = self._player(session, userid)
        if isinstance(auth, Admin):
            return player
        if isinstance(auth, Password):
            if not verify_password(auth.password, player.password_hash):
                raise WrongPassword(f"Wrong password for {player.display}.")
            return player
        secret = self.config.mail.secret
        if board is None or not secret:
            raise WrongPassword("This reply address does not let you do that; use your password.")
        expected = reply_token(secret, board, player.userid)
        if not hmac.compare_digest(expected, auth.token.lower()):
            raise WrongPassword(
                f"The reply address is not valid for {player.display} on board {board}."
            )
        return player

    def _game(self, session: Session, board: int) -> Game:
        """The board's row, locked for the rest of the transaction."""
        game = lock_game(session, board)
        if game is None:
            raise UnknownBoard(f"There is no board {board}.")
        return game

    def _seat(self, game: Game, player: Player) -> int:
        seat = game.seat_of(player.userid)
        if seat is None:
            raise NotAPlayer(f"{player.display} does not play on board {game.board}.")
        return seat

    @staticmethod
    def _active(game: Game) -> None:
        if game.status != "active":
            word = "cancelled" if game.status == "cancelled" else "over"
            raise GameOver(f"Board {game.board} is {word} ({game.result or game.status}).")

    def _view(self, session: Session, game: Game) -> BoardView:
        rules = self._rules(game.game)
        moves = session.exec(
            select(Move).where(Move.board == game.board).order_by(col(Move.ply))
        ).all()
        names = self._displays(session, [game.white, game.black, *(m.userid for m in moves)])
        subs = session.exec(
            select(Subscription)
            .where(Subscription.board == game.board)
            .order_by(col(Subscription.id))
        ).all()
        assert game.board is not None
        return BoardView(
            board=game.board,
            game=rules.name,
            title=rules.title,
            seat_names=rules.seat_names,
            variant=game.variant,
            options=dict(game.options),
            white=names[game.white],
            black=names[game.black],
            status=game.status,
            result=game.result,
            termination=game.termination,
            state=rules.load(game.position),
            moves=[
                MoveLine(m.ply, names[m.userid], m.notation, m.comment, m.created_at) for m in moves
            ],
            created_at=game.created_at,
            last_move_at=game.last_move_at,
            nag_days=game.nag_days,
            forfeit_days=game.forfeit_days,
            undo_request_by=names.get(game.undo_request_by or ""),
            cancel_request_by=names.get(game.cancel_request_by or ""),
            subscribers=[s.userid or s.email or "" for s in subs],
        )

    @staticmethod
    def _displays(session: Session, userids: Sequence[str]) -> dict[str, str]:
        wanted = set(userids)
        rows = session.exec(select(Player).where(col(Player.userid).in_(wanted))).all()
        found = {p.userid: p.display for p in rows}
        return {u: found.get(u, u) for u in wanted}

    def _audience(self, session: Session, game: Game) -> list[tuple[str | None, str]]:
        """(userid or None, address) of both players, then the subscribers."""
        out: list[tuple[str | None, str]] = []
        for uid in (game.white, game.black):
            out.append((uid, self._player(session, uid).email))
        subs = session.exec(
            select(Subscription)
            .where(Subscription.board == game.board)
            .order_by(col(Subscription.id))
        ).all()
        for s in subs:
            if s.userid:
                p = session.get(Player, s.userid)
                if p is not None:
                    out.append((s.userid, p.email))
            elif s.email:
                out.append((None, s.email))
        return out

    def _board_mails(self, session: Session, game: Game, headline: str = "") -> list[Reply]:
        """The board mail for every player and subscriber.

        Each player's copy carries their own reply address (``reply_as``),
        so the player to move can answer with just the move and the other
        can answer with chat, undo, resign and the like.
        """
        view = self._view(session, game)
        replies: list[Reply] = []
        for uid, address in self._audience(session, game):
            seat = game.seat_of(uid) if uid is not None else None
            name = view.players[seat] if seat is not None else None
            subject, body = render_board_mail(view, name, headline)
            replies.append(
                Reply(
                    to=address,
                    subject=subject,
                    body=body,
                    board=view.board,
                    reply_as=uid if seat is not None and game.status == "active" else None,
                )
            )
        return replies

    def _note(
        self, to: str | None, subject: str, text: str, board: int | None = None
    ) -> list[Reply]:
        body = "\n".join(wrap(text)) + "\n"
        return [Reply(to=to or "", subject=subject, body=body, board=board)]

    def _title(self, game: Game) -> str:
        return f"{self._rules(game.game).title} Board {game.board}"

    def _name(self, session: Session, userid: str) -> str:
        p = session.get(Player, userid)
        return p.display if p else userid

    # -- accounts

    def signup(
        self,
        userid: str,
        password: str,
        email: str,
        *,
        full_name: str = "",
        message_id: str | None = None,
    ) -> list[Reply]:
        """A new account; the welcome goes to ``email``."""
        if not USERID_RE.match(userid):
            raise BadRequest(
                f"{userid!r} cannot be a userid: use 1 to 20 letters, digits, '-' or '_', "
                "starting with a letter."
            )
        _check_password(password)
        _check_email(email)
        with self._unit(message_id) as (s, now):
            if s.get(Player, userid.lower()) is not None:
                raise UserExists(f"The userid {userid} is taken; choose another.")
            s.add(
                Player(
                    userid=userid.lower(),
                    display=userid,
                    email=email,
                    full_name=full_name,
                    password_hash=hash_password(password),
                    created_at=now,
                )
            )
            try:
                with s.begin_nested():
                    s.flush()
            except IntegrityError:
                raise UserExists(f"The userid {userid} is taken; choose another.") from None
            replies = self._note(
                email,
                f"Welcome to pbm, {userid}",
                f"Your account {userid} is ready. Start a game with: "
                f"accasta challenge {userid} OPPONENT. Help: help accasta.",
            )
            return self._send(s, now, replies, email, message_id)

    def change_password(
        self,
        userid: str,
        auth: Auth,
        new_password: str,
        *,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Set a new password; the confirmation goes to the account's address."""
        _check_password(new_password)
        if isinstance(auth, ReplyToken):
            raise WrongPassword("Changing a password needs the old password.")
        with self._unit(message_id) as (s, now):
            player = self._authenticate(s, userid, auth)
            player.password_hash = hash_password(new_password)
            s.add(player)
            replies = self._note(
                player.email,
                "pbm - password changed",
                f"The password of {player.display} was changed.",
            )
            return self._send(s, now, replies, player.email, message_id)

    def change_address(
        self, userid: str, auth: Auth, email: str, *, message_id: str | None = None
    ) -> list[Reply]:
        """Set a new address; both the old and the new one are told."""
        _check_email(email)
        if isinstance(auth, ReplyToken):
            raise WrongPassword("Changing an address needs the password.")
        with self._unit(message_id) as (s, now):
            player = self._authenticate(s, userid, auth)
            old = player.email
            player.email = email
            s.add(player)
            text = f"The address of {player.display} is now {email} (it was {old})."
            replies = self._note(email, "pbm - address changed", text)
            if old.lower() != email.lower():
                replies += self._note(old, "pbm - address changed", text)
            return self._send(s, now, replies, old, message_id)

    # -- boards

    def challenge(
        self,
        game: str,
        white: str,
        black: str,
        *,
        sender: str | None = None,
        admin: bool = False,
        variant: str | None = None,
        options: Mapping[str, str] | None = None,
        nag_days: int | None = None,
        forfeit_days: int | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """A new board, ``white`` moving first. Both players get the board mail.

        Unless ``admin``, ``sender`` must be the address of one of the two.
        ``options`` are the game's (Accasta: ``castle_win``, ``d4_opening``).
        The new board number is ``replies[0].board``.
        """
        rules = self._rules(game)
        try:
            chosen = rules.check_options(variant or rules.variants[0], dict(options or {}))
        except BadOption as exc:
            raise BadRequest(str(exc)) from None
        nag = self.config.clock.nag_days if nag_days is None else nag_days
        forfeit = self.config.clock.forfeit_days if forfeit_days is None else forfeit_days
        if nag < 1 or forfeit < 1:
            raise BadRequest("Reminder and forfeit times are whole numbers of days, at least 1.")
        if white.lower() == black.lower():
            raise BadRequest("A board needs two different players.")
        with self._unit(message_id) as (s, now):
            pw, pb = self._player(s, white), self._player(s, black)
            if not admin:
                addresses = {pw.email.lower(), pb.email.lower()}
                if sender is None or sender.lower() not in addresses:
                    raise NotAPlayer(
                        f"Only {pw.display} or {pb.display} can start a board for them; "
                        "send the challenge from your registered address."
                    )
            state = rules.new(variant or rules.variants[0], chosen)
            row = Game(
                game=rules.name,
                variant=state.variant,
                options=dict(state.options),
                white=pw.userid,
                black=pb.userid,
                status="active",
                position=state.dump(),
                ply=state.ply,
                version=0,
                nag_days=nag,
                forfeit_days=forfeit,
                created_at=now,
            )
            s.add(row)
            s.flush()
            replies = self._board_mails(s, row, f"New board {row.board} started.")
            return self._send(s, now, replies, sender, message_id)

    def move(
        self,
        board: int,
        userid: str,
        auth: Auth,
        move: str,
        *,
        comment: str = "",
        expected_move: int | None = None,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Play ``move`` (``MOVE#N`` or ``expected_move=N``: only as move N).

        ``resign`` as the move resigns. Everyone on the board gets the new
        board mail.
        """
        text = move.strip()
        guard = _GUARD_RE.match(text)
        if guard is not None:
            text = guard.group("move")
            if expected_move is None:
                expected_move = int(guard.group("n"))
        if text.lower() == "resign":
            return self.resign(
                board, userid, auth, comment=comment, sender=sender, message_id=message_id
            )
        if not text:
            raise BadRequest("No move given.")
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            seat = self._seat(game, player)
            self._active(game)
            if expected_move is not None and expected_move != game.ply + 1:
                raise BoardChanged(
                    f"Your move was meant as move {expected_move}, but board {board} is at "
                    f"move {game.ply + 1} now. Look at the board and send a new move."
                )
            rules = self._rules(game.game)
            state = rules.load(game.position)
            if state.to_move != seat:
                other = self._name(s, game.player_at(state.to_move))
                raise NotYourTurn(f"It is {other}'s turn on board {board}, not yours.")
            try:
                new_state, canonical = state.play(text)
            except IllegalMove as exc:
                raise IllegalMoveError(exc) from None
            s.add(
                Move(
                    board=board,
                    ply=new_state.ply,
                    userid=player.userid,
                    notation=canonical,
                    text=text,
                    comment=comment,
                    created_at=now,
                    message_id=message_id,
                    position_before=game.position,
                )
            )
            game.position = new_state.dump()
            game.ply = new_state.ply
            game.last_move_at = now
            game.undo_request_by = None
            game.cancel_request_by = None
            outcome = new_state.outcome
            if outcome is not None:
                game.status = "finished"
                game.result = "1-0" if outcome.winner == 0 else "0-1"
                game.termination = outcome.termination
            s.add(game)
            bump_version(s, game)
            replies = self._board_mails(s, game)
            return self._send(s, now, replies, sender, message_id)

    def resign(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        comment: str = "",
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Give up the game: the opponent wins (termination ``resign``)."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            seat = self._seat(game, player)
            self._active(game)
            game.status = "finished"
            game.result = "0-1" if seat == 0 else "1-0"
            game.termination = "resign"
            game.undo_request_by = None
            game.cancel_request_by = None
            s.add(game)
            bump_version(s, game)
            headline = f"{player.display} resigned."
            if comment.strip():
                headline += "\n" + comment.strip()
            replies = self._board_mails(s, game, headline)
            return self._send(s, now, replies, sender, message_id)

    def undo(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Ask to take back your last move (before the opponent has answered it)."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            seat = self._seat(game, player)
            self._active(game)
            last = self._last_move(s, game)
            if last is None or last.userid != player.userid:
                raise BadRequest(
                    "You can only ask to take back your own last move, before your "
                    "opponent has moved."
                )
            if game.undo_request_by is not None:
                raise BadRequest(f"Taking back move {last.ply} was already asked for.")
            game.undo_request_by = player.userid
            s.add(game)
            bump_version(s, game)
            opp = self._player(s, game.player_at(1 - seat))
            cmd = f"{game.game} accept {board} {opp.display} PASSWORD"
            replies = [
                Reply(
                    to=opp.email,
                    subject=f"{self._title(game)} - undo asked",
                    body="\n".join(
                        wrap(
                            f"{player.display} asks to take back move {last.ply} "
                            f"({last.notation}). Reply to this mail with accept or reject, "
                            f"or send: {cmd} (or reject)."
                        )
                    )
                    + "\n",
                    board=board,
                    reply_as=opp.userid,
                ),
                *self._note(
                    player.email,
                    f"{self._title(game)} - undo asked",
                    f"You asked {opp.display} to let you take back move {last.ply}.",
                    board,
                ),
            ]
            return self._send(s, now, replies, sender, message_id)

    def accept_undo(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Agree to the opponent's undo: the position before their move comes back."""
        with self._unit(message_id) as (s, now):
            game, player, requester = self._undo_answer(s, board, userid, auth)
            last = self._last_move(s, game)
            assert last is not None  # a request is only made with a move to take back
            game.position = last.position_before
            game.ply = last.ply - 1
            game.undo_request_by = None
            s.delete(last)
            s.flush()
            before = self._last_move(s, game)
            game.last_move_at = before.created_at if before is not None else None
            s.add(game)
            bump_version(s, game)
            headline = (
                f"{player.display} agreed: move {last.ply} ({last.notation}) by "
                f"{requester} was taken back."
            )
            replies = self._board_mails(s, game, headline)
            return self._send(s, now, replies, sender, message_id)

    def reject_undo(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Refuse the opponent's undo: the move stands."""
        with self._unit(message_id) as (s, now):
            game, player, _ = self._undo_answer(s, board, userid, auth)
            req = self._player(s, game.undo_request_by or "")
            game.undo_request_by = None
            s.add(game)
            bump_version(s, game)
            text = f"{player.display} did not agree to take back the last move; it stands."
            replies = self._note(req.email, f"{self._title(game)} - undo refused", text, board)
            replies += self._note(player.email, f"{self._title(game)} - undo refused", text, board)
            return self._send(s, now, replies, sender, message_id)

    def _undo_answer(
        self, s: Session, board: int, userid: str, auth: Auth
    ) -> tuple[Game, Player, str]:
        game = self._game(s, board)
        player = self._authenticate(s, userid, auth, board)
        self._seat(game, player)
        self._active(game)
        if game.undo_request_by is None:
            raise BadRequest(f"Nobody asked to take back a move on board {board}.")
        if game.undo_request_by == player.userid:
            raise NotAPlayer("Your opponent answers your undo request, not you.")
        return game, player, self._name(s, game.undo_request_by)

    @staticmethod
    def _last_move(s: Session, game: Game) -> Move | None:
        return s.exec(select(Move).where(Move.board == game.board, Move.ply == game.ply)).first()

    def cancel(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Cancel a board: at once with no moves played, else when both ask."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            seat = self._seat(game, player)
            self._active(game)
            opp = self._player(s, game.player_at(1 - seat))
            if game.ply == 0 or game.cancel_request_by == opp.userid or isinstance(auth, Admin):
                game.status = "cancelled"
                game.cancel_request_by = None
                game.undo_request_by = None
                s.add(game)
                bump_version(s, game)
                replies = self._board_mails(s, game, f"{player.display} cancelled the board.")
                return self._send(s, now, replies, sender, message_id)
            if game.cancel_request_by == player.userid:
                raise BadRequest(f"You already asked to cancel; waiting for {opp.display}.")
            game.cancel_request_by = player.userid
            s.add(game)
            bump_version(s, game)
            title = f"{self._title(game)} - cancel asked"
            replies = [
                Reply(
                    to=opp.email,
                    subject=title,
                    body="\n".join(
                        wrap(
                            f"{player.display} asks to cancel board {board}. To agree, reply "
                            f"to this mail with cancel, or send: {game.game} cancel {board} "
                            f"{opp.display} PASSWORD. To play on, just move."
                        )
                    )
                    + "\n",
                    board=board,
                    reply_as=opp.userid,
                ),
                *self._note(
                    player.email, title, f"You asked {opp.display} to cancel board {board}.", board
                ),
            ]
            return self._send(s, now, replies, sender, message_id)

    # -- reading

    def show(
        self, board: int, *, sender: str | None = None, message_id: str | None = None
    ) -> list[Reply]:
        """The current board mail, to ``sender``."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            subject, body = render_board_mail(self._view(s, game))
            replies = [Reply(to=sender or "", subject=subject, body=body, board=board)]
            return self._send(s, now, replies, sender, message_id)

    def history(
        self, board: int, *, sender: str | None = None, message_id: str | None = None
    ) -> list[Reply]:
        """Every move with its player, time and comment."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            view = self._view(s, game)
            lines = [f"{view.title} Board {board}: {view.white} vs {view.black}", ""]
            if not view.moves:
                lines.append("No moves yet.")
            for m in view.moves:
                line = f"{m.ply:>4}. {m.userid:<20} {m.notation:<24} {m.at:%Y-%m-%d %H:%M}"
                if len(line) > 78:  # a long turn: the time goes on its own line
                    line = f"{m.ply:>4}. {m.userid:<20} {m.notation}\n        {m.at:%Y-%m-%d %H:%M}"
                lines.append(line)
                if m.comment.strip():
                    lines.extend(wrap(m.comment.strip(), indent="        > "))
            body = "\n".join(line.rstrip() for line in lines) + "\n"
            replies = [
                Reply(
                    to=sender or "",
                    subject=board_subject(view, "history"),
                    body=body,
                    board=board,
                )
            ]
            return self._send(s, now, replies, sender, message_id)

    def legal_moves(
        self, board: int, *, sender: str | None = None, message_id: str | None = None
    ) -> list[Reply]:
        """Every legal move for the player to move."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            view = self._view(s, game)
            legal = view.state.legal_moves() if game.status == "active" else []
            if legal:
                head = f"{len(legal)} legal moves for {view.to_move_name} (move {game.ply + 1}):"
            else:
                head = "No legal moves: the game is over."
            lines = [head, "", *wrap("  ".join(legal))] if legal else [head]
            replies = [
                Reply(
                    to=sender or "",
                    subject=board_subject(view, "legal moves"),
                    body="\n".join(lines) + "\n",
                    board=board,
                )
            ]
            return self._send(s, now, replies, sender, message_id)

    def games(
        self,
        userid: str | None = None,
        *,
        game: str | None = None,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Active boards: of ``userid`` (``games UID``), of ``game`` (``G games [UID]``)."""
        if game is not None:
            self._rules(game)
        with self._unit(message_id) as (s, now):
            boards = self._summaries(s, "active", userid, game)
            lines = [
                f"Board {b.board:>5}  {b.game} {b.variant:<8}  {b.white} - {b.black}  "
                f"move {b.ply + 1}, {b.to_move} to move"
                for b in boards
            ]
            if not lines:
                lines = ["No active boards."]
            who = f" of {self._name(s, userid.lower())}" if userid else ""
            body = "\n".join(line[:78] for line in lines) + "\n"
            replies = [Reply(to=sender or "", subject=f"pbm - active boards{who}", body=body)]
            return self._send(s, now, replies, sender, message_id)

    # -- talking and following

    def chat(
        self,
        board: int,
        userid: str,
        auth: Auth,
        text: str,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Send ``text`` to everyone else on the board (players and subscribers)."""
        if not text.strip():
            raise BadRequest("A chat needs a message: put it in the body of the mail.")
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            audience = self._audience(s, game)
            if all(uid != player.userid for uid, _ in audience):
                raise NotAPlayer(f"{player.display} neither plays nor follows board {board}.")
            subject = f"{self._title(game)} - chat from {player.display}"
            body = "\n".join(
                [f"{player.display} writes on board {board}:", "", *wrap(text.strip())]
            )
            replies = [
                Reply(
                    to=address,
                    subject=subject,
                    body=body + "\n",
                    board=board,
                    reply_as=uid if uid and game.seat_of(uid) is not None else None,
                )
                for uid, address in audience
                if uid != player.userid
            ]
            return self._send(s, now, replies, sender, message_id)

    def subscribe(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Follow a board: get every board mail. The current one comes at once."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            if game.seat_of(player.userid) is not None:
                raise BadRequest(f"You play on board {board}; you get its mail already.")
            existing = s.exec(
                select(Subscription).where(
                    Subscription.board == board, Subscription.userid == player.userid
                )
            ).first()
            if existing is not None:
                raise BadRequest(f"You already follow board {board}.")
            s.add(Subscription(board=board, userid=player.userid, email=None, created_at=now))
            s.flush()
            subject, body = render_board_mail(
                self._view(s, game), None, f"You now follow board {board}."
            )
            replies = [Reply(to=player.email, subject=subject, body=body, board=board)]
            return self._send(s, now, replies, sender, message_id)

    def unsubscribe(
        self,
        board: int,
        userid: str,
        auth: Auth,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Stop following a board."""
        with self._unit(message_id) as (s, now):
            game = self._game(s, board)
            player = self._authenticate(s, userid, auth, board)
            sub = s.exec(
                select(Subscription).where(
                    Subscription.board == board, Subscription.userid == player.userid
                )
            ).first()
            if sub is None:
                raise BadRequest(f"You do not follow board {board}.")
            s.delete(sub)
            replies = self._note(
                player.email,
                f"{self._title(game)} - unsubscribed",
                f"You no longer follow board {board}.",
                board,
            )
            return self._send(s, now, replies, sender, message_id)

    def help(
        self,
        game: str | None = None,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """The commands, or the rules and notation of ``game``."""
        if game is None:
            subject, body = "pbm - help", COMMANDS_HELP
        else:
            rules = self._rules(game)
            subject, body = f"{rules.title} - help", rules.help_text()
        with self._unit(message_id) as (s, now):
            replies = [Reply(to=sender or "", subject=subject, body=body)]
            return self._send(s, now, replies, sender, message_id)

    # -- errors

    def report_error(
        self,
        to: str,
        error: ServiceError | str,
        *,
        command: str = "",
        board: int | None = None,
        game: str = "accasta",
        message_id: str | None = None,
    ) -> list[Reply]:
        """Queue an error reply that quotes ``command`` and says why it failed.

        Remembers ``message_id`` too, so a redelivered bad mail is not
        answered twice. Returns [] for ``AlreadyProcessed`` or a mail
        already answered.
        """
        if isinstance(error, AlreadyProcessed):
            return []
        why = error.message if isinstance(error, ServiceError) else error
        try:
            title = self._rules(game).title
        except BadRequest:
            title = "pbm"
        subject = f"{title} Board {board} - error" if board is not None else f"{title} - error"
        lines = []
        if command:
            lines += ["Your command:", *wrap(command, indent="  > "), ""]
        lines += [*wrap(why), "", "Nothing was changed. Send 'help' for the commands."]
        replies = [
            Reply(to=to, subject=subject, body="\n".join(lines) + "\n", board=board, is_error=True)
        ]
        try:
            with self._unit(message_id) as (s, now):
                return self._send(s, now, replies, to, message_id)
        except AlreadyProcessed:
            return []

    # -- queries for the CLI (no replies, no outbox)

    def board_view(self, board: int) -> BoardView:
        """Everything about a board, as a value."""
        with self.db.transaction() as s:
            game = s.get(Game, board)
            if game is None:
                raise UnknownBoard(f"There is no board {board}.")
            return self._view(s, game)

    def board_players(self, board: int) -> tuple[str, str]:
        """The userids (lower-case keys) of White and Black."""
        with self.db.transaction() as s:
            game = s.get(Game, board)
            if game is None:
                raise UnknownBoard(f"There is no board {board}.")
            return game.white, game.black

    def list_boards(
        self,
        status: str | None = "active",
        userid: str | None = None,
        game: str | None = None,
    ) -> list[BoardSummary]:
        """Boards by number; ``status`` None or ``all`` for every status."""
        with self.db.transaction() as s:
            return self._summaries(s, status, userid, game)

    def _summaries(
        self, s: Session, status: str | None, userid: str | None, game: str | None
    ) -> list[BoardSummary]:
        stmt = select(Game).order_by(col(Game.board))
        if status not in (None, "all"):
            stmt = stmt.where(Game.status == status)
        if game is not None:
            stmt = stmt.where(Game.game == self._rules(game).name)
        if userid is not None:
            uid = self._player(s, userid).userid
            stmt = stmt.where((col(Game.white) == uid) | (col(Game.black) == uid))
        rows = s.exec(stmt).all()
        names = self._displays(s, [u for g in rows for u in (g.white, g.black)])
        out = []
        for g in rows:
            to_move = None
            if g.status == "active":
                to_move = names[g.player_at(self._rules(g.game).load(g.position).to_move)]
            assert g.board is not None
            out.append(
                BoardSummary(
                    board=g.board,
                    game=g.game,
                    variant=g.variant,
                    white=names[g.white],
                    black=names[g.black],
                    status=g.status,
                    result=g.result,
                    termination=g.termination,
                    ply=g.ply,
                    to_move=to_move,
                    created_at=g.created_at,
                    last_move_at=g.last_move_at,
                )
            )
        return out

    def player(self, userid: str) -> PlayerInfo:
        with self.db.transaction() as s:
            p = self._player(s, userid)
            return PlayerInfo(p.userid, p.display, p.email, p.full_name, p.created_at)

    def players(self) -> list[PlayerInfo]:
        with self.db.transaction() as s:
            rows = s.exec(select(Player).order_by(col(Player.userid))).all()
            return [
                PlayerInfo(p.userid, p.display, p.email, p.full_name, p.created_at) for p in rows
            ]


def _check_password(password: str) -> None:
    if not password or any(c.isspace() for c in password) or len(password) > 100:
        raise BadRequest("A password is one word: 1 to 100 characters, no spaces.")


def _check_email(email: str) -> None:
    if not EMAIL_RE.match(email):
        raise BadRequest(f"{email!r} is not a mail address.")
