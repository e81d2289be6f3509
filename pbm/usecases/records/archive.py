"""Finished games -> game records (text, JSON, a game's own) on disk, read back by
``replay``. The records themselves are made by ``formats``. A game is marked archived
when its record is written (it stays in the database).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from pbm.model import BoardStatus
from pbm.store.lists import finished_rows
from pbm.usecases.changes import BoardChange
from pbm.usecases.records.formats import (
    record_in,
    suffix_of,
)
from pbm.usecases.site import Site
from pbm.usecases.world import World


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
    with site.db.read() as session:
        rows = finished_rows(session, since, unarchived=out_dir is None)
    return [
        board
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
        if board.status != BoardStatus.FINISHED:
            raise ValueError(f"board {number} is not a finished game")
        text, suffix = record_in(board, fmt, site.config.mail.address)
        path = record_path(out_dir, board.game, number, suffix)
        _write_atomically(path, text)
        if board.archived_at is None:  # the first record of it: a later one keeps the date
            BoardChange(board, replace(board, archived_at=now)).save(session)
    return ArchivedGame(number, path)
