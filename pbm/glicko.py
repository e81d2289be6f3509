"""Glicko-2 ratings, beside Elo (``pbm.ratings``): pure arithmetic, no database.

Mark Glickman's "Example of the Glicko-2 system" (2013), step by step: a rating,
its deviation (how sure it is: it shrinks with every game and grows while a
player does not play) and its volatility (how erratic his results are). Games
are rated in rating periods, here one a day (UTC), as correspondence games end
at any hour: every game that ended in a day counts in that day's period, each
player rated against his opponents as they stood when it began.

Everyone starts at 1500, deviation 350, volatility 0.06; the system constant
``TAU`` (0.5) bounds how fast the volatility changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

START_RATING = 1500.0
START_DEVIATION = 350.0
START_VOLATILITY = 0.06
TAU = 0.5
SCALE = 173.7178  # the Glicko-2 scale: (rating - 1500) / SCALE
EPSILON = 0.000001  # the volatility's iteration stops within this


@dataclass(frozen=True, slots=True)
class Glicko:
    """A rating, its deviation and its volatility, on the Glicko scale (1500, 350)."""

    rating: float = START_RATING
    deviation: float = START_DEVIATION
    volatility: float = START_VOLATILITY

    @property
    def mu(self) -> float:
        return (self.rating - START_RATING) / SCALE

    @property
    def phi(self) -> float:
        return self.deviation / SCALE


@dataclass(frozen=True, slots=True)
class Steps:
    """The quantities of one period's rating, as the paper names them (steps 3 to 8)."""

    v: float  # the estimated variance of the rating from the games alone
    delta: float  # the improvement the games show
    volatility: float  # sigma'
    mu: float  # mu'
    phi: float  # phi'


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def steps(player: Glicko, games: Sequence[tuple[Glicko, float]], tau: float = TAU) -> Steps:
    """The paper's steps 3 to 7 for ``player`` after a period of ``games`` (each the
    opponent as he stood when the period began, and the score: 1, 0.5 or 0)."""
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not games:  # step 6 alone: the deviation grows
        return Steps(math.inf, 0.0, sigma, mu, math.sqrt(phi * phi + sigma * sigma))
    inverse_v = 0.0
    total = 0.0
    for opponent, score in games:
        g, e = _g(opponent.phi), _e(mu, opponent.mu, opponent.phi)
        inverse_v += g * g * e * (1.0 - e)
        total += g * (score - e)
    v = 1.0 / inverse_v
    delta = v * total
    new_sigma = _volatility(phi, sigma, v, delta, tau)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    return Steps(v, delta, new_sigma, mu + new_phi * new_phi * total, new_phi)


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (
            x - a
        ) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def rate(player: Glicko, games: Sequence[tuple[Glicko, float]], tau: float = TAU) -> Glicko:
    """``player`` after a rating period of ``games`` (none: his deviation grows)."""
    found = steps(player, games, tau)
    deviation = min(found.phi * SCALE, START_DEVIATION)
    return Glicko(found.mu * SCALE + START_RATING, deviation, found.volatility)


def idle(player: Glicko, periods: int) -> Glicko:
    """``player`` after ``periods`` rating periods without a game: his deviation grows by
    his volatility each (step 6 alone), never past the start's."""
    if periods <= 0:
        return player
    phi = math.sqrt(player.phi**2 + periods * player.volatility**2)
    return Glicko(player.rating, min(phi * SCALE, START_DEVIATION), player.volatility)
