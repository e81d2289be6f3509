"""Nothing a mistake or a stranger can break.

- ``inbox.attempts``: how often working a mail out failed; after
  ``server.mail_attempts`` it is set aside (``failed``), so no single mail
  blocks the queue.
- ``outbox.handed_at``: when a reply was handed to the transport; a row
  handed over whose outcome was never written (a full disk) is not sent again.
- ``outbox.attachment``: files that go with the reply (a game's records), as
  JSON (``pbm.replies.attachments_json``).
- ``outbox.thread``: the subject of the game's thread a mail about a board is
  sent with (its own subject becomes its first line).
- ``outbox.picture``: the board picture a mail shows in its HTML part (JSON:
  ``pbm.replies.Picture``), drawn when the mail is made into a message.
- ``players.format``: ``html`` (a picture of the board with the text) or
  ``text`` (plain text only), the player's choice.
- ``answer_errors``: the refusals sent to an address in an hour, by what they
  said: the same mistake repeated counts once against the error allowance.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("handed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("attachment", sa.Text(), nullable=True))
        batch.add_column(sa.Column("thread", sa.Text(), nullable=True))
        batch.add_column(sa.Column("picture", sa.Text(), nullable=True))
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("format", sa.String(), nullable=False, server_default="html"))
    op.create_table(
        "answer_errors",
        sa.Column("address", sa.String(), primary_key=True),
        sa.Column("hour", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("digest", sa.String(), primary_key=True),
    )


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_column("format")
    op.drop_table("answer_errors")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("picture")
        batch.drop_column("thread")
        batch.drop_column("attachment")
        batch.drop_column("handed_at")
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("attempts")
