"""Safe on the open internet: pending accounts, password failures, answer counts, bounces.

- ``players.status``: ``pending`` until the owner of the address confirms a
  signup (existing accounts are ``active``); ``reset_nonce`` makes a password
  reset address usable once; ``lockout_told_at`` when the owner was last told
  of wrong passwords, ``lockout_answered_at`` when the last refusal of a
  locked account was answered.
- ``password_failures``: one row per wrong password, kept for the lockout time.
- ``answer_counts``: automatic mails per address and hour (the answer limit
  reads this small table, not the outbox).
- ``games.challenger``: who challenged; such a board ``waiting`` until the
  other accepts.
- ``vacations.kind``: ``vacation``, or ``bounce`` for the time a player's
  address bounced (his clocks stand still then too).
- ``outbox.reply_to`` goes: the Reply-To is made when a message is built;
  ``outbox.reply_key`` names its context when it is not the board.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("status", sa.String(), nullable=False, server_default="active"))
        batch.add_column(sa.Column("reset_nonce", sa.String(), nullable=True))
        batch.add_column(sa.Column("lockout_told_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("lockout_answered_at", sa.DateTime(timezone=True), nullable=True)
        )
    op.create_table(
        "password_failures",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("userid", sa.String(), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_password_failures_userid", "password_failures", ["userid"])
    op.create_table(
        "answer_counts",
        sa.Column("address", sa.String(), primary_key=True),
        sa.Column("hour", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("answers", sa.Integer(), nullable=False),
        sa.Column("errors", sa.Integer(), nullable=False),
    )
    with op.batch_alter_table("vacations") as batch:
        batch.add_column(sa.Column("kind", sa.String(), nullable=False, server_default="vacation"))
    op.add_column("games", sa.Column("challenger", sa.String(), nullable=True))
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("reply_to")
        batch.add_column(sa.Column("reply_key", sa.String(), nullable=True))
    op.create_index("ix_inbox_processed_at", "inbox", ["processed_at"])
    op.create_index("ix_processed_messages_processed_at", "processed_messages", ["processed_at"])


def downgrade() -> None:
    op.drop_index("ix_processed_messages_processed_at", "processed_messages")
    op.drop_index("ix_inbox_processed_at", "inbox")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("reply_key")
        batch.add_column(sa.Column("reply_to", sa.String(), nullable=True))
    with op.batch_alter_table("games") as batch:
        batch.drop_column("challenger")
    with op.batch_alter_table("vacations") as batch:
        batch.drop_column("kind")
    op.drop_table("answer_counts")
    op.drop_index("ix_password_failures_userid", "password_failures")
    op.drop_table("password_failures")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("lockout_answered_at")
        batch.drop_column("lockout_told_at")
        batch.drop_column("reset_nonce")
        batch.drop_column("status")
