"""Correspondence comforts (issue 41).

- ``move_trees``: a player's conditional move tree on a board, its lines as JSON
  (``pbm.usecases.trees``), one a player and board. It replaces ``queued_moves``:
  each player's queued moves on a board become the lines of one tree, in the order
  they were tried (``MOVE if THEIRS``: the line ``THEIRS MOVE``, the opponent's move
  in the board's canonical notation; ``MOVE`` alone: an answer to any reply, ``*``);
  of two for the same reply the first is kept, as it was the one played.
- ``digests``: the players who chose one mail at set times over a mail a move.
- ``glicko_ratings``, ``rating_periods``: Glicko-2 ratings beside Elo, in daily
  rating periods, and how far the periods are worked out.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from pbm import games

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ANY = "*"  # the reply of an answer to any move (``pbm.usecases.trees.ANY``)
MAX_LINES = 30


def upgrade() -> None:
    op.create_table(
        "move_trees",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("board", sa.Integer(), sa.ForeignKey("games.board"), nullable=False),
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), nullable=False),
        sa.Column("lines", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("board", "userid", name="uq_move_trees_board_userid"),
    )
    op.create_index("ix_move_trees_board", "move_trees", ["board"])
    op.create_table(
        "digests",
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), primary_key=True),
        sa.Column("times", sa.String(), nullable=False),
        sa.Column("zone", sa.String(), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_digests_next_at", "digests", ["next_at"])
    op.create_table(
        "glicko_ratings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("deviation", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("games_played", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("rated_until", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("game", "variant", "userid", name="uq_glicko_game_variant_userid"),
    )
    op.create_table(
        "rating_periods",
        sa.Column("name", sa.String(), primary_key=True),
        sa.Column("rated_until", sa.DateTime(timezone=True), nullable=False),
    )
    _queues_to_trees(op.get_bind())
    op.drop_index("ix_queued_moves_board", table_name="queued_moves")
    op.drop_table("queued_moves")


def _queues_to_trees(bind: sa.Connection) -> None:
    """Each player's queued moves on a board as the lines of one tree."""
    queued = sa.table(
        "queued_moves",
        sa.column("id"),
        sa.column("board"),
        sa.column("userid"),
        sa.column("move_text"),
        sa.column("if_move"),
        sa.column("created_at"),
    )
    boards = sa.table("games", sa.column("board"), sa.column("game"), sa.column("position"))
    trees = sa.table(
        "move_trees",
        sa.column("board"),
        sa.column("userid"),
        sa.column("lines"),
        sa.column("created_at"),
    )
    rows = bind.execute(
        sa.select(
            queued.c.board,
            queued.c.userid,
            queued.c.move_text,
            queued.c.if_move,
            queued.c.created_at,
            boards.c.game,
            boards.c.position,
        )
        .select_from(queued.join(boards, boards.c.board == queued.c.board))
        .order_by(queued.c.board, queued.c.userid, queued.c.id)
    ).all()
    found: dict[tuple[int, str], tuple[dict[str, str], Any]] = {}
    for row in rows:
        answers, _ = found.setdefault((row.board, row.userid), ({}, row.created_at))
        key = ANY if row.if_move is None else _canonical(row.game, row.position, row.if_move)
        if key not in answers and len(answers) < MAX_LINES:
            answers[key] = row.move_text
    for (board, userid), (answers, created_at) in found.items():
        lines = json.dumps([[k, v] for k, v in answers.items()], separators=(",", ":"))
        bind.execute(
            sa.insert(trees).values(board=board, userid=userid, lines=lines, created_at=created_at)
        )


def _canonical(game: str, position: str, move: str) -> str:
    """The opponent's move as the board writes it once played (as written, when the
    rules no longer read it: it then matches no move, and the tree is dropped)."""
    try:
        return games.get(game).load(position).play(move)[1]
    except Exception:  # a game no longer installed, a move no longer legal
        return move


def downgrade() -> None:
    op.create_table(
        "queued_moves",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("board", sa.Integer(), sa.ForeignKey("games.board"), nullable=False),
        sa.Column("userid", sa.String(), sa.ForeignKey("players.userid"), nullable=False),
        sa.Column("move_text", sa.String(), nullable=False),
        sa.Column("if_move", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_queued_moves_board", "queued_moves", ["board"])
    bind = op.get_bind()
    trees = sa.table(
        "move_trees",
        sa.column("id"),
        sa.column("board"),
        sa.column("userid"),
        sa.column("lines"),
        sa.column("created_at"),
    )
    queued = sa.table(
        "queued_moves",
        sa.column("board"),
        sa.column("userid"),
        sa.column("move_text"),
        sa.column("if_move"),
        sa.column("created_at"),
    )
    # A tree's first answers become queued moves; what follows them has no place there.
    for row in bind.execute(sa.select(trees).order_by(trees.c.id)).all():
        firsts = dict.fromkeys((line[0], line[1]) for line in json.loads(row.lines))
        for line in firsts:
            bind.execute(
                sa.insert(queued).values(
                    board=row.board,
                    userid=row.userid,
                    move_text=line[1],
                    if_move=None if line[0] == ANY else line[0],
                    created_at=row.created_at,
                )
            )
    op.drop_table("rating_periods")
    op.drop_table("glicko_ratings")
    op.drop_index("ix_digests_next_at", table_name="digests")
    op.drop_table("digests")
    op.drop_index("ix_move_trees_board", table_name="move_trees")
    op.drop_table("move_trees")
