"""Time controls: a board's clock is one of several kinds, kept to the second.

- ``games.time_control``: the board's control as its spec (``pbm.timecontrol``);
  existing boards get the classic one their days say (``classic 7/21``).
- ``games.clock``: both players' time left, moves made, time used and given
  (JSON); None until the first move.
- ``games.timer_at`` and ``ix_games_status_timer_at``: the earliest moment the
  board's reminder or the end of a player's time may be due; the timers read
  only the boards whose moment has come. Existing boards in play are looked at
  by the first timer pass, which writes their real moment.
- ``moves.clock_before``: the board's clock before the move, which an accepted
  undo gives back.
- ``vacation_grants``: vacation days an admin gave a player for a year.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(
            sa.Column("time_control", sa.Text(), nullable=False, server_default="classic 7/21")
        )
        batch.add_column(sa.Column("clock", sa.Text(), nullable=True))
        batch.add_column(sa.Column("timer_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("clock_before", sa.Text(), nullable=True))
    games = sa.table(
        "games",
        sa.column("time_control", sa.Text()),
        sa.column("nag_days", sa.Integer()),
        sa.column("forfeit_days", sa.Integer()),
        sa.column("status", sa.String()),
        sa.column("timer_at", sa.DateTime(timezone=True)),
        sa.column("clock_since", sa.DateTime(timezone=True)),
        sa.column("last_move_at", sa.DateTime(timezone=True)),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    spec = (
        sa.literal("classic ")
        + sa.cast(games.c.nag_days, sa.Text())
        + sa.literal("/")
        + sa.cast(games.c.forfeit_days, sa.Text())
    )
    op.execute(sa.update(games).values(time_control=spec))
    start = sa.func.coalesce(games.c.clock_since, games.c.last_move_at, games.c.created_at)
    op.execute(sa.update(games).where(games.c.status == "active").values(timer_at=start))
    op.create_index("ix_games_status_timer_at", "games", ["status", "timer_at"])
    op.create_table(
        "vacation_grants",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), nullable=False),
        sa.Column("year", sa.Integer(), nullable=False),
        sa.Column("days", sa.Integer(), nullable=False),
        sa.Column("granted_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_vacation_grants_userid", "vacation_grants", ["userid"])


def downgrade() -> None:
    op.drop_index("ix_vacation_grants_userid", table_name="vacation_grants")
    op.drop_table("vacation_grants")
    op.drop_index("ix_games_status_timer_at", table_name="games")
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("clock_before")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("timer_at")
        batch.drop_column("clock")
        batch.drop_column("time_control")
