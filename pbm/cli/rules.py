"""``pbm rules``: the game rules from the command line (no database)."""

from __future__ import annotations

import click


@click.group()
def rules() -> None:
    """Legal moves, perft, diagrams and replays of game records."""
