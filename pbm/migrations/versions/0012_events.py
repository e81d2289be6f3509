"""Tournaments and leagues (issue 40).

- ``events``: a round robin (or a league's division): its game, variant, time
  control, size, status and dates.
- ``event_entries``: who joined an event, his draw number once it starts, and
  when and how he was withdrawn (``struck``: his results count for nobody).
- ``event_boards``: the boards an event plays, by round.
- ``leagues``: one a game and variant: its time control, division size and season.
- ``league_members``: who is entered in a league, and who said ``league leave``.

The standings are no table: they are computed from the games every time.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _when(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "leagues",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("time_control", sa.Text(), nullable=False),
        sa.Column("division_size", sa.Integer(), nullable=False),
        sa.Column("vacation_days", sa.Integer(), nullable=True),
        sa.Column("season", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("version", sa.Integer(), nullable=False, server_default="0"),
        _when("created_at", nullable=False),
        sa.UniqueConstraint("game", "variant", name="uq_leagues_game_variant"),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.Text(), nullable=False),
        sa.Column("double", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("vacation_days", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False, server_default="0"),
        _when("created_at", nullable=False),
        _when("starts_at"),
        _when("started_at"),
        _when("ended_at"),
        _when("checked_at"),
        sa.Column("league", sa.Integer(), sa.ForeignKey("leagues.id"), nullable=True),
        sa.Column("season", sa.Integer(), nullable=True),
        sa.Column("division", sa.Integer(), nullable=True),
    )
    op.create_index("ix_events_league_season", "events", ["league", "season"])
    op.create_index("ix_events_status", "events", ["status"])
    op.create_table(
        "event_entries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event", sa.Integer(), sa.ForeignKey("events.id"), nullable=False),
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), nullable=False),
        _when("joined_at", nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        _when("withdrawn_at"),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("struck", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.UniqueConstraint("event", "userid", name="uq_event_entries_event_userid"),
    )
    op.create_index("ix_event_entries_userid", "event_entries", ["userid"])
    op.create_table(
        "event_boards",
        sa.Column("board", sa.Integer(), sa.ForeignKey("games.board"), primary_key=True),
        sa.Column("event", sa.Integer(), sa.ForeignKey("events.id"), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
    )
    op.create_index("ix_event_boards_event", "event_boards", ["event"])
    op.create_table(
        "league_members",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("league", sa.Integer(), sa.ForeignKey("leagues.id"), nullable=False),
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), nullable=False),
        _when("joined_at", nullable=False),
        sa.Column("leaving", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.UniqueConstraint("league", "userid", name="uq_league_members_league_userid"),
    )


def downgrade() -> None:
    op.drop_table("league_members")
    op.drop_index("ix_event_boards_event", "event_boards")
    op.drop_table("event_boards")
    op.drop_index("ix_event_entries_userid", "event_entries")
    op.drop_table("event_entries")
    op.drop_index("ix_events_status", "events")
    op.drop_index("ix_events_league_season", "events")
    op.drop_table("events")
    op.drop_table("leagues")
