"""No spam cannon, no lost move mail (issue 35).

- ``inbox.claimed_by``, ``inbox.claimed_until``: a received mail is claimed
  by one inbox runner at a time, under a lease; one that dies leaves it to
  be claimed again when the lease ends.
- ``players.new_email``, ``players.new_email_nonce``: an address change waits
  for a reply from the new address before it is used.
- ``outbox.kind``: who a mail is for and who pays for it (``pbm.replies.Kind``):
  an answer, a board's mail, a confirmation, a challenge...; challenges held
  back for an hour are gathered into the mail that waits.
- ``notice_counts``: mails sent on someone's behalf, counted per key (an
  address, an account) and day: confirmations, password resets.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("claimed_by", sa.String(), nullable=True))
        batch.add_column(sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("new_email", sa.String(), nullable=True))
        batch.add_column(sa.Column("new_email_nonce", sa.String(), nullable=True))
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("kind", sa.String(), nullable=True))
    op.create_table(
        "notice_counts",
        sa.Column("key", sa.String(), primary_key=True),
        sa.Column("day", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("sent", sa.Integer(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("notice_counts")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("kind")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("new_email_nonce")
        batch.drop_column("new_email")
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("claimed_until")
        batch.drop_column("claimed_by")
