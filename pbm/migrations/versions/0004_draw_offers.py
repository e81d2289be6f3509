"""Draw offers (``games.draw_offer_by``); columns no longer used go.

The players' vacation columns have been unused since 0002 (vacations are
rows of ``vacations``). Inbox rows are no longer claimed (a worker takes and
finishes them in one transaction): ``claimed_by`` becomes ``processed_by``,
the worker that acted on the mail.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("games", sa.Column("draw_offer_by", sa.String(), nullable=True))
    with op.batch_alter_table("players") as batch:
        batch.drop_column("vacation_until")
        batch.drop_column("vacation_days_used")
        batch.drop_column("vacation_year")
    with op.batch_alter_table("inbox") as batch:
        batch.alter_column("claimed_by", new_column_name="processed_by")
        batch.drop_column("claimed_at")


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.alter_column("processed_by", new_column_name="claimed_by")
        batch.add_column(sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("vacation_year", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column("vacation_days_used", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("vacation_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("games") as batch:
        batch.drop_column("draw_offer_by")
