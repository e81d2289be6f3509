"""Accounts: loaded as values (``pbm.model.Account``), found by address, saved, and the
wrong passwords given for them.

An account's ``bouncing`` is no column: it is read from its stops (an open
stop of kind ``bounce``, ``pbm.store.stops``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import OPEN_END, Account, AccountStatus
from pbm.store.statements import ANY, Stale, any_of, fields_of, rowcount
from pbm.store.tables import PasswordFailure, Player, Vacation, table

PLAYERS = table(Player)
FAILURES = table(PasswordFailure)
VACATIONS = table(Vacation)


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
        PLAYERS.c.new_email,
        PLAYERS.c.new_email_nonce,
        bouncing.label("bouncing"),
    ).where(PLAYERS.c.userid.in_(ANY))


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
        rows = session.execute(_ACCOUNTS_OPEN, any_of(wanted))
    else:
        rows = session.execute(_ACCOUNTS_AT, {**any_of(wanted), "now": now})
    return {row.userid: _account(row) for row in rows}


def _account(row: sa.Row[Any]) -> Account:
    return Account(**{**row._mapping, "status": AccountStatus(row.status)})


def all_userids(session: Session) -> list[str]:
    """The userid of every account."""
    return [str(u) for u in session.execute(sa.select(PLAYERS.c.userid)).scalars()]


def displays(session: Session, userids: Iterable[str]) -> dict[str, str]:
    """Display names by userid (the userid itself for one that does not exist)."""
    wanted = set(userids)
    if not wanted:
        return {}
    # Only the names: a list of 100 boards need not load whole accounts.
    stmt = sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(
        PLAYERS.c.userid.in_(sorted(wanted))
    )
    found: dict[str, str] = {row.userid: row.display for row in session.execute(stmt)}
    return {u: found.get(u, u) for u in wanted}


def userids_at(session: Session, address: str) -> list[str]:
    """The userids of the accounts whose registered address is ``address``."""
    stmt = sa.select(PLAYERS.c.userid).where(sa.func.lower(PLAYERS.c.email) == address.lower())
    return [str(u) for u in session.execute(stmt).scalars()]


def first_userid_at(session: Session, address: str) -> str | None:
    """The first userid (in order) of the accounts whose registered address is ``address``."""
    found: str | None = session.execute(
        sa.select(PLAYERS.c.userid)
        .where(sa.func.lower(PLAYERS.c.email) == address.lower())
        .order_by(PLAYERS.c.userid)
        .limit(1)
    ).scalar()
    return found


def lock_account(session: Session, userid: str) -> None:
    """Hold ``userid``'s row until the write transaction ends (PostgreSQL's row lock;
    SQLite's write transaction holds the whole file already)."""
    stmt = sa.select(PLAYERS.c.userid).where(PLAYERS.c.userid == userid.lower())
    session.execute(stmt.with_for_update())


def save_account(session: Session, before: Account | None, after: Account) -> None:
    """Insert ``after`` (``before`` None) or write the columns it changes, only if they
    still hold what ``before`` says (``Stale`` if not)."""
    row = fields_of(after, without="bouncing")  # not a column: read from its stops
    if before is None:
        rowcount(session, sa.insert(PLAYERS).values(row))
        return
    old = fields_of(before, without="bouncing")
    changed = {k: v for k, v in row.items() if old[k] != v}
    if not changed:
        return
    # Compare-and-set on what changes: it must still be as the decision saw it.
    stmt = (
        sa.update(PLAYERS)
        .where(
            PLAYERS.c.userid == before.userid,
            *(PLAYERS.c[k] == old[k] for k in changed),
        )
        .values(**changed)
    )
    if rowcount(session, stmt) != 1:
        raise Stale


def delete_pending(session: Session, created_before: datetime) -> int:
    """Delete the accounts still pending (their signup not confirmed) that were made
    before ``created_before``; how many."""
    stmt = sa.delete(PLAYERS).where(
        PLAYERS.c.status == AccountStatus.PENDING, PLAYERS.c.created_at < created_before
    )
    return rowcount(session, stmt)


# ---------------------------------------------------------------- wrong passwords


def failures_since(session: Session, userid: str, since: datetime) -> int:
    """Wrong passwords given for ``userid`` since ``since``."""
    stmt = sa.select(sa.func.count()).where(
        FAILURES.c.userid == userid.lower(), FAILURES.c.failed_at > since
    )
    return int(session.execute(stmt).scalar() or 0)


def last_failure(session: Session, userid: str, since: datetime) -> datetime | None:
    """When the last wrong password since ``since`` was given for ``userid``, if any."""
    found: datetime | None = session.execute(
        sa.select(sa.func.max(FAILURES.c.failed_at)).where(
            FAILURES.c.userid == userid, FAILURES.c.failed_at > since
        )
    ).scalar()
    return found


def add_failure(session: Session, userid: str, failed_at: datetime) -> None:
    """Remember a wrong password given for ``userid``."""
    session.execute(sa.insert(FAILURES).values(userid=userid, failed_at=failed_at))


def forget_failures(session: Session, userid: str) -> None:
    """Forget every wrong password given for ``userid``."""
    session.execute(sa.delete(FAILURES).where(FAILURES.c.userid == userid))
