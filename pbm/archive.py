"""Finished games -> game records (text, JSON, a game's own) on disk, read back by
``pbm.record``. The records themselves are made by ``pbm.usecases.records``. A game
is marked archived when its record is written (it stays in the database).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from pbm.usecases.changes import BoardChange
from pbm.usecases.records import (
    record_in,
    suffix_of,
)
from pbm.usecases.site import Site
from pbm.usecases.world import GAMES, World


@dataclass(frozen=True)
class ArchivedGame:
    board: int
    path: Path


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def record_path(out_dir: Path, game: str, number: int, suffix: str) -> Path:
    """Where the record of a game is written in ``out_dir``, by its file ending."""
    return out_dir / f"{game}-board-{number}.{suffix}"


def pending_boards(
    site: Site, since: datetime | None = None, out_dir: Path | None = None, fmt: str = "text"
) -> list[int]:
    """Finished games (ended on or after ``since``) to archive, oldest first.

    Those not yet archived, and (given ``out_dir``) those archived before whose
    record in ``fmt`` is not in ``out_dir``: archived as text, a game is still
    archived as JSON.
    """
    stmt = sa.select(GAMES.c.board, GAMES.c.game, GAMES.c.archived_at).where(
        GAMES.c.status == "finished"
    )
    if out_dir is None:
        stmt = stmt.where(GAMES.c.archived_at.is_(None))
    if since is not None:
        ended = sa.func.coalesce(GAMES.c.ended_at, GAMES.c.last_move_at, GAMES.c.created_at)
        stmt = stmt.where(ended >= since)
    with site.db.read() as session:
        rows = session.execute(stmt.order_by(GAMES.c.board)).all()
    return [
        int(board)
        for board, game, archived_at in rows
        if archived_at is None
        or (
            out_dir is not None
            and not record_path(out_dir, game, board, suffix_of(game, fmt)).exists()
        )
    ]


def archive_board(site: Site, number: int, out_dir: Path, fmt: str) -> ArchivedGame:
    """Write one finished game's record and mark it archived (it stays queryable)."""
    with site.db.transaction() as session:
        now = site.clock()
        board = World(session, site.config, now, lock=True).board(number)
        if board.status != "finished":
            raise ValueError(f"board {number} is not a finished game")
        text, suffix = record_in(board, fmt, site.config.mail.address)
        path = record_path(out_dir, board.game, number, suffix)
        _write_atomically(path, text)
        if board.archived_at is None:  # the first record of it: a later one keeps the date
            BoardChange(board, replace(board, archived_at=now)).save(session)
    return ArchivedGame(number, path)
