"""Boards as values (``pbm.model.Board``): loaded with all that belongs to them, locked,
saved as the difference between the value a decision read and the one it made.

``load_boards`` reads any number of boards in the same few statements (one
board is N = 1). ``save_board`` writes a board's row only if it still has the
version the decision was made on (every change of a board bumps it), and its
moves, followers, move trees and standings as differences; ``Stale`` when
the board changed meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlmodel import Session

from pbm.games import Result
from pbm.model import Board, BoardStatus, Follower, PlayedMove, Queued, Standing
from pbm.store.accounts import load_accounts
from pbm.store.events import event_tags
from pbm.store.statements import ANY, Stale, any_of, fields_of, rowcount
from pbm.store.stops import load_pauses, load_vacations
from pbm.store.tables import Game as GameRow
from pbm.store.tables import Move, MoveTree, Rating, Subscription, table
from pbm.timecontrol import REMINDERS

GAMES = table(GameRow)
MOVES = table(Move)
FOLLOWERS = table(Subscription)
QUEUE = table(MoveTree)
RATINGS = table(Rating)

# The columns of a board's row, as ``Board`` fields (the row's key is ``number``).
ROW_FIELDS: tuple[str, ...] = tuple("number" if c.name == "board" else c.name for c in GAMES.c)


def board_of_row(row: Mapping[Any, Any], **around: Any) -> Board:
    """A ``Board`` from its ``games`` row and what is loaded around it (moves, people...)."""
    values = {f: row["board" if f == "number" else f] for f in ROW_FIELDS}
    values["status"] = BoardStatus(values["status"])
    values["result"] = _result(values["result"])
    return Board(**values, **around)


def _result(text: str | None) -> Result | None:
    return None if text is None else Result(text)


T = TypeVar("T")


def _by_board(
    session: Session, boards: Sequence[int], make: Callable[..., T], stmt: sa.Select[Any]
) -> dict[int, list[T]]:
    """The rows of ``boards`` by ``stmt`` (``_of_boards``), each made by ``make`` of all
    but its board; an empty list for a board with none."""
    out: dict[int, list[T]] = {n: [] for n in boards}
    for row in session.execute(stmt, any_of(boards)):
        out[row[0]].append(make(*row[1:]))
    return out


def _of_boards(
    board: sa.ColumnElement[Any],
    columns: tuple[sa.ColumnElement[Any], ...],
    order: sa.ColumnElement[Any],
) -> sa.Select[Any]:
    """``columns`` of the rows of some boards (``board`` their board's column), by board
    in ``order``."""
    return sa.select(board, *columns).where(board.in_(ANY)).order_by(board, order)


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
    (QUEUE.c.userid, QUEUE.c.lines, QUEUE.c.created_at, QUEUE.c.id),
    QUEUE.c.id,
)
_GAMES = sa.select(GAMES).where(GAMES.c.board.in_(ANY))
_GAMES_LOCKED = _GAMES.with_for_update()
_STANDINGS = sa.select(
    RATINGS.c.game,
    RATINGS.c.variant,
    RATINGS.c.userid,
    RATINGS.c.rating,
    RATINGS.c.games_played,
).where(RATINGS.c.userid.in_(ANY))


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
        rows = {int(row.board): row._mapping for row in session.execute(stmt, any_of(wanted))}
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
    for row in session.execute(_STANDINGS, any_of(players)):
        standings[(row.game, row.variant, row.userid)] = Standing(*row[2:])
    tags = event_tags(session, found)
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
            event=tags.get(number),
        )
    return out


def next_board_number(session: Session) -> int:
    """The number a new board takes: one more than the highest so far."""
    highest = session.execute(sa.select(sa.func.max(GAMES.c.board))).scalar()
    return int(highest or 0) + 1


# ---------------------------------------------------------------- saving


def _column(name: str) -> str:
    return "board" if name == "number" else name


def save_board(session: Session, before: Board | None, after: Board) -> None:
    """Insert ``after`` (``before`` None) or write what changed since ``before``, only
    if the row still has ``before``'s version (``Stale`` if not); the moves, followers,
    queued moves and standings as differences."""
    row = {_column(f): getattr(after, f) for f in ROW_FIELDS}
    if before is None:
        row["version"] = 0
        rowcount(session, sa.insert(GAMES).values(row))
    else:
        changed = {
            _column(f): getattr(after, f)
            for f in ROW_FIELDS
            if f != "version" and getattr(before, f) != getattr(after, f)
        }
        if not changed and _same_around(before, after):
            return
        stmt = (
            sa.update(GAMES)
            .where(GAMES.c.board == before.number, GAMES.c.version == before.version)
            .values(**changed, version=before.version + 1)
        )
        if rowcount(session, stmt) != 1:
            raise Stale
    _save_moves(session, before, after)
    followers, queue = (before.followers, before.queue) if before is not None else ((), ())
    _save_rows(session, FOLLOWERS, after.number, followers, after.followers)
    _save_rows(session, QUEUE, after.number, queue, after.queue)
    _save_standings(session, before, after)


def insert_boards(session: Session, boards: Sequence[Board]) -> None:
    """Insert new boards (an event's, made at once) in one statement: rows only, as a
    new board has no moves, followers, queue or rating changes yet."""
    rows = [{**{_column(f): getattr(b, f) for f in ROW_FIELDS}, "version": 0} for b in boards]
    if rows:
        session.execute(sa.insert(GAMES), rows)


def save_timer(session: Session, board: Board, at: datetime | None) -> None:
    """Write when ``board``'s clock may next be due, if it has not changed since it was
    read (``Stale`` if it has)."""
    stmt = (
        sa.update(GAMES)
        .where(GAMES.c.board == board.number, GAMES.c.version == board.version)
        .values(timer_at=at)
    )
    if rowcount(session, stmt) != 1:
        raise Stale


def _same_around(before: Board, after: Board) -> bool:
    return (before.moves, before.followers, before.queue, before.standings) == (
        after.moves,
        after.followers,
        after.queue,
        after.standings,
    )


def _save_moves(session: Session, before: Board | None, after: Board) -> None:
    old = set(before.moves) if before is not None else set()
    new = set(after.moves)
    number = after.number
    gone = sorted(m.ply for m in old - new)
    if gone:
        session.execute(sa.delete(MOVES).where(MOVES.c.board == number, MOVES.c.ply.in_(gone)))
    added = sorted(new - old, key=lambda m: m.ply)
    if added:
        rowcount(
            session,
            sa.insert(MOVES).values([{"board": number, **fields_of(m)} for m in added]),
        )


def _save_rows(
    session: Session,
    rows_table: sa.Table,
    number: int,
    before: Sequence[Follower | Queued],
    after: Sequence[Follower | Queued],
) -> None:
    """A board's rows of ``rows_table`` (its followers, its tree's lines) saved as their
    difference: the rows gone deleted by id, the new ones inserted in their order."""
    old, new = set(before), set(after)
    gone = [r.id for r in old - new if r.id is not None]
    if gone:
        session.execute(sa.delete(rows_table).where(rows_table.c.id.in_(gone)))
    added = [r for r in after if r in new - old]
    if added:
        rows = [{"board": number, **fields_of(r, without="id")} for r in added]
        session.execute(sa.insert(rows_table), rows)


def _save_standings(session: Session, before: Board | None, after: Board) -> None:
    old_standings = before.standings if before is not None else {}
    for userid, standing in after.standings.items():
        old = old_standings.get(userid)
        if old == standing:
            continue
        values = {"rating": standing.rating, "games_played": standing.games_played}
        if old is None:
            key = {"game": after.game, "variant": after.variant, "userid": userid}
            rowcount(session, sa.insert(RATINGS).values(**key, **values))
            continue
        stmt = (
            sa.update(RATINGS)
            .where(
                RATINGS.c.game == after.game,
                RATINGS.c.variant == after.variant,
                RATINGS.c.userid == userid,
                RATINGS.c.games_played == old.games_played,
            )
            .values(**values)
        )
        if rowcount(session, stmt) != 1:
            raise Stale  # a game of his ended meanwhile: rate this one afresh
