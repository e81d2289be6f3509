"""Game records in PGN, written and read with python-chess's ``chess.pgn``.

``write_pgn`` gives the Seven Tag Roster (Event, Site, Date, Round, White,
Black, Result) and then:

- ``Board``: the server's board number;
- ``Mode``: ``EM`` (PGN standard 9.6.2: electronic mail);
- ``TimeControl``: the board's time control in the PGN standard's form
  (9.6.1): ``1/S`` for a move within S seconds (classic, days per move),
  ``S+I`` for a Fischer bank, ``M/S`` for ICCF's M moves in S seconds;
- ``Termination``: the PGN standard's word: ``normal`` for checkmate,
  stalemate, draws by rule or agreement and resignation, ``time forfeit``
  for a forfeit, ``unterminated`` while the game goes on;
- ``TerminationDetails``: the server's own words (``checkmate``,
  ``threefold repetition``, ``resign``...), which ``Termination`` loses;
- ``EndDate``: the day the game ended; ``PlyCount``: the half-moves played.

The moves are SAN, each player's comment in ``{...}`` after the move.

``read_pgn`` reads a game back (any PGN of a game from the standard
position, and pbm's own text records, which are PGN-like), and ``PGN`` is
the record format the chess game declares (``Game.record_formats``).
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from datetime import datetime

import chess
import chess.pgn

from pbm.games import GameRecord, ReadRecord, RecordedMove, Termination
from pbm.games.chess.words import colour, move_number

EVENT = "pbm correspondence game"
TERMINATION_DETAILS = "TerminationDetails"
# The Seven Tag Roster: a record naming no game but carrying these is PGN.
ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
# The PGN standard's Termination words (8.2.5), which say too little to replay by:
# but a forfeit, how the game ended is left to the moves and the result.
_PGN_TERMINATIONS = {
    "abandoned": None,
    "adjudication": None,
    "death": None,
    "emergency": None,
    "normal": None,
    "rules infraction": None,
    "time forfeit": Termination.FORFEIT,
    "unterminated": None,
}

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
    return "time forfeit" if record.termination == Termination.FORFEIT else "normal"


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
    h["TimeControl"] = record.time_control or (
        f"1/{record.forfeit_days * 86400}" if record.forfeit_days > 0 else "-"
    )
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


def read_pgn(text: str) -> ReadRecord:
    """The tags, the SAN moves with their comments, the result and how it ended of the first
    game in ``text``.

    ``termination`` is the ``TerminationDetails`` tag pbm writes, else the
    ``Termination`` tag as pbm words it (``forfeit`` for ``time forfeit``;
    None for the PGN words that leave it to the moves, such as ``normal``).
    Raises ``ValueError`` for text with no PGN game in it, for a game that
    starts from a set-up position, and for a move that is not legal, naming
    the move by its number.
    """
    game = chess.pgn.read_game(io.StringIO(text), Visitor=_QuietBuilder)
    if game is None:
        raise ValueError("no PGN game found: the text is empty")
    board = game.board()
    if board.fen() != chess.STARTING_FEN:
        raise ValueError(f"the PGN game starts from a set-up position ({board.fen()})")
    moves: list[RecordedMove] = []
    for node in game.mainline():
        moves.append(RecordedMove(len(moves) + 1, board.san(node.move), node.comment))
        board.push(node.move)
    if game.errors:
        raise ValueError(_error_text(game.errors[0], board))
    has_tags = re.search(r'^\s*\[\s*\w+\s+"', text, re.MULTILINE) is not None
    if not moves and not has_tags:
        raise ValueError("no PGN game found: neither tags nor moves")
    tags = dict(game.headers)
    result = tags.get("Result", "*")
    return ReadRecord(tags, tuple(moves), None if result == "*" else result, _ending(tags))


def _ending(tags: Mapping[str, str]) -> str | None:
    details = tags.get(TERMINATION_DETAILS, "").strip()
    if details:
        return details
    said = tags.get("Termination", "").strip()
    if not said:
        return None
    return _PGN_TERMINATIONS.get(said.lower(), said)


class PgnFormat:
    """PGN as a record format of the chess game: ``pbm archive --format pgn``, ``rules replay``."""

    name = "pgn"
    suffix = "pgn"
    media_type = "application/x-chess-pgn"  # the type chess programs read

    def write(self, record: GameRecord) -> str:
        return write_pgn(record)

    def read(self, text: str) -> ReadRecord:
        return read_pgn(text)

    def recognizes(self, tags: Mapping[str, str]) -> bool:
        return all(tag in tags for tag in ROSTER)


PGN = PgnFormat()


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
