"""What use cases decide on: boards and accounts as values, loaded from one session.

A ``Board`` is everything about one board that a decision or a board mail
needs: its row, its moves, its followers, the queued moves, the players'
accounts, vacations and ratings, and the site's clock pauses. ``load_boards``
reads any number of boards in the same few statements (one board is N = 1).

A ``World`` is the read side of one session, a snapshot or the write
transaction: it loads boards and accounts on first use (or all at once,
``preload``), keeps them, and remembers which it handed out (``reads``), so
that the unit of work can tell whether a decision was made on data that has
changed since.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlmodel import Session

from pbm import games
from pbm.config import Config
from pbm.games import Game, GameState, move_number
from pbm.store.tables import (
    ClockPause,
    Move,
    PasswordFailure,
    Player,
    QueuedMove,
    Rating,
    Subscription,
    Vacation,
    VacationGrant,
    table,
)
from pbm.store.tables import (
    Game as GameRow,
)
from pbm.timecontrol import REMINDERS
from pbm.usecases.refusals import BadRequest, UnknownBoard, UnknownPlayer

GAMES = table(GameRow)
MOVES = table(Move)
PLAYERS = table(Player)
FOLLOWERS = table(Subscription)
QUEUE = table(QueuedMove)
RATINGS = table(Rating)
VACATIONS = table(Vacation)
FAILURES = table(PasswordFailure)
PAUSES = table(ClockPause)
GRANTS = table(VacationGrant)

# The end of a stop with no end yet (a bounce: until the player writes again).
OPEN_END = datetime(9999, 1, 1, tzinfo=UTC)

# What a decision read or a change wrote: ("board", 12), ("account", "alice").
Key = tuple[str, object]


def board_key(number: int) -> Key:
    return ("board", number)


def account_key(userid: str) -> Key:
    return ("account", userid.lower())


def rules_of(name: str) -> Game:
    """The game called ``name``; a refusal that lists the games if there is none."""
    try:
        return games.get(name)
    except KeyError:
        raise BadRequest(
            f"There is no game called {name!r}; games here: {', '.join(games.names())}."
        ) from None


@dataclass(frozen=True, slots=True)
class Account:
    """A player account; ``userid`` is the lower-case key, ``display`` as signed up.

    ``status``: ``pending`` until the owner of the address confirms the signup,
    then ``active``. ``reset_nonce`` makes a password reset address usable
    once. ``lockout_told_at``/``lockout_answered_at``: when the owner was told
    of wrong passwords, when a refusal of the locked account was answered.
    """

    userid: str
    display: str
    email: str
    full_name: str
    password_hash: str
    created_at: datetime
    status: str = "active"
    reset_nonce: str | None = None
    lockout_told_at: datetime | None = None
    lockout_answered_at: datetime | None = None
    format: str = "html"  # html: board mails with a picture | text: plain text only
    bouncing: bool = False  # mail to his address bounces (``pbm.usecases.bounces``)

    @property
    def active(self) -> bool:
        return self.status == "active"


@dataclass(frozen=True, slots=True)
class PlayedMove:
    """One played turn; ``position_before`` lets an accepted undo restore the board."""

    ply: int
    userid: str
    notation: str  # canonical
    text: str  # as the player wrote it
    comment: str
    created_at: datetime
    position_before: str
    queued: bool = False  # played from the player's queue
    message_id: str | None = None
    clock_before: str | None = None  # the board's clock before it (``clocks.clock_json``)


@dataclass(frozen=True, slots=True)
class Follower:
    """Someone who gets every board mail without playing: a player or a bare address."""

    userid: str | None
    email: str | None
    created_at: datetime
    id: int | None = None  # None until saved


@dataclass(frozen=True, slots=True)
class Queued:
    """A move queued for its owner's next turn, maybe only if the opponent plays ``if_move``."""

    userid: str
    move_text: str
    if_move: str | None
    created_at: datetime
    id: int | None = None  # None until saved


@dataclass(frozen=True, slots=True)
class Away:
    """A stop of a player's clocks, from ``starts_at`` to ``ends_at``.

    ``kind``: ``vacation`` (asked for), or ``bounce`` (his address bounced:
    open, ``ends_at`` far ahead, until he writes again).
    """

    userid: str
    starts_at: datetime
    ends_at: datetime
    id: int | None = None
    kind: str = "vacation"


@dataclass(frozen=True, slots=True)
class Pause:
    """A site-wide stop of every clock; ``ended_at`` None while it lasts."""

    started_at: datetime
    ended_at: datetime | None
    id: int | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's rating in one game and variant (``games_played`` 0: never rated)."""

    userid: str
    rating: float
    games_played: int


@dataclass(frozen=True)
class Board:
    """One board and everything around it, as values.

    The fields up to ``challenger`` are the ``games`` row (``number`` is its
    ``board`` column, the others have their column's name); ``version`` is
    bumped by every change (the compare-and-set of ``pbm.usecases.changes``)
    and is never set by a decision.
    """

    number: int
    game: str
    variant: str
    options: Mapping[str, str]
    white: str
    black: str
    status: str  # waiting (a challenge) | active | finished | cancelled
    result: str | None
    termination: str | None
    position: str
    ply: int
    version: int
    nag_days: int
    forfeit_days: int
    created_at: datetime
    last_move_at: datetime | None
    last_nag_at: datetime | None
    archived_at: datetime | None
    ended_at: datetime | None
    undo_request_by: str | None
    cancel_request_by: str | None
    clock_since: datetime | None
    white_rating_before: int | None
    white_rating_after: int | None
    black_rating_before: int | None
    black_rating_after: int | None
    draw_offer_by: str | None
    challenger: str | None
    time_control: str
    clock: str | None
    timer_at: datetime | None  # written by ``BoardChange`` from the clock, never decided
    computer_level: int | None  # 1-5 on a board the computer plays (``computer``)
    # Loaded with it:
    moves: tuple[PlayedMove, ...] = ()
    followers: tuple[Follower, ...] = ()
    queue: tuple[Queued, ...] = ()
    people: Mapping[str, Account] = field(default_factory=dict)  # players, movers, followers
    vacations: tuple[Away, ...] = ()  # of the two players
    pauses: tuple[Pause, ...] = ()
    standings: Mapping[str, Standing] = field(default_factory=dict)  # the players', this variant
    reminders: tuple[timedelta, ...] = REMINDERS  # a time bank's, the site's (``clock``)

    @property
    def rules(self) -> Game:
        return rules_of(self.game)

    @property
    def state(self) -> GameState:
        return self.rules.load(self.position)

    @property
    def players(self) -> tuple[str, str]:
        """The userids by seat."""
        return (self.white, self.black)

    def seat_of(self, userid: str) -> int | None:
        """0 or 1 for a player of this board, None for anyone else."""
        if userid == self.white:
            return 0
        if userid == self.black:
            return 1
        return None

    def player_at(self, seat: int) -> str:
        return self.players[seat]

    @property
    def challenged(self) -> str | None:
        """While the board waits: the player who has yet to accept the challenge."""
        if self.status != "waiting" or self.challenger is None:
            return None
        return self.black if self.challenger == self.white else self.white

    def name(self, userid: str) -> str:
        """How a player is named in mail: as he signed up."""
        account = self.people.get(userid)
        return account.display if account is not None else userid

    def move_number(self, ply: int) -> int:
        """The number players give the ``ply``-th turn (chess counts pairs of them)."""
        return move_number(self.rules, ply)

    def title(self) -> str:
        """The game's title and the board's number: ``<Title> Board 12``."""
        return f"{self.rules.title} Board {self.number}"

    def stops(self, userid: str, now: datetime) -> list[tuple[datetime, datetime]]:
        """The spans ``userid``'s clock stood still on this board up to ``now``: his
        vacations and bounces (one still open ends at ``now``) and the site's pauses."""
        stops = [
            (v.starts_at, now if v.ends_at >= OPEN_END else v.ends_at)
            for v in self.vacations
            if v.userid == userid
        ]
        stops += [(p.started_at, p.ended_at or now) for p in self.pauses]
        return stops

    @property
    def clock_start(self) -> datetime:
        """When the player to move got the move: his clock runs from here."""
        return self.clock_since or self.last_move_at or self.created_at


# A board by its number as a reply shows it (``unit``: as the decision left it); None: none.
BoardOf = Callable[[int], "Board | None"]

# The columns of a board's row, as ``Board`` fields (the row's key is ``number``).
ROW_FIELDS: tuple[str, ...] = tuple("number" if c.name == "board" else c.name for c in GAMES.c)


def board_of_row(row: Mapping[Any, Any], **around: Any) -> Board:
    """A ``Board`` from its ``games`` row and what is loaded around it (moves, people...)."""
    values = {f: row["board" if f == "number" else f] for f in ROW_FIELDS}
    return Board(**values, **around)


# The loaders' statements are built once, their values bound at each read: building
# and keying a statement afresh cost more than its round trip (a web page reads six).
# ``_ANY``: the values of an IN, sorted (``_values``).
_ANY: sa.BindParameter[Any] = sa.bindparam("any", expanding=True)


def _values(values: Iterable[object]) -> dict[str, list[object]]:
    # Sorted: rows locked in one order everywhere.
    return {"any": sorted(set(values), key=str)}


def _accounts(open_stop: sa.ColumnElement[bool], started: sa.ColumnElement[bool]) -> sa.Select[Any]:
    bouncing = sa.exists().where(
        VACATIONS.c.userid == PLAYERS.c.userid, VACATIONS.c.kind == "bounce", open_stop, started
    )
    return sa.select(
        PLAYERS.c.userid,
        PLAYERS.c.display,
        PLAYERS.c.email,
        PLAYERS.c.full_name,
        PLAYERS.c.password_hash,
        PLAYERS.c.created_at,
        PLAYERS.c.status,
        PLAYERS.c.reset_nonce,
        PLAYERS.c.lockout_told_at,
        PLAYERS.c.lockout_answered_at,
        PLAYERS.c.format,
        bouncing.label("bouncing"),
    ).where(PLAYERS.c.userid.in_(_ANY))


_NOW: sa.BindParameter[datetime] = sa.bindparam("now")
_ACCOUNTS_AT = _accounts(VACATIONS.c.ends_at > _NOW, VACATIONS.c.starts_at <= _NOW)
_ACCOUNTS_OPEN = _accounts(VACATIONS.c.ends_at == OPEN_END, sa.true())


def load_accounts(
    session: Session, userids: Iterable[str], now: datetime | None = None
) -> dict[str, Account]:
    """The accounts of ``userids`` (lower-case keys) that exist; ``bouncing`` as of
    ``now`` (None: a bounce's stop that has no end)."""
    wanted = {u.lower() for u in userids}
    if not wanted:
        return {}
    if now is None:
        rows = session.execute(_ACCOUNTS_OPEN, _values(wanted))
    else:
        rows = session.execute(_ACCOUNTS_AT, {**_values(wanted), "now": now})
    return {row.userid: Account(*row) for row in rows}


_PAUSES = sa.select(PAUSES.c.started_at, PAUSES.c.ended_at, PAUSES.c.id).order_by(PAUSES.c.id)


def load_pauses(session: Session) -> tuple[Pause, ...]:
    """Every site-wide clock pause (a handful over a site's life)."""
    return tuple(Pause(*row) for row in session.execute(_PAUSES))


_VACATIONS = (
    sa.select(
        VACATIONS.c.userid,
        VACATIONS.c.starts_at,
        VACATIONS.c.ends_at,
        VACATIONS.c.id,
        VACATIONS.c.kind,
    )
    .where(VACATIONS.c.userid.in_(_ANY))
    .order_by(VACATIONS.c.id)
)
_VACATIONS_ENDING = _VACATIONS.where(VACATIONS.c.ends_at > sa.bindparam("after"))


def load_vacations(
    session: Session, userids: Iterable[str], ending_after: datetime | None = None
) -> tuple[Away, ...]:
    """The vacations of ``userids`` (those ending after ``ending_after``, if given)."""
    wanted = set(userids)
    if not wanted:
        return ()
    if ending_after is None:
        rows = session.execute(_VACATIONS, _values(wanted))
    else:
        rows = session.execute(_VACATIONS_ENDING, {**_values(wanted), "after": ending_after})
    return tuple(Away(*row) for row in rows)


T = TypeVar("T")


def _by_board(
    session: Session, boards: Sequence[int], make: Callable[..., T], stmt: sa.Select[Any]
) -> dict[int, list[T]]:
    """The rows of ``boards`` by ``stmt`` (``_of_boards``), each made by ``make`` of all
    but its board; an empty list for a board with none."""
    out: dict[int, list[T]] = {n: [] for n in boards}
    for row in session.execute(stmt, _values(boards)):
        out[row[0]].append(make(*row[1:]))
    return out


def _of_boards(
    board: sa.ColumnElement[Any],
    columns: tuple[sa.ColumnElement[Any], ...],
    order: sa.ColumnElement[Any],
) -> sa.Select[Any]:
    """``columns`` of the rows of some boards (``board`` their board's column), by board
    in ``order``."""
    return sa.select(board, *columns).where(board.in_(_ANY)).order_by(board, order)


_MOVES = _of_boards(
    MOVES.c.board,
    (
        MOVES.c.ply,
        MOVES.c.userid,
        MOVES.c.notation,
        MOVES.c.text,
        MOVES.c.comment,
        MOVES.c.created_at,
        MOVES.c.position_before,
        MOVES.c.queued,
        MOVES.c.message_id,
        MOVES.c.clock_before,
    ),
    MOVES.c.ply,
)
_FOLLOWERS = _of_boards(
    FOLLOWERS.c.board,
    (FOLLOWERS.c.userid, FOLLOWERS.c.email, FOLLOWERS.c.created_at, FOLLOWERS.c.id),
    FOLLOWERS.c.id,
)
_QUEUED = _of_boards(
    QUEUE.c.board,
    (QUEUE.c.userid, QUEUE.c.move_text, QUEUE.c.if_move, QUEUE.c.created_at, QUEUE.c.id),
    QUEUE.c.id,
)
_GAMES = sa.select(GAMES).where(GAMES.c.board.in_(_ANY))
_GAMES_LOCKED = _GAMES.with_for_update()
_STANDINGS = sa.select(
    RATINGS.c.game,
    RATINGS.c.variant,
    RATINGS.c.userid,
    RATINGS.c.rating,
    RATINGS.c.games_played,
).where(RATINGS.c.userid.in_(_ANY))


def load_boards(
    session: Session,
    numbers: Iterable[int],
    *,
    lock: bool = False,
    now: datetime | None = None,
    reminders: tuple[timedelta, ...] = REMINDERS,
    public: bool = False,
    rows: Mapping[int, Mapping[Any, Any]] | None = None,
) -> dict[int, Board]:
    """The boards of ``numbers`` that exist, with all that belongs to them (``reminders``:
    the site's, for their clocks).

    The same statements for one board or many. ``lock``: in a write
    transaction on PostgreSQL, the rows stay locked until it ends (SQLite
    has locked the whole database already). ``public``: what anyone may see
    (the web site), without the followers and the queued moves, which are
    never read for it. ``rows``: their ``games`` rows, read already.
    """
    wanted = set(numbers)
    if not wanted:
        return {}
    if rows is None:
        stmt = _GAMES_LOCKED if lock else _GAMES
        rows = {int(row.board): row._mapping for row in session.execute(stmt, _values(wanted))}
    else:
        rows = {n: row for n, row in rows.items() if n in wanted}
    if not rows:
        return {}
    found = sorted(rows)
    moves = _by_board(session, found, PlayedMove, _MOVES)
    followers: dict[int, list[Follower]] = {n: [] for n in found}
    queues: dict[int, list[Queued]] = {n: [] for n in found}
    if not public:
        followers = _by_board(session, found, Follower, _FOLLOWERS)
        queues = _by_board(session, found, Queued, _QUEUED)
    players = {u for row in rows.values() for u in (row["white"], row["black"])}

    def named(number: int) -> set[str]:
        """Whom a board names: its players, its movers and its followers."""
        row = rows[number]
        found = {row["white"], row["black"], *(m.userid for m in moves[number])}
        return found | {f.userid for f in followers[number] if f.userid}

    people = load_accounts(session, set().union(*(named(n) for n in found)), now)
    starts = {n: r["clock_since"] or r["last_move_at"] or r["created_at"] for n, r in rows.items()}
    vacations = load_vacations(session, players, ending_after=min(starts.values()))
    pauses = load_pauses(session)
    standings: dict[tuple[str, str, str], Standing] = {}
    for row in session.execute(_STANDINGS, _values(players)):
        standings[(row.game, row.variant, row.userid)] = Standing(*row[2:])
    out: dict[int, Board] = {}
    for number in found:
        game = rows[number]
        mine = (game["white"], game["black"])
        out[number] = board_of_row(
            game,
            moves=tuple(moves[number]),
            followers=tuple(followers[number]),
            queue=tuple(queues[number]),
            people={u: people[u] for u in named(number) if u in people},
            vacations=tuple(
                v for v in vacations if v.userid in mine and v.ends_at > starts[number]
            ),
            pauses=pauses,
            reminders=reminders,
            standings={
                u: s
                for (g, v, u), s in standings.items()
                if g == game["game"] and v == game["variant"] and u in mine
            },
        )
    return out


class World:
    """The boards and accounts of one session, loaded on first use and kept.

    ``config`` and ``now`` are the site's settings and the time of the decision.

    ``reads`` collects the keys of what was handed out, so a decision can be
    checked against what has been written since (``pbm.usecases.unit``).
    """

    def __init__(
        self, session: Session, config: Config, now: datetime, *, lock: bool = False
    ) -> None:
        self.session = session
        self.config = config
        self.now = now
        self.lock = lock
        self.reads: set[Key] = set()
        self._boards: dict[int, Board | None] = {}
        self._accounts: dict[str, Account | None] = {}

    @contextmanager
    def reading(self) -> Iterator[set[Key]]:
        """Collect, in the set yielded, the keys of what is read inside."""
        outer, self.reads = self.reads, set()
        try:
            yield self.reads
        finally:
            self.reads = outer | self.reads

    def preload(self, boards: Iterable[int] = (), accounts: Iterable[str] = ()) -> None:
        """Load these boards and accounts now, all at once (what a batch will ask for)."""
        numbers = [n for n in set(boards) if n not in self._boards]
        loaded = load_boards(
            self.session,
            numbers,
            lock=self.lock,
            now=self.now,
            reminders=self.config.clock.reminders,
        )
        for n in numbers:
            self._boards[n] = loaded.get(n)
        for board in loaded.values():
            for uid, account in board.people.items():
                self._accounts.setdefault(uid, account)
        uids = [u.lower() for u in set(accounts) if u.lower() not in self._accounts]
        found = load_accounts(self.session, uids, self.now)
        for uid in uids:
            self._accounts[uid] = found.get(uid)

    def forget(self, keys: Iterable[Key]) -> None:
        """Drop what was loaded for these keys: it has been written since."""
        for kind, key in keys:
            if kind == "board":
                self._boards.pop(key, None)  # type: ignore[call-overload]
            elif kind == "account":
                self._accounts.pop(str(key), None)
                # Boards carry their people's accounts: load them afresh too.
                for number, board in list(self._boards.items()):
                    if board is not None and str(key) in board.people:
                        del self._boards[number]

    def board(self, number: int) -> Board:
        """The board ``number``; ``UnknownBoard`` if there is none."""
        self.reads.add(board_key(number))
        if number not in self._boards:
            self.preload(boards=[number])
        found = self._boards[number]
        if found is None:
            raise UnknownBoard(f"There is no board {number}.")
        return found

    def find_account(self, userid: str) -> Account | None:
        uid = userid.lower()
        self.reads.add(account_key(uid))
        if uid not in self._accounts:
            self.preload(accounts=[uid])
        return self._accounts[uid]

    def account(self, userid: str) -> Account:
        """The account ``userid`` (any case); ``UnknownPlayer`` if there is none."""
        found = self.find_account(userid)
        if found is None:
            raise UnknownPlayer(f"There is no player {userid!r}; sign up with: signup UID PW")
        return found

    def accounts(self, userids: Sequence[str]) -> dict[str, Account]:
        """The accounts of these userids that exist, by lower-case userid."""
        self.preload(accounts=userids)
        out = {}
        for uid in userids:
            found = self.find_account(uid)
            if found is not None:
                out[found.userid] = found
        return out

    def vacations(self, userid: str) -> tuple[Away, ...]:
        """Every vacation of ``userid``, oldest first."""
        self.reads.add(account_key(userid))
        found = load_vacations(self.session, [userid.lower()])
        return tuple(sorted(found, key=lambda v: v.starts_at))

    def granted(self, userid: str, year: int) -> int:
        """The vacation days an admin gave ``userid`` for ``year``."""
        self.reads.add(account_key(userid))
        stmt = sa.select(sa.func.coalesce(sa.func.sum(GRANTS.c.days), 0)).where(
            GRANTS.c.userid == userid.lower(), GRANTS.c.year == year
        )
        return int(self.session.execute(stmt).scalar_one())

    def lock_account(self, userid: str) -> None:
        """Hold ``userid``'s row until the write transaction ends (PostgreSQL's row lock;
        SQLite's write transaction holds the whole file already): what is counted for the
        account next is not counted by another server instance meanwhile."""
        stmt = sa.select(PLAYERS.c.userid).where(PLAYERS.c.userid == userid.lower())
        self.session.execute(stmt.with_for_update())

    def failures(self, userid: str, since: datetime) -> int:
        """Wrong passwords given for ``userid`` since ``since``."""
        self.reads.add(("failures", userid.lower()))
        stmt = sa.select(sa.func.count()).where(
            FAILURES.c.userid == userid.lower(), FAILURES.c.failed_at > since
        )
        return int(self.session.execute(stmt).scalar() or 0)

    def pauses(self) -> tuple[Pause, ...]:
        """Every site-wide clock pause."""
        self.reads.add(("pauses", "all"))
        return load_pauses(self.session)

    def next_board_number(self) -> int:
        """The number a new board takes: one more than the highest so far."""
        self.reads.add(("boards", "new"))
        highest = self.session.execute(sa.select(sa.func.max(GAMES.c.board))).scalar()
        return int(highest or 0) + 1
