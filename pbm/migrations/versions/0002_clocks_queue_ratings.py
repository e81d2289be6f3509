"""Clocks, vacations, queued moves and ratings.

``games`` gets ``clock_since`` (filled from the last move, else the start)
and the ratings before and after a rated game; new tables ``queued_moves``,
``vacations`` and ``clock_pauses``.

Revision ID: 0002
Revises: 0001
Create Date: 2025-03-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RATING_COLUMNS = (
    "white_rating_before",
    "white_rating_after",
    "black_rating_before",
    "black_rating_after",
)


def _time(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.add_column("games", _time("clock_since", nullable=True))
    for name in _RATING_COLUMNS:
        op.add_column("games", sa.Column(name, sa.Integer(), nullable=True))
    op.execute("UPDATE games SET clock_since = COALESCE(last_move_at, created_at)")

    op.create_table(
        "queued_moves",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(), nullable=False),
        sa.Column("move_text", sa.String(), nullable=False),
        sa.Column("if_move", sa.String(), nullable=True),
        _time("created_at"),
        sa.ForeignKeyConstraint(["board"], ["games.board"]),
        sa.ForeignKeyConstraint(["userid"], ["players.userid"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_queued_moves_board", "queued_moves", ["board"])

    op.create_table(
        "vacations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(), nullable=False),
        _time("starts_at"),
        _time("ends_at"),
        sa.ForeignKeyConstraint(["userid"], ["players.userid"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_vacations_userid", "vacations", ["userid"])

    op.create_table(
        "clock_pauses",
        sa.Column("id", sa.Integer(), nullable=False),
        _time("started_at"),
        _time("ended_at", nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("clock_pauses")
    op.drop_index("ix_vacations_userid", table_name="vacations")
    op.drop_table("vacations")
    op.drop_index("ix_queued_moves_board", table_name="queued_moves")
    op.drop_table("queued_moves")
    with op.batch_alter_table("games") as batch:
        for name in ("clock_since", *_RATING_COLUMNS):
            batch.drop_column(name)
