"""Game records in PGN, written and read with python-chess's ``chess.pgn``.

``write_pgn`` gives the Seven Tag Roster (Event, Site, Date, Round, White,
Black, Result) and then:

- ``Board``: the server's board number;
- ``Mode``: ``EM`` (PGN standard 9.6.2: electronic mail);
- ``TimeControl``: ``1/S`` where S is the board's forfeit time in seconds:
  one move per S seconds, the PGN spelling of "a move within N days"
  (``-`` when the board has no forfeit time);
- ``Termination``: the PGN standard's word: ``normal`` for checkmate,
  stalemate, draws by rule or agreement and resignation, ``time forfeit``
  for a forfeit, ``unterminated`` while the game goes on;
- ``TerminationDetails``: the server's own words (``checkmate``,
  ``threefold repetition``, ``resign``...), which ``Termination`` loses;
- ``EndDate``: the day the game ended; ``PlyCount``: the half-moves played.

The moves are SAN, each player's comment in ``{...}`` after the move.
"""

from __future__ import annotations

import io
import re
from datetime import datetime

import chess
import chess.pgn

from pbm.games import FORFEIT, GameRecord
from pbm.games.chess.words import colour, move_number

EVENT = "pbm correspondence game"
TERMINATION_DETAILS = "TerminationDetails"

# A comment may not close its braces early; python-chess would silently drop a "}".
_BRACES = str.maketrans("{}", "()")
_QUOTED = re.compile(r"'([^']*)'")


def _comment(text: str) -> str:
    return " ".join(text.translate(_BRACES).split())


def _date(value: datetime) -> str:
    return value.strftime("%Y.%m.%d")


def _termination(record: GameRecord) -> str:
    if record.result == "*":
        return "unterminated"
    return "time forfeit" if record.termination == FORFEIT else "normal"


def write_pgn(record: GameRecord) -> str:
    """The game as PGN text; ``ValueError`` if a recorded move is not legal in turn."""
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = EVENT
    h["Site"] = record.site
    h["Date"] = _date(record.started)
    h["Round"] = "-"
    h["White"], h["Black"] = record.players
    h["Result"] = record.result
    h["Board"] = str(record.board)
    h["Mode"] = "EM"
    h["TimeControl"] = f"1/{record.forfeit_days * 86400}" if record.forfeit_days > 0 else "-"
    h["Termination"] = _termination(record)
    if record.termination:
        h[TERMINATION_DETAILS] = record.termination
    if record.ended is not None:
        h["EndDate"] = _date(record.ended)
    h["PlyCount"] = str(len(record.moves))
    board = game.board()
    node: chess.pgn.GameNode = game
    for recorded in record.moves:
        try:
            move = board.parse_san(recorded.notation)
        except ValueError:
            raise ValueError(
                f"move {recorded.ply} of board {record.board}, {recorded.notation!r}, "
                "is not legal in the position it was recorded in"
            ) from None
        board.push(move)
        node = node.add_variation(move, comment=_comment(recorded.comment))
    return str(game) + "\n"


def read_pgn(text: str) -> tuple[dict[str, str], list[str], str | None]:
    """The tags, the SAN moves and the result (None for ``*``) of the first game in ``text``.

    Raises ``ValueError`` for text with no PGN game in it, and for a move
    that is not legal, naming the move by its number.
    """
    game = chess.pgn.read_game(io.StringIO(text), Visitor=_QuietBuilder)
    if game is None:
        raise ValueError("no PGN game found: the text is empty")
    moves: list[str] = []
    board = game.board()
    for move in game.mainline_moves():
        moves.append(board.san(move))
        board.push(move)
    if game.errors:
        raise ValueError(_error_text(game.errors[0], board))
    has_tags = re.search(r'^\s*\[\s*\w+\s+"', text, re.MULTILINE) is not None
    if not moves and not has_tags:
        raise ValueError("no PGN game found: neither tags nor moves")
    tags = dict(game.headers)
    result = tags.get("Result", "*")
    return tags, moves, None if result == "*" else result


class _QuietBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder without its log line: the error is raised to the caller."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def _error_text(error: Exception, board: chess.Board) -> str:
    """The first error python-chess met, placed at the move where reading stopped."""
    number = move_number(board)
    quoted = _QUOTED.search(str(error))
    token = quoted.group(1) if quoted else "?"
    if isinstance(error, chess.AmbiguousMoveError):
        why = "is ambiguous"
    elif isinstance(error, chess.IllegalMoveError):
        why = "is not legal"
    elif isinstance(error, chess.InvalidMoveError):
        why = "is not a move"
    else:
        return f"the PGN game cannot be read at move {number}: {error}"
    return f"move {number} {token} ({colour(board.turn)}'s) {why} in the PGN game"
