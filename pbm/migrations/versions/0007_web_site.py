"""The read-only web site: its lists are one indexed query a page.

- ``ix_games_status_last_move_at``: the boards in play, newest move first
  (the front page).
- ``ix_games_status_ended_at``: finished games, the latest first (the front
  page, the archive).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_games_status_last_move_at", "games", ["status", "last_move_at"])
    op.create_index("ix_games_status_ended_at", "games", ["status", "ended_at"])


def downgrade() -> None:
    op.drop_index("ix_games_status_ended_at", table_name="games")
    op.drop_index("ix_games_status_last_move_at", table_name="games")
