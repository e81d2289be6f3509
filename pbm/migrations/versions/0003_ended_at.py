"""When a board ended (finished or cancelled), for records and ``pbm archive --since``.

Boards that ended before this revision get their last move's time (or their
start), the best the database knows.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("games", sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE games SET ended_at = COALESCE(last_move_at, created_at) "
        "WHERE status IN ('finished', 'cancelled')"
    )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("ended_at")
