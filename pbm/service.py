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

Clocks (``pbm.clock``): the player to move's clock runs from
``games.clock_since`` minus his vacations and site pauses; ``run_clock``
sends a reminder once per ``nag_days`` of running time and forfeits the
board after ``forfeit_days``. Queued moves (``queue``) are tried, in the
same transaction, the moment the opponent moves. Every finished game
(castle, no moves, resign, forfeit) is rated when it ends (``pbm.ratings``).
"""

from __future__ import annotations

import functools
import hmac
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

import pbm.games
from pbm import ratings as elo
from pbm import store
from pbm.boardmail import (
    BoardView,
    MoveLine,
    RatingChange,
    board_subject,
    fmt_time,
    render_board_mail,
    render_board_mails,
    wrap,
)
from pbm.clock import DAY, Stop, due_at, nags_sent, running_time
from pbm.config import Config
from pbm.games import BadNotation, BadOption, GameState, IllegalMove
from pbm.games import Game as GameRules
from pbm.replies import Reply, reply_token
from pbm.store import (
    SNAPSHOT,
    ClockPause,
    Game,
    Move,
    Player,
    ProcessedMessage,
    QueuedMove,
    Rating,
    StaleGame,
    Subscription,
    Transactions,
    UTCDateTime,
    Vacation,
    bump_version,
    enqueue_replies,
    hash_password,
    in_params,
    in_values,
    insert_new,
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


class NoVacationLeft(ServiceError):
    """A vacation longer than what is left of the player's yearly allowance."""


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


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of a rating list; ``provisional``: fewer than 20 rated games."""

    game: str
    variant: str
    rank: int
    player: str
    rating: int
    games: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class ClockState:
    """The clock of the player to move on one board, at ``now``."""

    to_move: str  # userid
    since: datetime
    stops: Sequence[Stop]
    running: timedelta
    next_nag_at: datetime | None  # None: no reminder left before the forfeit
    forfeit_at: datetime
    nag_due: bool
    forfeit_due: bool
    paused_since: datetime | None


@dataclass(frozen=True, slots=True)
class MovePlan:
    """A move worked out on a snapshot, before the write lock is taken (``Service.plan_move``).

    Checking the move and writing the board mails is most of a move's work;
    done here, outside the transaction that changes the board, it keeps
    SQLite's single write lock free for others. ``Service.move`` given the
    plan only checks that the board is still at ``version`` and writes what
    was worked out; if anything changed, it does the whole move afresh.
    """

    board: int
    userid: str
    text: str  # the move as written, without a #N guard
    version: int  # the board's version the plan was made from
    ply: int  # the new move's number
    canonical: str
    comment: str
    position_before: str
    position: str
    planned_at: datetime  # the move's time
    replies: tuple[Reply, ...]  # the board mails


class _PlanOutdated(Exception):
    """The board changed since its ``MovePlan`` was made (rolls the unit back)."""


MAX_QUEUED = 20  # queued moves per player and board


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
  G queue B UID PW MOVE [if OPPONENT-MOVE]
                                  a reply played the moment your opponent
                                  moves (only if he plays OPPONENT-MOVE);
                                  several lines are alternatives, in order
  G queue B UID PW clear          forget your queued moves on B
  vacation UID PW DAYS            stop your clocks on every board for DAYS
                                  days (a yearly allowance); vacation UID PW
                                  off: back early
  G ratings                       the rating list of G

The easiest way to move: reply to the board mail with just your move.
"""


# ---------------------------------------------------------------- statements
#
# The reads behind every board mail, built once: SQLAlchemy then skips building
# and keying the statement on each call (values are bound parameters).

_GAME = select(Game).where(col(Game.board) == sa.bindparam("board"))
_MOVE_LINES = (  # the fields of a MoveLine, in its order
    sa.select(
        col(Move.ply),
        col(Move.userid),
        col(Move.notation),
        col(Move.comment),
        col(Move.created_at),
        col(Move.queued),
    )
    .where(col(Move.board) == sa.bindparam("board"))
    .order_by(col(Move.ply))
)
_PASSWORD_HASH = sa.select(col(Player.password_hash)).where(
    col(Player.userid) == sa.bindparam("userid")
)
_SUBSCRIPTIONS = (
    sa.select(col(Subscription.userid), col(Subscription.email))
    .where(col(Subscription.board) == sa.bindparam("board"))
    .order_by(col(Subscription.id))
)
_VACATIONS = (
    sa.select(col(Vacation.userid), col(Vacation.starts_at), col(Vacation.ends_at))
    .where(
        col(Vacation.userid).in_([sa.bindparam("white"), sa.bindparam("black")]),
        col(Vacation.ends_at) > sa.bindparam("after", type_=UTCDateTime),
    )
    .order_by(col(Vacation.id))
)


@functools.lru_cache(maxsize=32)
def _people_of(count: int) -> sa.Executable:
    """userid, display and email of ``count`` players (``in_params("u", count)``).

    One statement per count, built once.
    """
    return sa.select(col(Player.userid), col(Player.display), col(Player.email)).where(
        col(Player.userid).in_(in_params("u", count))
    )


@functools.lru_cache(maxsize=64)
def _ahead(kind: str, count: int) -> sa.Executable:
    """A statement of ``Service.read_ahead`` for ``count`` boards (userids): ``b0``, ``b1``...

    Built once per count (``in_params``), like ``_people_of``.
    """
    at = in_params("b", count)
    if kind == "games":
        return select(Game).where(col(Game.board).in_(at))
    if kind == "queued":
        return sa.select(col(QueuedMove.board)).where(col(QueuedMove.board).in_(at))
    if kind == "moves":
        return (
            sa.select(col(Move.board), *_MOVE_LINES.selected_columns)
            .where(col(Move.board).in_(at))
            .order_by(col(Move.board), col(Move.ply))
        )
    if kind == "subscriptions":
        return (
            sa.select(col(Subscription.board), *_SUBSCRIPTIONS.selected_columns)
            .where(col(Subscription.board).in_(at))
            .order_by(col(Subscription.id))
        )
    if kind == "vacations":
        return (
            sa.select(col(Vacation.userid), col(Vacation.starts_at), col(Vacation.ends_at))
            .where(
                col(Vacation.userid).in_(at),
                col(Vacation.ends_at) > sa.bindparam("after", type_=UTCDateTime),
            )
            .order_by(col(Vacation.id))
        )
    raise ValueError(f"no read-ahead statement {kind!r}")


_PAUSES = sa.select(col(ClockPause.started_at), col(ClockPause.ended_at)).where(
    sa.or_(
        col(ClockPause.ended_at).is_(None),
        col(ClockPause.ended_at) > sa.bindparam("after", type_=UTCDateTime),
    )
)


_EVERY_PAUSE = sa.select(col(ClockPause.started_at), col(ClockPause.ended_at))
_EVERY_PAUSE_KEY = "pbm_every_pause"  # Session.info: a snapshot's pauses, read once


@dataclass
class ReadAhead:
    """What planning moves on ``boards`` reads, read for all of them at once.

    Kept in a snapshot's ``Session.info`` (``Service.read_ahead``), where
    nothing changes; the reads behind a board mail look here first.
    """

    boards: frozenset[int]
    # The games, as read: a session holds its objects only weakly, and a game
    # nobody holds would be read again. A plan takes its game out (it changes it).
    games: dict[int, Game]
    queued: set[int]  # boards with a queued move
    moves: dict[int, list[Any]]  # board -> its _MOVE_LINES rows
    subscriptions: dict[int, list[Follower]]
    people: dict[str, Person]
    asked: set[str]  # the userids looked for in ``people`` (not all exist)
    vacations: list[Away]  # of the players in ``asked``, ending after ``vacations_after``
    vacations_after: datetime


_READ_AHEAD = "pbm_read_ahead"  # Session.info key of a snapshot's ReadAhead


def _read_ahead(session: Session) -> ReadAhead | None:
    found: ReadAhead | None = session.info.get(_READ_AHEAD)
    return found


class Person(NamedTuple):
    """A player as board mails name and address them."""

    display: str
    email: str


class Follower(NamedTuple):
    """A subscriber of a board: a player (``userid``) or a bare address."""

    userid: str | None
    email: str | None


class Away(NamedTuple):
    """A vacation, as the clocks read it."""

    userid: str
    starts_at: datetime
    ends_at: datetime


class Pause(NamedTuple):
    """A site-wide clock pause, as the clocks read it (``ended_at`` None: still on)."""

    started_at: datetime
    ended_at: datetime | None


_GAMES: sa.Table = Game.__table__  # type: ignore[attr-defined]
# A planned move's writes (``Service._apply_plan``): the board, if still at the
# planned version, and the move.
_PLAYED = (
    sa.update(_GAMES)
    .where(
        _GAMES.c.board == sa.bindparam("at_board"),
        _GAMES.c.version == sa.bindparam("at_version"),
        _GAMES.c.status == "active",
    )
    .values(
        position=sa.bindparam("position"),
        ply=sa.bindparam("ply"),
        last_move_at=sa.bindparam("last_move_at"),
        clock_since=sa.bindparam("clock_since"),
        last_nag_at=None,
        undo_request_by=None,
        cancel_request_by=None,
        version=sa.bindparam("version"),
    )
)
_MOVE = sa.insert(Move.__table__)  # type: ignore[attr-defined]
_QUEUED = (
    sa.select(col(QueuedMove.id)).where(col(QueuedMove.board) == sa.bindparam("board")).limit(1)
)


def _rows(session: Session, stmt: sa.Executable, **params: Any) -> Sequence[Any]:
    """Plain rows of a column query, run on the session's connection.

    Skips the ORM's per-statement work (about half the cost of these small
    queries); pending ORM changes are flushed first, as a query would.
    """
    session.flush()
    return session.connection().execute(stmt, params).all()


# ---------------------------------------------------------------- the service


class Service:
    """The use cases over one database; see the module docstring."""

    def __init__(
        self,
        db: Transactions,
        config: Config,
        clock: Callable[[], datetime] = utc_now,
        send_clock: Callable[[], datetime] | None = None,
    ) -> None:
        """``send_clock``: when replies become due for sending (default: ``clock``).

        A simulated clock ahead of real time (``pbm tick --now``) still has its
        mail sent at once when ``send_clock`` is real time.
        """
        self.db = db
        self.config = config
        self.clock = clock
        self.send_clock = send_clock
        # Told the ids of the outbox rows each command writes (the inbox worker
        # hands them to the sender); the transaction may still roll them back.
        self.on_queued: Callable[[list[int]], None] | None = None

    # -- plumbing

    @contextmanager
    def _unit(self, message_id: str | None) -> Iterator[tuple[Session, datetime]]:
        """One transaction; remembers ``message_id``; maps conflicts to errors."""
        now = self.clock()
        try:
            with self.db.transaction() as session:
                if message_id:
                    seen = {"message_id": message_id, "processed_at": now}
                    if not insert_new(session, ProcessedMessage, seen):
                        raise AlreadyProcessed(f"The mail {message_id} was already acted on.")
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
        with self.db.read() as s:
            return store.message_seen(s, message_id)

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
        due = self.send_clock() if self.send_clock is not None else None
        ids = enqueue_replies(session, replies, self.config, now, due)
        if self.on_queued is not None and ids:
            self.on_queued(ids)
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
            raise _no_such_player(userid)
        return player

    def _token_fits(self, token: str, board: int | None, userid: str) -> bool:
        """Whether a reply token is the one of ``userid`` (lower-case key) on ``board``."""
        secret = self.config.mail.secret
        if board is None or not secret:
            return False
        return hmac.compare_digest(reply_token(secret, board, userid), token.lower())

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
        if board is None or not self.config.mail.secret:
            raise WrongPassword("This reply address does not let you do that; use your password.")
        if not self._token_fits(auth.token, board, player.userid):
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

    def _on_board(
        self, s: Session, board: int, userid: str, auth: Auth
    ) -> tuple[Game, Player, int]:
        """For a player's command on a board in play: the locked board, the player, his seat."""
        game = self._game(s, board)
        player = self._authenticate(s, userid, auth, board)
        seat = self._seat(game, player)
        self._active(game)
        return game, player, seat

    @staticmethod
    def _active(game: Game) -> None:
        if game.status != "active":
            word = "cancelled" if game.status == "cancelled" else "over"
            raise GameOver(f"Board {game.board} is {word} ({game.result or game.status}).")

    def _view(
        self,
        session: Session,
        game: Game,
        now: datetime | None = None,
        played: Sequence[MoveLine] = (),
        subs: Sequence[Follower] | None = None,
        people: Mapping[str, Person] | None = None,
    ) -> BoardView:
        """What a board mail shows; ``played``: moves not yet in the database (a plan's).

        ``subs`` and ``people`` (by userid), when given, are the board's
        subscribers and the players it names, read already.

        Few statements, and plain columns rather than ORM objects: a board mail
        goes out with every move.
        """
        rules = self._rules(game.game)
        now = now or self.clock()
        ahead = _read_ahead(session)
        stored: Sequence[Any]
        if ahead is not None and game.board in ahead.boards:
            stored = ahead.moves.get(game.board, [])
        else:
            stored = _rows(session, _MOVE_LINES, board=game.board)
        moves = [*(MoveLine(*row) for row in stored), *played]
        wanted = {game.white, game.black, *(m.userid for m in moves)}
        if people is None or not wanted <= people.keys():
            people = self._people(session, wanted)
        names = {uid: people[uid].display if uid in people else uid for uid in wanted}
        if subs is None:
            subs = self._subscriptions(session, game)
        next_nag_at = forfeit_at = None
        notes: list[str] = []
        if game.status == "active":
            # Both players' vacations at once: the clock needs the one to move's,
            # the notes whoever is away now.
            since = game.clock_since or game.last_move_at or game.created_at
            away_after = min(since, now)
            if (
                ahead is not None
                and {game.white, game.black} <= ahead.asked
                and away_after >= ahead.vacations_after
            ):
                vacations = [
                    v
                    for v in ahead.vacations
                    if v.userid in (game.white, game.black) and v.ends_at > away_after
                ]
            else:
                rows = _rows(
                    session, _VACATIONS, white=game.white, black=game.black, after=away_after
                )
                vacations = [Away(*row) for row in rows]
            st = self._clock_state(session, game, now, vacations=vacations)
            next_nag_at, forfeit_at = st.next_nag_at, st.forfeit_at
            away = {v.userid: v.ends_at for v in vacations if v.starts_at <= now < v.ends_at}
            for uid in (game.white, game.black):
                if uid not in away:
                    continue
                notes.append(
                    f"{names[uid]} is on vacation until {fmt_time(away[uid])}: "
                    f"{names[uid]}'s clock stands still until then."
                )
            if st.paused_since is not None:
                notes.append(
                    f"All clocks are stopped since {fmt_time(st.paused_since)} (the site is "
                    "paused); the dates below assume they run again now."
                )
        changes: list[RatingChange] = []
        for uid, before, after in (
            (game.white, game.white_rating_before, game.white_rating_after),
            (game.black, game.black_rating_before, game.black_rating_after),
        ):
            if before is not None and after is not None:
                changes.append(RatingChange(names[uid], before, after))
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
                MoveLine(m.ply, names[m.userid], m.notation, m.comment, m.at, m.queued)
                for m in moves
            ],
            created_at=game.created_at,
            last_move_at=game.last_move_at,
            nag_days=game.nag_days,
            forfeit_days=game.forfeit_days,
            undo_request_by=names.get(game.undo_request_by or ""),
            cancel_request_by=names.get(game.cancel_request_by or ""),
            subscribers=[s.userid or s.email or "" for s in subs],
            next_nag_at=next_nag_at,
            forfeit_at=forfeit_at,
            clock_notes=notes,
            rating_changes=changes,
        )

    # -- clocks

    @staticmethod
    def _pauses(session: Session, since: datetime) -> list[Pause]:
        """The site-wide clock pauses still running or ended after ``since``.

        On a snapshot, where nothing changes, every pause is read once and kept
        for the snapshot's other boards (the inbox worker plans many on one).
        """
        if not session.info.get(SNAPSHOT):
            return [Pause(*row) for row in _rows(session, _PAUSES, after=since)]
        every: list[Pause] | None = session.info.get(_EVERY_PAUSE_KEY)
        if every is None:
            every = [Pause(*row) for row in _rows(session, _EVERY_PAUSE)]
            session.info[_EVERY_PAUSE_KEY] = every
        return [p for p in every if p.ended_at is None or p.ended_at > since]

    def _clock_state(
        self,
        session: Session,
        game: Game,
        now: datetime,
        vacations: Sequence[Vacation | Away] | None = None,
        pauses: Sequence[Pause] | None = None,
    ) -> ClockState:
        """The running clock of the player to move (``vacations``/``pauses``: preloaded)."""
        since = game.clock_since or game.last_move_at or game.created_at
        to_move = game.player_at(self._rules(game.game).load(game.position).to_move)
        if vacations is None:
            vacations = session.exec(
                select(Vacation).where(Vacation.userid == to_move, col(Vacation.ends_at) > since)
            ).all()
        if pauses is None:
            pauses = self._pauses(session, since)
        stops = [(v.starts_at, v.ends_at) for v in vacations if v.userid == to_move]
        stops += [(p.started_at, p.ended_at or now) for p in pauses]
        paused_since = next((p.started_at for p in pauses if p.ended_at is None), None)
        running = running_time(since, now, stops)
        nag, forfeit = timedelta(days=game.nag_days), timedelta(days=game.forfeit_days)
        nth = nags_sent(since, game.last_nag_at, nag, stops) + 1
        next_nag_at = due_at(since, nth * nag, stops) if nth * nag < forfeit else None
        return ClockState(
            to_move=to_move,
            since=since,
            stops=stops,
            running=running,
            next_nag_at=next_nag_at,
            forfeit_at=due_at(since, forfeit, stops),
            nag_due=next_nag_at is not None and running >= nth * nag,
            forfeit_due=running >= forfeit,
            paused_since=paused_since,
        )

    def clocks_paused_since(self) -> datetime | None:
        """When the site-wide clock pause began, or None if the clocks run."""
        with self.db.transaction() as s:
            row = s.exec(select(ClockPause).where(col(ClockPause.ended_at).is_(None))).first()
            return row.started_at if row is not None else None

    def pause_clocks(self) -> datetime:
        """Stop every clock (a site outage): ``pbm clock pause``. Returns the pause start."""
        with self._unit(None) as (s, now):
            open_ = s.exec(
                select(ClockPause).where(col(ClockPause.ended_at).is_(None)).with_for_update()
            ).first()
            if open_ is not None:
                raise BadRequest(
                    f"The clocks are already stopped since {fmt_time(open_.started_at)}."
                )
            s.add(ClockPause(started_at=now, ended_at=None))
            return now

    def resume_clocks(self) -> timedelta:
        """Start the clocks again; the paused span is not counted. Returns that span."""
        with self._unit(None) as (s, now):
            open_ = s.exec(
                select(ClockPause).where(col(ClockPause.ended_at).is_(None)).with_for_update()
            ).first()
            if open_ is None:
                raise BadRequest("The clocks are not stopped.")
            open_.ended_at = max(now, open_.started_at)
            s.add(open_)
            return open_.ended_at - open_.started_at

    def boards_due(self) -> list[int]:
        """Active boards whose reminder or forfeit is due now (a read; nothing changes)."""
        now = self.clock()
        with self.db.transaction() as s:
            games = s.exec(
                select(Game).where(Game.status == "active").order_by(col(Game.board))
            ).all()
            if not games:
                return []
            oldest = min(g.clock_since or g.last_move_at or g.created_at for g in games)
            uids = {u for g in games for u in (g.white, g.black)}
            vacations = s.exec(
                select(Vacation).where(
                    col(Vacation.userid).in_(uids), col(Vacation.ends_at) > oldest
                )
            ).all()
            pauses = self._pauses(s, oldest)
            if any(p.ended_at is None for p in pauses):
                return []
            out = []
            for g in games:
                st = self._clock_state(s, g, now, vacations, pauses)
                if st.nag_due or st.forfeit_due:
                    assert g.board is not None
                    out.append(g.board)
            return out

    def run_clock(self, board: int) -> str | None:
        """Send the due reminder or forfeit the board: ``nag``, ``forfeit`` or None."""
        with self._unit(None) as (s, now):
            game = self._game(s, board)
            if game.status != "active":
                return None
            st = self._clock_state(s, game, now)
            if st.paused_since is not None:
                return None
            late = self._player(s, st.to_move)
            if st.forfeit_due:
                seat = game.seat_of(late.userid)
                winner = self._name(s, game.player_at(1 - (seat or 0)))
                self._finish(s, game, "0-1" if seat == 0 else "1-0", "forfeit", now)
                bump_version(s, game)
                headline = (
                    f"{late.display} did not move for {game.forfeit_days} days: board {board} "
                    f"is forfeited and {winner} wins."
                )
                self._send(s, now, self._board_mails(s, game, headline), None, None)
                return "forfeit"
            if st.nag_due:
                game.last_nag_at = now
                s.add(game)
                bump_version(s, game)
                view = self._view(s, game, now)
                headline = (
                    f"Reminder: it is your move on board {board}, {late.display}, and you have "
                    f"not moved for {st.running.days} days. Unless you move, the board is "
                    f"forfeited on {fmt_time(view.forfeit_at)}."
                )
                subject, body = render_board_mail(view, late.display, headline)
                nag = Reply(
                    to=late.email,
                    subject=f"Nag: {subject}",
                    body=body,
                    board=board,
                    reply_as=late.userid,
                )
                self._send(s, now, [nag], None, None)
                return "nag"
            return None

    # -- ending and rating

    def _finish(self, s: Session, game: Game, result: str, termination: str, now: datetime) -> None:
        """End the game with ``result`` (``1-0``/``0-1``), drop queued moves, rate it."""
        game.status = "finished"
        game.ended_at = now
        game.result = result
        game.termination = termination
        game.undo_request_by = None
        game.cancel_request_by = None
        self._drop_queues(s, game)
        self._rate(s, game)
        s.add(game)

    @staticmethod
    def _drop_queues(s: Session, game: Game) -> int:
        rows = s.exec(select(QueuedMove).where(QueuedMove.board == game.board)).all()
        for row in rows:
            s.delete(row)
        return len(rows)

    def _rate(self, s: Session, game: Game) -> None:
        """Update both players' Elo ratings for the game's variant; remember them on the game."""
        # Lock in userid order, so two games ending at once cannot deadlock.
        rows = {
            uid: self._rating_row(s, game.game, game.variant, uid)
            for uid in sorted((game.white, game.black))
        }
        white, black = rows[game.white], rows[game.black]
        score = {"1-0": 1.0, "0-1": 0.0}.get(game.result or "", 0.5)
        w = elo.Side(elo.round_half_away(white.rating), white.games_played)
        b = elo.Side(elo.round_half_away(black.rating), black.games_played)
        new_w, new_b = elo.rate(w, b, score)
        game.white_rating_before, game.white_rating_after = w.rating, new_w
        game.black_rating_before, game.black_rating_after = b.rating, new_b
        for row, new in ((white, new_w), (black, new_b)):
            row.rating = float(new)
            row.games_played += 1
            s.add(row)

    @staticmethod
    def _rating_row(s: Session, game: str, variant: str, userid: str) -> Rating:
        """The player's rating row (created at the start rating), locked for update."""
        values = {
            "game": game,
            "variant": variant,
            "userid": userid,
            "rating": float(elo.START),
            "games_played": 0,
        }
        insert_new(s, Rating, values)
        return s.exec(
            select(Rating)
            .where(Rating.game == game, Rating.variant == variant, Rating.userid == userid)
            .with_for_update()
            .execution_options(populate_existing=True)
        ).one()

    @classmethod
    def _displays(cls, session: Session, userids: Iterable[str]) -> dict[str, str]:
        wanted = set(userids)
        found = cls._people(session, wanted)
        return {u: found[u].display if u in found else u for u in wanted}

    @staticmethod
    def _people(session: Session, userids: Iterable[str]) -> dict[str, Person]:
        """The players of ``userids`` that exist, by userid."""
        wanted = sorted(set(userids))
        if not wanted:
            return {}
        ahead = _read_ahead(session)
        if ahead is not None and ahead.asked.issuperset(wanted):
            return {uid: ahead.people[uid] for uid in wanted if uid in ahead.people}
        params = in_values("u", wanted)
        return {
            uid: Person(display, email)
            for uid, display, email in _rows(session, _people_of(len(wanted)), **params)
        }

    @staticmethod
    def _subscriptions(session: Session, game: Game) -> list[Follower]:
        ahead = _read_ahead(session)
        if ahead is not None and game.board in ahead.boards:
            return list(ahead.subscriptions.get(game.board, []))
        return [Follower(*row) for row in _rows(session, _SUBSCRIPTIONS, board=game.board)]

    def _audience(
        self,
        session: Session,
        game: Game,
        subs: Sequence[Follower] | None = None,
        people: Mapping[str, Person] | None = None,
    ) -> list[tuple[str | None, str]]:
        """(userid or None, address) of both players, then the subscribers."""
        if subs is None:
            subs = self._subscriptions(session, game)
        if people is None:
            people = self._people(
                session, {game.white, game.black, *(s.userid for s in subs if s.userid)}
            )
        emails = {uid: person.email for uid, person in people.items()}
        out: list[tuple[str | None, str]] = []
        for uid in (game.white, game.black):
            if uid not in emails:
                raise _no_such_player(uid)
            out.append((uid, emails[uid]))
        for s in subs:
            if s.userid:
                if s.userid in emails:
                    out.append((s.userid, emails[s.userid]))
            elif s.email:
                out.append((None, s.email))
        return out

    def _board_mails(
        self,
        session: Session,
        game: Game,
        headline: str = "",
        *,
        played: Sequence[MoveLine] = (),
        now: datetime | None = None,
    ) -> list[Reply]:
        """The board mail for every player and subscriber.

        Each player's copy carries their own reply address (``reply_as``),
        so the player to move can answer with just the move and the other
        can answer with chat, undo, resign and the like.
        """
        subs = self._subscriptions(session, game)
        # Who is named and who is written to, in one read: the players, the subscribers.
        people = self._people(
            session, {game.white, game.black, *(s.userid for s in subs if s.userid)}
        )
        view = self._view(session, game, now, played, subs, people)
        audience = self._audience(session, game, subs, people)
        seats = [game.seat_of(uid) if uid is not None else None for uid, _ in audience]
        names = [view.players[seat] if seat is not None else None for seat in seats]
        mails = render_board_mails(view, names, headline)
        return [
            Reply(
                to=address,
                subject=subject,
                body=body,
                board=view.board,
                reply_as=uid if seat is not None and game.status == "active" else None,
            )
            for (uid, address), seat, (subject, body) in zip(audience, seats, mails, strict=True)
        ]

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

    def vacation(
        self,
        userid: str,
        auth: Auth,
        days: int | None,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Go on vacation for ``days`` days from now (None: come back now).

        While away, the player's clocks stand still on every board. Each
        vacation counts, in whole days begun, against the allowance
        (``clock.vacation_days_per_year``) of the calendar year (UTC) it
        starts in; coming back early gives the days not begun back. A new
        vacation while away replaces the current one.
        """
        if isinstance(auth, ReplyToken):
            raise WrongPassword("A vacation needs your password.")
        if days is not None and days < 1:
            raise BadRequest("A vacation is at least 1 day (or off).")
        allowance = self.config.clock.vacation_days_per_year
        with self._unit(message_id) as (s, now):
            player = self._authenticate(s, userid, auth)
            # One vacation change per player at a time (the allowance is read, then spent).
            s.exec(select(Player).where(Player.userid == player.userid).with_for_update()).one()
            rows = s.exec(
                select(Vacation)
                .where(Vacation.userid == player.userid)
                .order_by(col(Vacation.starts_at))
            ).all()
            current = next((v for v in rows if v.starts_at <= now < v.ends_at), None)
            if current is not None:
                current.ends_at = now
                s.add(current)
            elif days is None:
                raise BadRequest(f"{player.display} is not on vacation.")
            used = sum(_vacation_days(v) for v in rows if v.starts_at.year == now.year)
            left = max(allowance - used, 0)
            if days is None:
                text = (
                    f"Welcome back, {player.display}: your vacation is over and your clocks "
                    f"run again. Vacation days left in {now.year}: {left} of {allowance}."
                )
            else:
                if days > left:
                    more = f" Ask for at most {left}." if left else ""
                    raise NoVacationLeft(
                        f"You asked for {days} days of vacation, but only {left} of your "
                        f"{allowance} vacation days for {now.year} are left.{more}"
                    )
                until = now + days * DAY
                s.add(Vacation(userid=player.userid, starts_at=now, ends_at=until))
                text = (
                    f"{player.display} is on vacation until {fmt_time(until)}: your clocks stand "
                    f"still on every board until then, and your opponents' board mails say so. "
                    f"Vacation days left in {now.year}: {left - days} of {allowance}. "
                    f"Back earlier: vacation {player.display} PASSWORD off"
                )
            replies = self._note(player.email, "pbm - vacation", text)
            return self._send(s, now, replies, sender, message_id)

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
                clock_since=now,
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
        plan: MovePlan | None = None,
    ) -> list[Reply]:
        """Play ``move`` (``MOVE#N`` or ``expected_move=N``: only as move N).

        ``resign`` as the move resigns. Everyone on the board gets the new
        board mail. ``plan``: the same move worked out beforehand by
        ``plan_move``, written as it is if the board has not changed since.
        """
        text, expected_move = _split_guard(move, expected_move)
        if plan is not None and (plan.board, plan.userid, plan.text) == (
            board,
            userid.lower(),
            text,
        ):
            planned = self._apply_plan(plan, sender, message_id)
            if planned is not None:
                return planned
        if text.lower() == "resign":
            return self.resign(
                board, userid, auth, comment=comment, sender=sender, message_id=message_id
            )
        if not text:
            raise BadRequest("No move given.")
        with self._unit(message_id) as (s, now):
            game, player, seat = self._on_board(s, board, userid, auth)
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
            played = self._apply_move(
                s, game, player.userid, new_state, canonical, text, comment, now, message_id
            )
            bump_version(s, game)
            replies = self._board_mails(s, game)
            if game.status == "active":
                replies += self._answer_from_queue(s, game, played, now)
            return self._send(s, now, replies, sender, message_id)

    def read_ahead(self, session: Session, boards: Iterable[int]) -> None:
        """On a snapshot, read in a few statements what planning moves on ``boards`` needs.

        The inbox worker plans a batch of moves on one snapshot; one read
        for all its boards costs less than the same reads board by board.
        """
        if not session.info.get(SNAPSHOT):
            raise ValueError("read_ahead is for a snapshot (Database.read) only")
        wanted = sorted(set(boards))
        session.info.pop(_READ_AHEAD, None)
        if not wanted:
            return
        now = self.clock()
        at = in_values("b", wanted)
        games = list(session.scalars(_ahead("games", len(wanted)), at))
        queued = {board for (board,) in _rows(session, _ahead("queued", len(wanted)), **at)}
        moves: dict[int, list[Any]] = {}
        for board, *line in _rows(session, _ahead("moves", len(wanted)), **at):
            moves.setdefault(board, []).append(tuple(line))
        subscriptions: dict[int, list[Follower]] = {}
        for board, userid, email in _rows(session, _ahead("subscriptions", len(wanted)), **at):
            subscriptions.setdefault(board, []).append(Follower(userid, email))
        asked = {u for g in games for u in (g.white, g.black)}
        asked |= {f.userid for fs in subscriptions.values() for f in fs if f.userid}
        people = self._people(session, asked)
        after = min([now, *(g.clock_since or g.last_move_at or g.created_at for g in games)])
        whose = in_values("b", sorted(asked))
        vacations = [
            Away(*row)
            for row in _rows(session, _ahead("vacations", len(whose)), after=after, **whose)
        ]
        session.info[_READ_AHEAD] = ReadAhead(
            boards=frozenset(g.board for g in games if g.board is not None),
            games={g.board: g for g in games if g.board is not None},
            queued=queued,
            moves=moves,
            subscriptions=subscriptions,
            people=people,
            asked=asked,
            vacations=vacations,
            vacations_after=after,
        )

    def plan_move(
        self,
        board: int,
        userid: str,
        auth: Auth,
        move: str,
        *,
        comment: str = "",
        expected_move: int | None = None,
    ) -> MovePlan | None:
        """Work out ``move`` on a snapshot, taking no write lock; None if it cannot be.

        Only an ordinary move is planned: one that ends the game, meets a
        queued move, or is refused for any reason gets None, and ``move``
        then does (or refuses) it the usual way, under the lock. So a plan
        never decides anything a player is told.
        """
        text, expected_move = _split_guard(move, expected_move)
        if not text or text.lower() == "resign":
            return None
        now = self.clock()
        try:
            with self.db.read() as s:
                ahead = _read_ahead(s)
                game = ahead.games.pop(board, None) if ahead is not None else None
                if game is None:
                    game = s.scalars(_GAME, {"board": board}).first()
                if game is None or game.status != "active" or game.board is None:
                    return None
                uid = userid.lower()
                if not self._may_plan_for(s, uid, auth, board):
                    return None
                seat = game.seat_of(uid)
                if seat is None or (expected_move is not None and expected_move != game.ply + 1):
                    return None
                state = self._rules(game.game).load(game.position)
                if state.to_move != seat or self._queued_on(s, board):
                    return None
                new_state, canonical = state.play(text)
                if new_state.outcome is not None:
                    return None
                # The board as the move leaves it: taken out of the session, so the
                # change is seen here only and can never be written.
                s.expunge(game)
                position_before = game.position
                _moved(game, new_state, now)
                played = MoveLine(new_state.ply, uid, canonical, comment, now)
                replies = self._board_mails(s, game, played=(played,), now=now)
                return MovePlan(
                    board=board,
                    userid=uid,
                    text=text,
                    version=game.version,
                    ply=new_state.ply,
                    canonical=canonical,
                    comment=comment,
                    position_before=position_before,
                    position=game.position,
                    planned_at=now,
                    replies=tuple(replies),
                )
        except (ServiceError, IllegalMove):
            return None

    def _apply_plan(
        self, plan: MovePlan, sender: str | None, message_id: str | None
    ) -> list[Reply] | None:
        """Write a planned move if its board is still as planned; None if it is not.

        Plain SQL statements rather than ORM objects: this is the part of a
        move done while the write lock is held.
        """
        try:
            with self._unit(message_id) as (s, now):
                # Queuing moves bumps the version too: a plan made with no queue
                # on its board finds the version changed if one was queued since.
                db = s.connection()
                changed = db.execute(
                    _PLAYED,
                    {
                        "at_board": plan.board,
                        "at_version": plan.version,
                        "position": plan.position,
                        "ply": plan.ply,
                        "last_move_at": plan.planned_at,
                        "clock_since": plan.planned_at,
                        "version": plan.version + 1,
                    },
                )
                if changed.rowcount != 1:
                    raise _PlanOutdated
                loaded = s.identity_map.get(s.identity_key(Game, plan.board))
                if loaded is not None:
                    s.expire(loaded)  # read again when next used in this session
                db.execute(
                    _MOVE,
                    {
                        "board": plan.board,
                        "ply": plan.ply,
                        "userid": plan.userid,
                        "notation": plan.canonical,
                        "text": plan.text,
                        "comment": plan.comment,
                        "created_at": plan.planned_at,
                        "message_id": message_id,
                        "queued": False,
                        "position_before": plan.position_before,
                    },
                )
                return self._send(s, now, list(plan.replies), sender, message_id)
        except _PlanOutdated:
            return None

    def _may_plan_for(self, s: Session, userid: str, auth: Auth, board: int) -> bool:
        """Whether ``auth`` lets ``userid`` move on ``board``: ``_authenticate``'s checks.

        A reply token is checked without reading the player (the board names
        its players); a password against the stored hash. The admin is never
        planned for. False means only: no plan, ``move`` decides and explains.
        """
        if isinstance(auth, ReplyToken):
            return self._token_fits(auth.token, board, userid)
        if isinstance(auth, Password):
            found = _rows(s, _PASSWORD_HASH, userid=userid)
            return bool(found) and verify_password(auth.password, found[0][0])
        return False

    @staticmethod
    def _queued_on(s: Session, board: int) -> bool:
        """Whether anyone has a move queued on ``board``."""
        ahead = _read_ahead(s)
        if ahead is not None and board in ahead.boards:
            return board in ahead.queued
        return bool(_rows(s, _QUEUED, board=board))

    def _apply_move(
        self,
        s: Session,
        game: Game,
        userid: str,
        new_state: GameState,
        canonical: str,
        text: str,
        comment: str,
        now: datetime,
        message_id: str | None,
        queued: bool = False,
    ) -> Move:
        """Record a checked move on the (locked) game; the opponent's clock starts."""
        row = Move(
            board=game.board or 0,
            ply=new_state.ply,
            userid=userid,
            notation=canonical,
            text=text,
            comment=comment,
            created_at=now,
            message_id=message_id,
            queued=queued,
            position_before=game.position,
        )
        s.add(row)
        _moved(game, new_state, now)
        outcome = new_state.outcome
        if outcome is not None:
            self._finish(s, game, "1-0" if outcome.winner == 0 else "0-1", outcome.termination, now)
        s.add(game)
        return row

    def _answer_from_queue(
        self, s: Session, game: Game, theirs: Move, now: datetime
    ) -> list[Reply]:
        """Play the queued reply of the player now to move, if one fits ``theirs``.

        The first queued move whose ``if`` is the move just played (both in
        canonical notation, the ``if`` read in the position it was played
        from) or that has no ``if``, and that is legal, is played; the
        whole queue is then gone and its owner is told what became of each.
        """
        rules = self._rules(game.game)
        state = rules.load(game.position)
        owner_id = game.player_at(state.to_move)
        rows = s.exec(
            select(QueuedMove)
            .where(QueuedMove.board == game.board, QueuedMove.userid == owner_id)
            .order_by(col(QueuedMove.id))
        ).all()
        if not rows:
            return []
        before = rules.load(theirs.position_before)
        them = self._name(s, theirs.userid)
        chosen: tuple[QueuedMove, GameState, str] | None = None
        notes: list[str] = []
        for row in rows:
            label = row.move_text + (f" if {row.if_move}" if row.if_move else "")
            if chosen is not None:
                notes.append(f"{label}: dropped, a move before it in your queue was played.")
                continue
            if row.if_move is not None:
                try:
                    condition: str | None = before.play(row.if_move)[1]
                except IllegalMove:
                    condition = None
                if condition != theirs.notation:
                    notes.append(f"{label}: dropped, {them} played {theirs.notation}.")
                    continue
            try:
                new_state, canonical = state.play(row.move_text)
            except IllegalMove as exc:
                notes.append(
                    f"{label}: dropped, it is not legal after {them}'s {theirs.notation}: {exc}"
                )
                continue
            chosen = (row, new_state, canonical)
        for row in rows:
            s.delete(row)
        owner = self._player(s, owner_id)
        replies: list[Reply] = []
        if chosen is not None:
            row, new_state, canonical = chosen
            self._apply_move(
                s, game, owner_id, new_state, canonical, row.move_text, "", now, None, queued=True
            )
            bump_version(s, game)
            replies += self._board_mails(s, game)
            head = (
                f"{them} played {theirs.notation}; your queued move {canonical} was played "
                f"at once as move {new_state.ply}."
            )
        else:
            head = (
                f"{them} played {theirs.notation}; none of your queued moves could be "
                "played, so it is your turn."
            )
        lines = wrap(head)
        if notes:
            lines += ["", "The rest of your queue:" if chosen else "Your queue:"]
            for note in notes:
                lines += wrap(note, indent="    ")
        replies.append(
            Reply(
                to=owner.email,
                subject=f"{self._title(game)} - queued moves",
                body="\n".join(lines) + "\n",
                board=game.board,
                reply_as=owner_id if game.status == "active" else None,
            )
        )
        return replies

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
            game, player, seat = self._on_board(s, board, userid, auth)
            self._finish(s, game, "0-1" if seat == 0 else "1-0", "resign", now)
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
            game, player, seat = self._on_board(s, board, userid, auth)
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
            game.clock_since = now
            game.last_nag_at = None
            dropped = self._drop_queues(s, game)
            s.add(game)
            bump_version(s, game)
            headline = (
                f"{player.display} agreed: move {last.ply} ({last.notation}) by "
                f"{requester} was taken back."
            )
            if dropped:
                headline += " The queued moves on this board were dropped."
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
        game, player, _ = self._on_board(s, board, userid, auth)
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
            game, player, seat = self._on_board(s, board, userid, auth)
            opp = self._player(s, game.player_at(1 - seat))
            if game.ply == 0 or game.cancel_request_by == opp.userid or isinstance(auth, Admin):
                game.status = "cancelled"
                game.ended_at = now
                game.cancel_request_by = None
                game.undo_request_by = None
                self._drop_queues(s, game)
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

    def queue(
        self,
        board: int,
        userid: str,
        auth: Auth,
        move: str | None,
        if_move: str | None = None,
        *,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """Queue ``move`` as the reply to the opponent's next move (``if_move``: only to that).

        ``move`` None clears the player's queue on the board. Queuing is for
        while the opponent is to move. With ``if_move`` both moves are
        checked now; without, only that ``move`` is written as a move.
        """
        with self._unit(message_id) as (s, now):
            game, player, seat = self._on_board(s, board, userid, auth)
            mine = s.exec(
                select(QueuedMove)
                .where(QueuedMove.board == board, QueuedMove.userid == player.userid)
                .order_by(col(QueuedMove.id))
            ).all()
            title = f"{self._title(game)} - queued moves"
            if move is None:
                if not mine:
                    raise BadRequest(f"You have no queued moves on board {board}.")
                for row in mine:
                    s.delete(row)
                bump_version(s, game)  # a planned move must see that the queue changed
                text = f"Your {len(mine)} queued move(s) on board {board} are forgotten."
                return self._send(
                    s, now, self._note(player.email, title, text, board), sender, message_id
                )
            rules = self._rules(game.game)
            state = rules.load(game.position)
            if state.to_move == seat:
                raise NotYourTurn(
                    f"It is your turn on board {board}: send the move itself. Queue a move "
                    "while you wait for your opponent."
                )
            if move.strip().lower() == "resign":
                raise BadRequest("Only moves can be queued, not resign.")
            if len(mine) >= MAX_QUEUED:
                raise BadRequest(
                    f"You have {len(mine)} queued moves on board {board} already; that is the most."
                )
            them = self._name(s, game.player_at(1 - seat))
            self._check_queued(state, move, if_move, them)
            s.add(
                QueuedMove(
                    board=board,
                    userid=player.userid,
                    move_text=move,
                    if_move=if_move,
                    created_at=now,
                )
            )
            bump_version(s, game)  # a planned move must see that the queue changed
            queue = [
                *mine,
                QueuedMove(
                    board=board,
                    userid=player.userid,
                    move_text=move,
                    if_move=if_move,
                    created_at=now,
                ),
            ]
            lines = wrap(
                f"Queued on board {board}. When {them} moves, the first of these that fits "
                "and is legal is played at once; the rest are dropped:"
            )
            for i, row in enumerate(queue, start=1):
                cond = f"   if {them} plays {row.if_move}" if row.if_move else ""
                lines.append(f"  {i}. {row.move_text}{cond}")
            lines += [
                "",
                *wrap(f"Forget them: {game.game} queue {board} {player.display} PASSWORD clear"),
            ]
            reply = Reply(
                to=player.email,
                subject=title,
                body="\n".join(lines) + "\n",
                board=board,
                reply_as=player.userid,
            )
            return self._send(s, now, [reply], sender, message_id)

    @staticmethod
    def _check_queued(state: GameState, move: str, if_move: str | None, them: str) -> None:
        """Refuse a queued move that can be seen to be wrong already."""
        if if_move is not None:
            try:
                after, canonical = state.play(if_move)
            except IllegalMove as exc:
                raise BadRequest(f"{if_move} is not a move {them} can make now: {exc}") from None
            try:
                after.play(move)
            except IllegalMove as exc:
                raise BadRequest(
                    f"After {them}'s {canonical}, {move} is not legal: {exc}"
                ) from None
            return
        legal = state.legal_moves()
        if legal:
            try:
                state.play(legal[0])[0].play(move)
            except BadNotation as exc:
                raise BadRequest(f"{move} is not a move: {exc}") from None
            except IllegalMove:
                pass  # it may well be legal after another reply

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
                notation = m.notation + (" (queued)" if m.queued else "")
                line = f"{m.ply:>4}. {m.userid:<20} {notation:<24} {m.at:%Y-%m-%d %H:%M}"
                if len(line) > 78:  # a long turn: the time goes on its own line
                    line = f"{m.ply:>4}. {m.userid:<20} {notation}\n        {m.at:%Y-%m-%d %H:%M}"
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

    def ratings(
        self,
        game: str,
        *,
        variant: str | None = None,
        sender: str | None = None,
        message_id: str | None = None,
    ) -> list[Reply]:
        """The rating list of ``game`` (every variant, or one), to ``sender``."""
        rules = self._rules(game)
        with self._unit(message_id) as (s, now):
            rows = self._standings(s, rules.name, variant)
            lines = [
                f"{rules.title} ratings (Elo; ? = provisional, fewer than "
                f"{elo.PROVISIONAL_GAMES} rated games)"
            ]
            if not rows:
                lines += ["", "No rated games yet."]
            for v in dict.fromkeys(r.variant for r in rows):
                lines += ["", f"Variant {v}:"]
                for r in rows:
                    if r.variant == v:
                        mark = " ?" if r.provisional else ""
                        word = "game" if r.games == 1 else "games"
                        row = f"{r.rank:>4}. {r.player:<20} {r.rating:>5}  {r.games:>4} {word}"
                        lines.append(f"  {row}{mark}")
            replies = [
                Reply(
                    to=sender or "",
                    subject=f"{rules.title} - ratings",
                    body="\n".join(lines) + "\n",
                )
            ]
            return self._send(s, now, replies, sender, message_id)

    def standings(self, game: str | None = None, variant: str | None = None) -> list[Standing]:
        """Rating lists (for the CLI): by game and variant, best first."""
        with self.db.transaction() as s:
            name = self._rules(game).name if game is not None else None
            return self._standings(s, name, variant)

    def _standings(self, s: Session, game: str | None, variant: str | None) -> list[Standing]:
        stmt = select(Rating)
        if game is not None:
            stmt = stmt.where(Rating.game == game)
        if variant is not None:
            stmt = stmt.where(Rating.variant == variant.lower())
        rows = s.exec(stmt).all()
        names = self._displays(s, [r.userid for r in rows])
        rows = sorted(rows, key=lambda r: (r.game, r.variant, -r.rating, -r.games_played, r.userid))
        out: list[Standing] = []
        rank = 0
        for i, r in enumerate(rows):
            if i == 0 or (r.game, r.variant) != (rows[i - 1].game, rows[i - 1].variant):
                rank = 0
            rank += 1
            out.append(
                Standing(
                    game=r.game,
                    variant=r.variant,
                    rank=rank,
                    player=names[r.userid],
                    rating=elo.round_half_away(r.rating),
                    games=r.games_played,
                    provisional=r.games_played < elo.PROVISIONAL_GAMES,
                )
            )
        return out

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


def _vacation_days(v: Vacation) -> int:
    """The days a vacation counts: every day begun (a vacation ended at once: 0)."""
    return -(-(v.ends_at - v.starts_at) // DAY)


def _check_password(password: str) -> None:
    if not password or any(c.isspace() for c in password) or len(password) > 100:
        raise BadRequest("A password is one word: 1 to 100 characters, no spaces.")


def _check_email(email: str) -> None:
    if not EMAIL_RE.match(email):
        raise BadRequest(f"{email!r} is not a mail address.")


def _split_guard(move: str, expected_move: int | None) -> tuple[str, int | None]:
    """``MOVE#N`` -> (MOVE, N); an explicit ``expected_move`` wins over the guard."""
    text = move.strip()
    guard = _GUARD_RE.match(text)
    if guard is not None:
        text = guard.group("move")
        if expected_move is None:
            expected_move = int(guard.group("n"))
    return text, expected_move


def _moved(game: Game, new_state: GameState, now: datetime) -> None:
    """A move's changes to its board row; the opponent's clock starts at ``now``."""
    game.position = new_state.dump()
    game.ply = new_state.ply
    game.last_move_at = now
    game.clock_since = now
    game.last_nag_at = None
    game.undo_request_by = None
    game.cancel_request_by = None


def _no_such_player(userid: str) -> UnknownPlayer:
    return UnknownPlayer(f"There is no player {userid!r}; sign up with: signup UID PW")
