"""How a game ends: the result written on the board, queued moves dropped, both players rated.

Every ending goes through ``finish``, whoever decided it: the rules (a
castle taken, checkmate, stalemate), a resignation, a forfeit, a draw
agreed or claimed. The Elo arithmetic is ``pbm.ratings``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from pbm import ratings as elo
from pbm.games import Outcome
from pbm.model import Board, BoardStatus, Standing


def standing(board: Board, userid: str) -> Standing:
    """A player's rating in the board's game and variant (the start rating if none yet)."""
    return board.standings.get(userid) or Standing(userid, float(elo.START), 0)


def finish(board: Board, outcome: Outcome, now: datetime) -> Board:
    """``board`` ended with ``outcome``: finished, its queue gone, both players rated."""
    white, black = standing(board, board.white), standing(board, board.black)
    score = {0: 1.0, 1: 0.0, None: 0.5}[outcome.winner]
    w = elo.Side(elo.round_half_away(white.rating), white.games_played)
    b = elo.Side(elo.round_half_away(black.rating), black.games_played)
    new_w, new_b = elo.rate(w, b, score)
    return replace(
        board,
        status=BoardStatus.FINISHED,
        ended_at=now,
        result=outcome.result(),
        termination=outcome.termination,
        undo_request_by=None,
        cancel_request_by=None,
        draw_offer_by=None,
        queue=(),
        white_rating_before=w.rating,
        white_rating_after=new_w,
        black_rating_before=b.rating,
        black_rating_after=new_b,
        standings={
            board.white: Standing(board.white, float(new_w), white.games_played + 1),
            board.black: Standing(board.black, float(new_b), black.games_played + 1),
        },
    )
