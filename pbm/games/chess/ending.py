"""How a chess game ends: by the rules on its own, or by a player's claim.

Checkmate, stalemate, insufficient material, fivefold repetition and the
75-move rule end the game by themselves (FIDE Laws 5.1, 5.2, 9.6). A
threefold repetition or the fifty-move rule only entitle a player to claim
a draw (9.2, 9.3). python-chess judges all of them; this module words its
verdicts for the ``pbm.games`` protocol.
"""

from __future__ import annotations

import chess

from pbm.games import IllegalMove, Outcome
from pbm.games.chess.words import colour

CHECKMATE = "checkmate"
STALEMATE = "stalemate"
INSUFFICIENT_MATERIAL = "insufficient material"
FIVEFOLD_REPETITION = "fivefold repetition"
SEVENTY_FIVE_MOVES = "75-move rule"
THREEFOLD_REPETITION = "threefold repetition"
FIFTY_MOVES = "fifty-move rule"

_TERMINATIONS = {
    chess.Termination.CHECKMATE: CHECKMATE,
    chess.Termination.STALEMATE: STALEMATE,
    chess.Termination.INSUFFICIENT_MATERIAL: INSUFFICIENT_MATERIAL,
    chess.Termination.FIVEFOLD_REPETITION: FIVEFOLD_REPETITION,
    chess.Termination.SEVENTYFIVE_MOVES: SEVENTY_FIVE_MOVES,
}


def seat_of(side: chess.Color) -> int:
    """The protocol's seat of a python-chess colour: 0 White, 1 Black."""
    return 0 if side == chess.WHITE else 1


def outcome_of(board: chess.Board) -> Outcome | None:
    """The game's end by the rules alone (no claims), or None while it goes on."""
    ended = board.outcome()
    if ended is None:
        return None
    winner = None if ended.winner is None else seat_of(ended.winner)
    return Outcome(winner, _TERMINATIONS[ended.termination])


def claimable(board: chess.Board) -> str | None:
    """The draw a player may claim in this very position, or None.

    Judged on the position on the board only: threefold repetition when it
    stands for the third time, the fifty-move rule when 50 moves by each side
    have been played without a capture or pawn move. (python-chess's
    ``can_claim_*`` also count a repetition the side to move could make with
    its next move; a player who means that writes the move followed by
    ``claim``, and the claim is judged after it.)
    """
    if board.is_repetition(3):
        return THREEFOLD_REPETITION
    if board.is_fifty_moves():
        return FIFTY_MOVES
    return None


def claim(board: chess.Board) -> Outcome:
    """The draw claimed in this position; ``IllegalMove`` saying why there is none."""
    ended = outcome_of(board)
    if ended is not None:
        raise IllegalMove(f"the game is over: {over(ended)}")
    found = claimable(board)
    if found is not None:
        return Outcome(None, found)
    raise IllegalMove(refuse_claim(board))


def refuse_claim(board: chess.Board) -> str:
    """Why no draw can be claimed here, with how far each rule still is."""
    times = "twice" if board.is_repetition(2) else "once"
    clock = board.halfmove_clock
    played = f"{clock // 2}" + (" and a half" if clock % 2 else "")
    text = (
        f"there is no draw to claim: this position has occurred {times}, not three times, "
        "and the fifty-move rule needs 50 moves by each side without a capture or pawn move; "
        f"{played} have been played"
    )
    if board.can_claim_threefold_repetition() or board.can_claim_fifty_moves():
        text += (
            f". {colour(board.turn)} can reach a claimable position with the next move: "
            "write that move followed by claim"
        )
    return text


def over(outcome: Outcome) -> str:
    """``White won (checkmate)``, ``drawn (stalemate)``: for "the game is over: ..."."""
    if outcome.winner is None:
        return f"drawn ({outcome.termination})"
    return f"{('White', 'Black')[outcome.winner]} won ({outcome.termination})"


def verdict(outcome: Outcome) -> str:
    """``White wins: checkmate``, ``Draw: stalemate``: the diagram's status line."""
    if outcome.winner is None:
        return f"Draw: {outcome.termination}"
    return f"{('White', 'Black')[outcome.winner]} wins: {outcome.termination}"
