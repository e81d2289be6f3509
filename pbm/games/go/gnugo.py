"""GNU Go over GTP: the dead stones at the end of play, and the computer's moves.

The only module of the Go package that does I/O: it runs Debian's
``gnugo`` (found on PATH or in /usr/games, where Debian puts games) as
``gnugo --mode gtp`` for one question and reads its answers, within a
wall-clock bound (the process is killed past it). Every question is a
fresh process given the position stone by stone with GTP's ``play`` (a
legal position laid down a stone at a time captures nothing, whatever the
order), so no game history is needed; GNU Go then does not know a ko, and
a move of its that our rules refuse is skipped for its next best.

Chinese rules (``--chinese-rules``: area scoring) and the game's komi are
given; a seed makes its choices repeatable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from pbm.games.go.board import BLACK, EMPTY
from pbm.games.go.notation import COLUMNS, PASS

__all__ = ["LEVELS", "PROGRAM", "GtpError", "GtpTimeout", "candidates", "dead_stones", "find"]

PROGRAM = "gnugo"
LEVELS = {1: 1, 2: 3, 3: 5, 4: 8, 5: 10}  # GNU Go's --level (0 to 10) by our level
DEAD_STONES_SECONDS = 8.0  # for final_status_list: players wait for it in their mail
_DEAD_STONES_LEVEL = 1  # its life-and-death reading hardly gains from more


class GtpError(RuntimeError):
    """GNU Go could not answer: not installed, failed, out of time, or made no sense."""


class GtpTimeout(GtpError):
    """GNU Go had not answered when its time was up (it is killed)."""


def find(program: str = PROGRAM) -> str | None:
    """Where ``program`` is installed (on PATH, or in /usr/games), or None."""
    return shutil.which(program, path=os.pathsep.join((os.environ.get("PATH", ""), "/usr/games")))


def _vertex(point: int, size: int) -> str:
    row, col = divmod(point, size)
    return f"{COLUMNS[col]}{row + 1}"


def _point(vertex: str, size: int) -> int:
    letter, number = vertex[0].upper(), int(vertex[1:])
    return (number - 1) * size + COLUMNS.index(letter)


def _setup(grid: str, size: int, komi: float) -> list[str]:
    commands = [f"boardsize {size}", "clear_board", f"komi {komi:g}"]
    for p, stone in enumerate(grid):
        if stone != EMPTY:
            commands.append(f"play {'black' if stone == BLACK else 'white'} {_vertex(p, size)}")
    return commands


def _ask(program: str, commands: Sequence[str], level: int, seconds: float) -> list[str]:
    """GNU Go's answers to ``commands``, the text after each ``=``; ``GtpError`` if it is
    missing, fails a command, or has not finished within ``seconds``."""
    path = find(program) if program else None
    if path is None:
        raise GtpError(f"{program or 'GNU Go'} is not installed")
    script = "\n".join([*commands, "quit"]) + "\n"
    try:
        done = subprocess.run(
            [path, "--mode", "gtp", "--level", str(level), "--chinese-rules"],
            input=script,
            capture_output=True,
            text=True,
            timeout=seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GtpTimeout(f"{program} did not answer within {seconds:g} seconds") from None
    except OSError as exc:
        raise GtpError(f"{program}: {exc}") from None
    answers = [a.strip() for a in done.stdout.replace("\r", "").split("\n\n") if a.strip()]
    if len(answers) != len(commands) + 1:
        raise GtpError(f"{program} gave {len(answers)} answers to {len(commands) + 1} commands")
    for command, answer in zip(commands, answers, strict=False):
        if not answer.startswith("="):
            raise GtpError(f"{program} refused {command!r}: {answer}")
    return [a[1:].strip() for a in answers[:-1]]


def dead_stones(
    grid: str, size: int, komi: float, program: str = PROGRAM, seconds: float = DEAD_STONES_SECONDS
) -> frozenset[int]:
    """The stones GNU Go takes for dead (``final_status_list dead``); ``GtpError`` if it
    cannot say in time."""
    answers = _ask(
        program, [*_setup(grid, size, komi), "final_status_list dead"], _DEAD_STONES_LEVEL, seconds
    )
    try:
        return frozenset(_point(v, size) for v in answers[-1].split())
    except (ValueError, IndexError):
        raise GtpError(f"{program}: not a list of points: {answers[-1]!r}") from None


def candidates(
    grid: str,
    size: int,
    komi: float,
    colour: str,
    level: int,
    seed: int,
    seconds: float,
    program: str = PROGRAM,
    weighed: bool = False,
) -> list[str]:
    """GNU Go's move for ``colour`` at our ``level`` (``D4`` or ``pass``), and with
    ``weighed`` the others it weighed after it (``top_moves``), best first.

    GNU Go is told its time (``time_settings``), seven tenths of ``seconds``, and
    thinks less when it runs short; past three quarters it is stopped and asked again
    at its weakest level with the rest. ``GtpError`` when neither answers."""
    name = "black" if colour == BLACK else "white"
    budget = max(int(seconds * 0.7), 1)
    commands = [
        f"set_random_seed {seed % 2**31}",
        *_setup(grid, size, komi),
        f"time_settings 0 {budget} 1",
        f"time_left {name} {budget} 1",
        f"reg_genmove {name}",
        *([f"top_moves_{name}"] if weighed else []),
    ]
    try:
        answers = _ask(program, commands, LEVELS[level], seconds * 0.75)
    except GtpTimeout:
        answers = _ask(program, commands, 0, seconds * 0.25)
    chosen = answers[len(commands) - (2 if weighed else 1)].upper()
    moves = [PASS if chosen in ("PASS", "RESIGN") else chosen]
    if weighed:
        others = answers[-1].split()[::2]  # vertex, value, vertex, value...
        moves += [v.upper() for v in others if v.upper() not in (*moves, "PASS")]
    return moves
