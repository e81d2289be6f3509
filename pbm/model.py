"""The values the house is made of: accounts, boards and what belongs to them.

Plain frozen values, no database and no decision: the store loads and saves
them (``pbm.store``), the use cases decide on them (``pbm.usecases``). A
``Board`` is everything about one board that a decision or a board mail
needs: its row, its moves, its followers, the queued moves, the players'
accounts, vacations and ratings, and the site's clock pauses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from pbm import games
from pbm.games import Game, GameState, Result, legend, move_number
from pbm.refusals import BadRequest
from pbm.timecontrol import REMINDERS


class BoardStatus(StrEnum):
    """A board's status, as its row keeps it."""

    WAITING = "waiting"  # a challenge not yet accepted
    ACTIVE = "active"  # in play
    FINISHED = "finished"  # played to its end
    CANCELLED = "cancelled"


# The boards still open: a challenge, or in play.
OPEN = (BoardStatus.WAITING, BoardStatus.ACTIVE)
# The statuses of the boards anyone may see (the web site), and a board cancelled after
# play began: ``pbm.usecases.weblinks.shown``.
SHOWN = (BoardStatus.ACTIVE, BoardStatus.FINISHED)


class AccountStatus(StrEnum):
    """An account's status, as its row keeps it."""

    PENDING = "pending"  # a signup the owner of the address has not confirmed yet
    ACTIVE = "active"


class MailStatus(StrEnum):
    """A received mail's status, as its inbox row keeps it: waiting, or how it ended."""

    NEW = "new"
    DONE = "done"
    IGNORED = "ignored"
    FAILED = "failed"


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
    status: AccountStatus = AccountStatus.ACTIVE
    reset_nonce: str | None = None
    lockout_told_at: datetime | None = None
    lockout_answered_at: datetime | None = None
    format: str = "html"  # html: board mails with a picture | text: plain text only
    new_email: str | None = None  # an address change asked for, until its reply confirms it
    new_email_nonce: str | None = None  # makes that confirmation's reply address its own
    bouncing: bool = False  # mail to his address bounces (``pbm.usecases.bounces``)

    @property
    def active(self) -> bool:
        return self.status == AccountStatus.ACTIVE


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
    """A player's conditional move tree on a board: his answers, written in advance, keyed
    by his opponent's reply (``lines``: ``pbm.usecases.trees.Tree.to_json``)."""

    userid: str
    lines: str
    created_at: datetime
    id: int | None = None  # None until saved


@dataclass(frozen=True, slots=True)
class Digest:
    """A player who chose one mail at set times (a digest) over a mail for every move:
    ``times`` (``HH:MM,HH:MM``) in ``zone``; ``next_at``: when the next one is due."""

    userid: str
    times: str
    zone: str
    next_at: datetime


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


@dataclass(frozen=True, slots=True)
class EventTag:
    """The event a board is played in (``pbm.store.events``): its number, name and round,
    and the most vacation days that stop its clocks (None: as many as the player has)."""

    number: int
    name: str
    round: int
    vacation_days: int | None = None


@dataclass(frozen=True)
class Board:
    """One board and everything around it, as values.

    The fields up to ``challenger`` are the ``games`` row (``number`` is its
    ``board`` column, the others have their column's name); ``version`` is
    bumped by every change (the compare-and-set of ``pbm.store.boards.save_board``)
    and is never set by a decision.
    """

    number: int
    game: str
    variant: str
    options: Mapping[str, str]
    white: str
    black: str
    status: BoardStatus
    result: Result | None
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
    computer_level: int | None  # 1-5 on a board the computer plays (``pbm.usecases.computer``)
    # Loaded with it:
    moves: tuple[PlayedMove, ...] = ()
    followers: tuple[Follower, ...] = ()
    queue: tuple[Queued, ...] = ()
    people: Mapping[str, Account] = field(default_factory=dict)  # players, movers, followers
    vacations: tuple[Away, ...] = ()  # of the two players
    pauses: tuple[Pause, ...] = ()
    standings: Mapping[str, Standing] = field(default_factory=dict)  # the players', this variant
    reminders: tuple[timedelta, ...] = REMINDERS  # a time bank's, the site's (``clock``)
    event: EventTag | None = None  # the tournament or league division it is played in

    @classmethod
    def new(
        cls,
        number: int,
        game: str,
        start: GameState,
        white: Account,
        black: Account,
        *,
        time_control: str,
        nag_days: int,
        forfeit_days: int,
        now: datetime,
        challenger: str | None = None,
        computer_level: int | None = None,
        reminders: tuple[timedelta, ...] = REMINDERS,
    ) -> Board:
        """A board at its start: in play at once, or waiting for the challenged player
        when a ``challenger`` waits for his answer (its clock stands still till then)."""
        return cls(
            number=number,
            game=game,
            variant=start.variant,
            options=dict(start.options),
            white=white.userid,
            black=black.userid,
            status=BoardStatus.ACTIVE if challenger is None else BoardStatus.WAITING,
            result=None,
            termination=None,
            position=start.dump(),
            ply=start.ply,
            version=0,
            nag_days=nag_days,
            forfeit_days=forfeit_days,
            created_at=now,
            last_move_at=None,
            last_nag_at=None,
            archived_at=None,
            ended_at=None,
            undo_request_by=None,
            cancel_request_by=None,
            clock_since=now if challenger is None else None,
            white_rating_before=None,
            white_rating_after=None,
            black_rating_before=None,
            black_rating_after=None,
            draw_offer_by=None,
            challenger=challenger,
            time_control=time_control,
            clock=None,
            timer_at=None,
            computer_level=computer_level,
            reminders=reminders,
            people={white.userid: white, black.userid: black},
        )

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
        if self.status != BoardStatus.WAITING or self.challenger is None:
            return None
        return self.black if self.challenger == self.white else self.white

    def name(self, userid: str) -> str:
        """How a player is named in mail: as he signed up."""
        account = self.people.get(userid)
        return account.display if account is not None else userid

    def move_number(self, ply: int) -> int:
        """The number players give the ``ply``-th turn (chess counts pairs of them)."""
        return move_number(self.rules, ply)

    def legend(self, seat: int) -> str:
        """What the board's picture from ``seat`` shows, in words (``games.legend``)."""
        return legend(self.state, seat)

    def title(self) -> str:
        """The game's title and the board's number: ``<Title> Board 12``."""
        return f"{self.rules.title} Board {self.number}"

    def stops(self, userid: str, now: datetime) -> list[tuple[datetime, datetime]]:
        """The spans ``userid``'s clock stood still on this board up to ``now``: his
        vacations and bounces (one still open ends at ``now``) and the site's pauses."""
        stops = [
            (v.starts_at, now if v.ends_at >= OPEN_END else v.ends_at)
            for v in self.vacations
            if v.userid == userid and v.kind != "vacation"
        ]
        stops += _capped(
            [
                (v.starts_at, now if v.ends_at >= OPEN_END else v.ends_at)
                for v in self.vacations
                if v.userid == userid and v.kind == "vacation"
            ],
            self.created_at,
            self.event.vacation_days if self.event is not None else None,
        )
        stops += [(p.started_at, p.ended_at or now) for p in self.pauses]
        return stops

    @property
    def clock_start(self) -> datetime:
        """When the player to move got the move: his clock runs from here."""
        return self.clock_since or self.last_move_at or self.created_at


def _capped(
    spans: list[tuple[datetime, datetime]], since: datetime, days: int | None
) -> list[tuple[datetime, datetime]]:
    """Vacation ``spans`` of an event's board: the first ``days`` of them from ``since``
    (the event's start) stop its clock, the rest do not (None: all of them)."""
    if days is None:
        return spans
    left = timedelta(days=days)
    out = []
    for start, end in sorted(spans):
        begin = max(start, since)
        if end <= begin:
            continue
        taken = min(end - begin, left)
        if taken > timedelta(0):
            out.append((begin, begin + taken))
        left -= taken
    return out


# A board by its number as a reply shows it (``pbm.usecases.unit``: as the decision left
# it); None: none.
BoardOf = Callable[[int], "Board | None"]
