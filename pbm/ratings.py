"""Elo ratings, per game and variant: pure arithmetic, no database.

Everyone starts at ``START`` (1500). A player is provisional while he has
fewer than ``PROVISIONAL_GAMES`` (20) rated games and then moves with
``K`` 32; after that with 16. Each player's K comes from his own count of
rated games *before* the game being rated, so the two changes of one game
need not be equal and opposite.

The expected score of A against B is ``1 / (1 + 10 ** ((Rb - Ra) / 400))``.
Rounding: a player's change is ``K * (score - expected)`` rounded to the
nearest whole point, halves away from zero (``+15.5 -> +16``, ``-15.5 ->
-16``); ratings are therefore always whole numbers, which keeps a hand
computation of a league exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

START = 1500
PROVISIONAL_GAMES = 20
K_PROVISIONAL = 32
K_ESTABLISHED = 16


def k_factor(games_played: int) -> int:
    """32 while provisional (fewer than 20 rated games before this one), else 16."""
    return K_PROVISIONAL if games_played < PROVISIONAL_GAMES else K_ESTABLISHED


def expected(rating: int, opponent: int) -> float:
    """The expected score of ``rating`` against ``opponent`` (0 to 1)."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def round_half_away(x: float) -> int:
    """The nearest whole number, halves away from zero (not Python's banker's rounding)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def change(rating: int, opponent: int, games_played: int, score: float) -> int:
    """The rating change of a player scoring ``score`` (1, 0.5 or 0) in one game."""
    return round_half_away(k_factor(games_played) * (score - expected(rating, opponent)))


@dataclass(frozen=True, slots=True)
class Side:
    """One player's rating and rated-game count before a game."""

    rating: int
    games_played: int


def rate(white: Side, black: Side, white_score: float) -> tuple[int, int]:
    """The new ratings of White and Black after a game White scored ``white_score`` in."""
    dw = change(white.rating, black.rating, white.games_played, white_score)
    db = change(black.rating, white.rating, black.games_played, 1.0 - white_score)
    return white.rating + dw, black.rating + db
