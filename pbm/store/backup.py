"""A backup of the SQLite database while the server runs: SQLite's online backup API.

Copying the file of a database in WAL mode is unsafe (the newest commits may
still be in the ``-wal`` file, and a copy taken mid-write is torn). ``backup``
copies a consistent snapshot page by page through ``sqlite3.Connection.backup``
into a new file beside the target, checks it, makes it a self-contained
file (rollback journal, not WAL) and renames it into place. The file is its
owner's alone (mode 0600, whatever the umask): it holds the password hashes,
the addresses and the reply tokens' secrets.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

from pbm.store.engine import Database


class BackupError(ValueError):
    """A backup that cannot be made here; says why."""


def backup(db: Database, target: Path) -> int:
    """Back the SQLite database of ``db`` up to the new file ``target``; its size in bytes."""
    if db.dialect != "sqlite":
        raise BackupError(f"{db.dialect} is backed up with its own tools (pg_dump), not pbm")
    if target.exists():
        raise BackupError(f"{target} exists: name a new file")
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.unlink(missing_ok=True)
    # Made the owner's alone before a byte is written into it (sqlite3 would use the umask).
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.chmod(tmp, 0o600)
    try:
        source = db.engine.raw_connection()
        try:
            with closing(sqlite3.connect(tmp)) as copy:
                source.driver_connection.backup(copy)  # type: ignore[union-attr]
                copy.execute("PRAGMA journal_mode = DELETE")
                (verdict,) = copy.execute("PRAGMA quick_check").fetchone()
                if verdict != "ok":
                    raise BackupError(f"the copy does not check out: {verdict}")
        finally:
            source.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target.stat().st_size
