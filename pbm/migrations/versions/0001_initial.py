"""The first schema: players, games, moves, subscriptions, ratings, mail tables.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _time(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("userid", sa.String(), nullable=False),
        sa.Column("display", sa.String(), nullable=False),
        sa.Column("email", sa.String(), nullable=False),
        sa.Column("full_name", sa.String(), nullable=False),
        sa.Column("password_hash", sa.String(), nullable=False),
        _time("created_at"),
        _time("vacation_until", nullable=True),
        sa.Column("vacation_days_used", sa.Integer(), nullable=False),
        sa.Column("vacation_year", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("userid"),
    )
    op.create_index("ix_players_email", "players", ["email"])

    op.create_table(
        "games",
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("white", sa.String(), nullable=False),
        sa.Column("black", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("result", sa.String(), nullable=True),
        sa.Column("termination", sa.String(), nullable=True),
        sa.Column("position", sa.Text(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("nag_days", sa.Integer(), nullable=False),
        sa.Column("forfeit_days", sa.Integer(), nullable=False),
        _time("created_at"),
        _time("last_move_at", nullable=True),
        _time("last_nag_at", nullable=True),
        _time("archived_at", nullable=True),
        sa.Column("undo_request_by", sa.String(), nullable=True),
        sa.Column("cancel_request_by", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(["white"], ["players.userid"]),
        sa.ForeignKeyConstraint(["black"], ["players.userid"]),
        sa.PrimaryKeyConstraint("board"),
    )
    op.create_index("ix_games_white", "games", ["white"])
    op.create_index("ix_games_black", "games", ["black"])
    op.create_index("ix_games_status", "games", ["status"])

    op.create_table(
        "moves",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(), nullable=False),
        sa.Column("notation", sa.String(), nullable=False),
        sa.Column("text", sa.String(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        _time("created_at"),
        sa.Column("message_id", sa.String(), nullable=True),
        sa.Column("queued", sa.Boolean(), nullable=False),
        sa.Column("position_before", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["board"], ["games.board"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("board", "ply", name="uq_moves_board_ply"),
    )
    op.create_index("ix_moves_board", "moves", ["board"])

    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(), nullable=True),
        sa.Column("email", sa.String(), nullable=True),
        _time("created_at"),
        sa.ForeignKeyConstraint(["board"], ["games.board"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("board", "userid", name="uq_subscriptions_board_userid"),
    )
    op.create_index("ix_subscriptions_board", "subscriptions", ["board"])

    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("userid", sa.String(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("games_played", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["userid"], ["players.userid"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game", "variant", "userid", name="uq_ratings_game_variant_userid"),
    )

    op.create_table(
        "inbox",
        sa.Column("id", sa.Integer(), nullable=False),
        _time("received_at"),
        sa.Column("mail_from", sa.String(), nullable=False),
        sa.Column("rcpt_to", sa.Text(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=True),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        _time("processed_at", nullable=True),
        sa.Column("claimed_by", sa.String(), nullable=True),
        _time("claimed_at", nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_inbox_message_id", "inbox", ["message_id"])
    op.create_index("ix_inbox_status", "inbox", ["status"])

    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        _time("created_at"),
        sa.Column("to_addr", sa.String(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=True),
        sa.Column("reply_as", sa.String(), nullable=True),
        sa.Column("reply_to", sa.String(), nullable=True),
        sa.Column("in_reply_to", sa.String(), nullable=True),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("is_error", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _time("next_attempt_at", nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _time("sent_at", nullable=True),
        sa.Column("claimed_by", sa.String(), nullable=True),
        _time("claimed_until", nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("message_id", name="uq_outbox_message_id"),
    )
    op.create_index("ix_outbox_status", "outbox", ["status"])

    op.create_table(
        "processed_messages",
        sa.Column("message_id", sa.String(), nullable=False),
        _time("processed_at"),
        sa.PrimaryKeyConstraint("message_id"),
    )


def downgrade() -> None:
    for table in (
        "processed_messages",
        "outbox",
        "inbox",
        "ratings",
        "subscriptions",
        "moves",
        "games",
        "players",
    ):
        op.drop_table(table)
