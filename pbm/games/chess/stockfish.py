"""The computer player's chess moves, from Stockfish, a UCI engine of its own.

The one module of the chess package that runs a program: python-chess's
``chess.engine`` starts Debian's ``stockfish`` for one move. The level sets
its ``Skill Level`` (0 to 20) and the time it may take, never more than the
shell gives it (the site's ``computer.seconds_per_move``). It is called in
the computer's thinking process (``ChessState.computer_move``), never while
a mail is worked out.
"""

from __future__ import annotations

import os
import shutil

import chess
import chess.engine

PROGRAM = "stockfish"
SKILL = {1: 0, 2: 5, 3: 10, 4: 15, 5: 20}  # Stockfish's "Skill Level" by our level
SECONDS = {1: 0.1, 2: 0.5, 3: 1.0, 4: 3.0}  # its time a move (level 5: all it has)


def find() -> str | None:
    """Where Stockfish is installed (Debian puts games in /usr/games), if it is."""
    return shutil.which(PROGRAM, path=os.pathsep.join((os.environ.get("PATH", ""), "/usr/games")))


def stockfish_move(board: chess.Board, level: int, seconds: float) -> str:
    """Stockfish's move in ``board`` at ``level`` (1-5), in SAN."""
    program = find()
    if program is None:
        raise RuntimeError(f"no chess engine is installed here ({PROGRAM})")
    limit = chess.engine.Limit(time=min(SECONDS.get(level, seconds), seconds))
    with chess.engine.SimpleEngine.popen_uci(program) as engine:
        engine.configure({"Skill Level": SKILL[level]})
        played = engine.play(board, limit)
    if played.move is None:
        raise RuntimeError("Stockfish found no move")
    return board.san(played.move)
