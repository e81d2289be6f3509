"""What the store's statements share: the values of an IN, a row count, the writes
guarded by a compare-and-set, and ``Stale``, which such a write raises when it fails.

A write whose compare-and-set fails (a board's row no longer has the version a
decision was made on, an account's columns no longer hold what it saw) raises
``Stale``: the unit of work rolls the command back and decides it again on
fresh values (``pbm.usecases.unit``). ``savepoint`` takes a unique key taken
meanwhile (the database's ``IntegrityError``) the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

# A row a statement found (``row.board``, ``row._mapping["board"]``).
Row = sa.Row[Any]

# The loaders' statements are built once, their values bound at each read: building
# and keying a statement afresh cost more than its round trip (a web page reads six).
# ``ANY``: the values of an IN, sorted (``any_of``).
ANY: sa.BindParameter[Any] = sa.bindparam("any", expanding=True)


class Stale(Exception):
    """What a decision was made on has changed since; decide again."""


def any_of(values: Iterable[object]) -> dict[str, list[object]]:
    """The values bound to ``ANY``; sorted: rows locked in one order everywhere."""
    return {"any": sorted(set(values), key=str)}


def rowcount(session: Session, stmt: sa.Executable) -> int:
    """Run a statement; its row count.

    A unique key taken meanwhile (a board number, a userid) raises the
    database's ``IntegrityError``, which the unit of work takes as ``Stale``.
    """
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]


def insert_unless(
    session: Session, table: sa.Table, row: dict[str, Any], exists: sa.Exists
) -> None:
    """INSERT ``row`` unless ``exists`` holds, in one statement; ``Stale`` if it held.

    RETURNING, not the row count: drivers do not all count an INSERT ... SELECT.
    """
    select = sa.select(*(sa.literal(v, type_=table.c[k].type) for k, v in row.items()))
    stmt = sa.insert(table).from_select(list(row), select.where(~exists))
    if session.execute(stmt.returning(*table.primary_key.columns)).first() is None:
        raise Stale


def fields_of(value: Any, without: str = "") -> dict[str, Any]:
    """A value's fields by name (its ``__slots__``), but ``without``: a row to write."""
    return {k: getattr(value, k) for k in value.__slots__ if k != without}


@contextmanager
def savepoint(session: Session) -> Iterator[None]:
    """A savepoint in ``session``'s transaction: all that is written inside, or nothing.

    A unique key taken meanwhile (the database's ``IntegrityError``) is raised as
    ``Stale``, as a failed compare-and-set is.
    """
    try:
        with session.begin_nested():
            yield
    except IntegrityError as exc:
        raise Stale from exc
