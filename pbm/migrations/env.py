"""Alembic environment for pbm: run by ``pbm.store.upgrade`` (or the alembic CLI).

``pbm.store.upgrade`` passes an open connection in ``config.attributes``;
otherwise the ``sqlalchemy.url`` main option is used.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection
from sqlmodel import SQLModel

import pbm.store.tables  # noqa: F401  (importing it defines the tables)
from pbm.store.engine import Database

config = context.config
target_metadata = SQLModel.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite can only change columns by copying the table.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    db = Database.open(config.get_main_option("sqlalchemy.url") or "")
    try:
        with db.engine.begin() as conn:
            _run(conn)
    finally:
        db.close()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
