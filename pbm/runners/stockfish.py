"""Chess moves for the computer player from Stockfish, a UCI engine of its own.

python-chess's ``chess.engine`` runs the program (Debian's ``stockfish``) for
one move: the level sets its ``Skill Level`` (0 to 20) and the time it may
take, never more than the site's ``computer.seconds_per_move``. Called in the
computer's thinking process (``pbm.runners.computer.think``).
"""

from __future__ import annotations

import chess
import chess.engine

SKILL = {1: 0, 2: 5, 3: 10, 4: 15, 5: 20}  # Stockfish's "Skill Level" by our level
SECONDS = {1: 0.1, 2: 0.5, 3: 1.0, 4: 3.0}  # its time a move (level 5: all it has)


def stockfish_move(board: chess.Board, level: int, seconds: float, program: str) -> str:
    """Stockfish's move in ``board`` at ``level``, in SAN."""
    limit = chess.engine.Limit(time=min(SECONDS.get(level, seconds), seconds))
    with chess.engine.SimpleEngine.popen_uci(program) as engine:
        engine.configure({"Skill Level": SKILL[level]})
        played = engine.play(board, limit)
    if played.move is None:
        raise RuntimeError("Stockfish found no move")
    return board.san(played.move)
