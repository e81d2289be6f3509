"""``pbm db backup FILE``: a consistent copy of the SQLite database, the server running."""

from __future__ import annotations

from pathlib import Path

import click

from pbm.cli.startup import load_config, open_database
from pbm.store.backup import BackupError
from pbm.store.backup import backup as backup_database
from pbm.store.engine import shown_url, url_of


@click.command("backup", short_help="A consistent copy of the SQLite database in FILE.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def backup(ctx: click.Context, file: Path) -> None:
    """Copy the SQLite database to the new FILE, safely while pbm serve runs.

    Restore: stop the server, put FILE in place of pbm.sqlite3 (without its
    -wal and -shm files), start it. PostgreSQL is backed up with pg_dump.
    """
    cfg = load_config(ctx)
    if url_of(cfg).get_backend_name() != "sqlite":
        raise click.ClickException(
            f"database {shown_url(cfg)} is not SQLite: back it up with pg_dump"
        )
    with open_database(ctx, schema=False) as db:
        try:
            size = backup_database(db, file)
        except BackupError as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"backup: {file} ({size} bytes) of {shown_url(cfg)}")


def register(main: click.Group) -> None:
    """Add ``backup`` to the ``db`` group."""
    db = main.commands["db"]
    assert isinstance(db, click.Group)
    db.add_command(backup)
