"""Chess, with python-chess as the rules engine.

``notation`` reads moves and ``refusals`` says why one is refused;
``ending`` knows how a game ends and which draws may be claimed;
``diagram`` draws the board; ``pgn`` writes and reads game records (the
game's own record format, ``pbm archive --format pgn``); ``help``
is the text of ``help chess``. Every rule is python-chess's: this package
only translates between it and the ``pbm.games`` protocol. ``CHESS`` is the
game as the server sees it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import chess
import chess.svg

from pbm.games import IllegalMove, Option, Outcome, RecordFormat, check_declared_options
from pbm.games.chess import ending
from pbm.games.chess.diagram import render
from pbm.games.chess.help import HELP
from pbm.games.chess.notation import line_moves, looks_like_move, parse_move
from pbm.games.chess.pgn import PGN
from pbm.games.chess.stockfish import PROGRAM, stockfish_move

__all__ = ["CHESS", "STANDARD", "Chess", "ChessState"]

STANDARD = "standard"


def _attr(text: str) -> str:
    """``text`` for an XML attribute."""
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


@dataclass(frozen=True, slots=True)
class ChessState:
    """A game of chess: the starting position and the moves played from it.

    The moves, not just the position, are the state: threefold and fivefold
    repetition look back over them. ``board`` is the position they lead to,
    built once and never changed afterwards, but for the push and pop by
    which python-chess looks ahead (a SAN's check sign, a claim), which leave
    it as it was: a state is a value, but not one for two threads at once.
    ``ending`` and ``claimable`` are worked out once, when the state is made.
    """

    start: str  # FEN of the starting position
    moves: tuple[str, ...]  # UCI, from the start
    board: chess.Board = field(compare=False, repr=False)
    ending: Outcome | None = field(compare=False, repr=False)
    claimable: str | None = field(compare=False, repr=False)

    @classmethod
    def of(cls, start: str, moves: tuple[str, ...], board: chess.Board) -> ChessState:
        """The state whose position ``board`` is: taken over, not copied, so no one else's."""
        # Judging the end pushes and pops moves on ``board``: safe while no one shares it.
        return cls(start, moves, board, ending.outcome_of(board), ending.claimable(board))

    @property
    def variant(self) -> str:
        return STANDARD

    @property
    def options(self) -> Mapping[str, str]:
        return {}

    @property
    def ply(self) -> int:
        return len(self.moves)

    @property
    def to_move(self) -> int:
        return ending.seat_of(self.board.turn)

    @property
    def outcome(self) -> Outcome | None:
        return self.ending

    def play(self, text: str) -> tuple[ChessState, str]:
        if self.ending is not None:
            raise IllegalMove(f"the game is over: {ending.over(self.ending)}")
        move = parse_move(self.board, text)
        san = self.board.san(move)
        board = self.board.copy()
        board.push(move)
        return ChessState.of(self.start, (*self.moves, move.uci()), board), san

    def legal_moves(self) -> list[str]:
        if self.ending is not None:
            return []
        return sorted(self.board.san(move) for move in self.board.legal_moves)

    def example_move(self) -> str | None:
        if self.ending is not None:
            return None
        move = next(iter(self.board.legal_moves), None)
        return self.board.san(move) if move is not None else None

    def diagram(self, seat: int | None = None, ended: str | None = None) -> str:
        return render(self.board, seat, self.ending, self.claimable, ended)

    def picture(self, seat: int = 0, alt: str = "", last: str = "") -> str:
        """python-chess's own SVG board: flipped for Black, the last move (its own: ``last``
        is not needed) and a check marked (``Game``'s optional picture)."""
        played = chess.Move.from_uci(self.moves[-1]) if self.moves else None
        check = self.board.king(self.board.turn) if self.board.is_check() else None
        drawn = chess.svg.board(
            self.board, orientation=seat == 0, lastmove=played, check=check, size=480
        )
        return drawn.replace("<svg ", f'<svg role="img" aria-label="{_attr(alt)}" ', 1)

    def legend(self, seat: int = 0) -> str:
        """The picture's legend (``Game``'s optional legend): what the board does not say."""
        side = "White's side: rank 1 below" if seat == 0 else "Black's side: rank 8 below"
        return (
            "The last move's two squares are tinted; a king in check is marked red.\n"
            f"Seen from {side}."
        )

    def claim_draw(self) -> Outcome:
        return ending.claim(self.board)

    def computer_move(self, level: int, seed: int, seconds: float) -> str:
        """Stockfish's move at ``level`` within ``seconds`` (the optional computer player of
        the protocol; ``seed`` is not needed: Stockfish at a skill level varies by itself)."""
        return stockfish_move(self.board.copy(), level, seconds)

    def perft(self, depth: int) -> int:
        """The turn sequences of length ``depth`` (the optional perft of the protocol),
        counted on python-chess's board: no SAN written or read. A sequence stops where
        the game ends by the rules (``ending.outcome_of``: ``board.outcome()``)."""
        return _perft(self.board.copy(), depth)

    def can_win(self, seat: int) -> bool:
        """Whether ``seat`` has the material to mate by some series of legal moves: a
        player who runs out of time against one who has not draws (FIDE Laws 6.9)."""
        return not self.board.has_insufficient_material(chess.WHITE if seat == 0 else chess.BLACK)

    def dump(self) -> str:
        return json.dumps(
            {"variant": STANDARD, "start": self.start, "moves": " ".join(self.moves)},
            separators=(",", ":"),
        )

    @property
    def fen(self) -> str:
        """The position in FEN, as analysis programs read it."""
        return self.board.fen()


def _perft(board: chess.Board, depth: int) -> int:
    if depth <= 0:
        return 1
    if board.outcome() is not None:
        return 0
    if depth == 1:
        return board.legal_moves.count()
    count = 0
    for move in board.legal_moves:
        board.push(move)
        count += _perft(board, depth - 1)
        board.pop()
    return count


class Chess:
    """The game of chess for the registry."""

    name = "chess"
    title = "Chess"
    variants: tuple[str, ...] = (STANDARD,)
    options: tuple[Option, ...] = ()
    seat_names: tuple[str, str] = ("White", "Black")
    seat_words: tuple[tuple[str, ...], tuple[str, ...]] = (
        ("white", "weiß", "weiss", "blanc", "blancs", "bianco", "blancas"),
        ("black", "schwarz", "noir", "noirs", "nero", "negras"),
    )
    notation_examples: tuple[str, ...] = ("e4", "Nf3", "O-O", "e7e8q", "Ng1-f3")
    draw_offers = True
    record_formats: tuple[RecordFormat, ...] = (PGN,)
    # The computer player: Stockfish (a program of its own, ``stockfish.py``), weakened
    # through its Skill Level and given a time a move.
    computer_program = PROGRAM
    computer_levels: Mapping[int, str] = {
        1: "Stockfish at skill 0, a tenth of a second a move",
        2: "Stockfish at skill 5, half a second a move",
        3: "Stockfish at skill 10, a second a move",
        4: "Stockfish at skill 15, three seconds a move",
        5: "Stockfish at full strength, its whole time a move",
    }

    def looks_like_move(self, text: str) -> bool:
        return looks_like_move(text)

    def line_moves(self, text: str) -> tuple[str, ...]:
        """A line of moves as PGN writes it: ``12...Nf6 13.e5 Nd5 14.c4``."""
        return line_moves(text)

    def move_number(self, ply: int) -> int:
        """Chess numbers a move pair: plies 1 and 2 are move 1."""
        return (ply + 1) // 2

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        return check_declared_options(self, variant, options)[1]

    def new(
        self, variant: str | None = None, options: Mapping[str, str] | None = None
    ) -> ChessState:
        self.check_options(variant or STANDARD, options or {})
        return ChessState.of(chess.STARTING_FEN, (), chess.Board())

    def load(self, data: str) -> ChessState:
        d = json.loads(data)
        self.check_options(d["variant"], {})
        start = d["start"]
        board = chess.Board(start)
        moves = tuple(d["moves"].split())
        for n, uci in enumerate(moves, 1):
            try:
                move = board.parse_uci(uci)
            except ValueError:
                raise ValueError(f"stored chess game: move {n} ({uci}) is not legal") from None
            if not move:
                raise ValueError(f"stored chess game: move {n} is a null move")
            board.push(move)
        return ChessState.of(start, moves, board)

    def help_text(self) -> str:
        return HELP


CHESS = Chess()
