"""Reading chess moves as correspondence players write them.

Read: SAN (``e4``, ``Nf3``, ``exd5``, ``O-O``, ``0-0-0``, ``e8=Q``, ``e8Q``,
``Qxf7#``; ``Kg1`` from e1 for castling), long algebraic (``e2-e4``,
``Ng1-f3``, ``e7xd8=Q``, ``Nb1xc3``, ``Ke1-g1`` for castling) and
coordinates as UCI writes them (``e2e4``, ``e7e8q``, ``e1g1``). Tolerated on
top: annotations (``+ # ! ? !? e.p.``), a closing ``.``, ``,`` or ``;``, a
move number in front (``1.e4``, ``12...Nf6``), ``:`` or ``×`` for a capture,
typographic dashes, lower-case piece letters (``nf3``), a pawn's ``P``
(``Pe2-e4``), figurines (``♘f3``) and the German piece letters S L T D
(``Sf3`` = ``Nf3``, ``e8=D`` = ``e8=Q``).

This module only cleans the text and chooses python-chess's parser
(``parse_san`` or ``parse_uci``); the rules, and so every verdict, are
python-chess's. ``refusals`` words the reason when a move is refused.
"""

from __future__ import annotations

import re

import chess

from pbm.games import BadNotation, IllegalMove
from pbm.games.chess import refusals
from pbm.games.chess.words import colour

_TRANSLATE = str.maketrans(
    {
        "×": "x",
        ":": "x",
        "–": "-",
        "—": "-",
        "−": "-",
        "‐": "-",
        "♔": "K",
        "♚": "K",
        "♕": "Q",
        "♛": "Q",
        "♖": "R",
        "♜": "R",
        "♗": "B",
        "♝": "B",
        "♘": "N",
        "♞": "N",
        "♙": "",
        "♟": "",
        "†": "+",
        "‡": "#",
    }
)
_SPACES = re.compile(r"\s+")
_MOVE_NUMBER = re.compile(r"^[0-9]+\.+")
# Check and mate marks, annotation glyphs, an en passant note and closing punctuation.
_SUFFIX = re.compile(r"(?:[+#!?.,;]|e\.p\.|ep)+$")
_CASTLING = re.compile(r"[O0o]-[O0o](-[O0o])?")
_GERMAN = str.maketrans({"S": "N", "L": "B", "T": "R", "D": "Q"})
# Coordinates with capitals (E2E4, e7-E8Q): SAN writes squares in small letters. Not B1b2,
# which is SAN: the bishop on rank 1 to b2.
_UPPER_COORDINATES = re.compile(
    r"(?:[A-Ha-h][1-8][-x]?[A-H][1-8]|[AC-H][1-8][-x]?[a-h][1-8])(?:=?[QRBNKqrbnk])?"
)
_UPPER_SQUARE = re.compile(r"[A-H][1-8]")  # E4: a pawn move written in capitals

# What is left of a move once ``normalize`` has cleaned it: castling, or a
# target square with an optional piece letter, origin file and/or rank,
# capture or dash, and promotion piece.
_SHAPE = re.compile(r"O-O(?:-O)?|[KQRBN]?[a-h]?[1-8]?[-x]?[a-h][1-8](?:=?[QRBNKqrbnk])?")
# The forms naming the origin square: long algebraic and coordinates.
_FROM_TO = re.compile(r"([KQRBN])?([a-h][1-8])[-x]?([a-h][1-8])=?([QRBNKqrbnk])?")
_KING_TO = re.compile(r"Kx?([a-h][1-8])")

EXAMPLES = "e4, Nf3, exd5, O-O, e8=Q, Ng1-f3 or e2e4"
# A move with a square that is none (e9, i4, Nb0): named as such, not read as text.
_NEAR_SHAPE = re.compile(r"[KQRBN]?[a-i]?[0-9]?[-x]?[a-i][0-9](?:=?[QRBNKqrbnk])?")
_SQUARE_LIKE = re.compile(r"[a-i][0-9]")


def normalize(text: str) -> str:
    """The move text cleaned to the letters python-chess reads (or to a non-move)."""
    s = _SPACES.sub("", text.translate(_TRANSLATE))
    s = _MOVE_NUMBER.sub("", s)
    s = _SUFFIX.sub("", s)
    castling = _CASTLING.fullmatch(s)
    if castling is not None:
        return "O-O-O" if castling.group(1) else "O-O"
    if _UPPER_COORDINATES.fullmatch(s) or _UPPER_SQUARE.fullmatch(s):
        return s.lower()
    if s[:1] == "P" and len(s) > 2:  # a pawn written with its letter
        s = s[1:]
    if s[:1] in ("S", "L", "T", "D"):
        s = s[0].translate(_GERMAN) + s[1:]
    if len(s) > 2 and s[-1] in "SLTD" and s[-2] in "=12345678":
        s = s[:-1] + s[-1].translate(_GERMAN)
    if s[:1] in ("n", "r", "q", "k"):  # no file has these letters: a piece written small
        s = s[0].upper() + s[1:]
    return s


def looks_like_move(text: str) -> bool:
    """Whether ``text`` has the shape of a chess move in any notation read here (or would,
    but for a square that is none: the refusal names it)."""
    written = normalize(text)
    return _SHAPE.fullmatch(written) is not None or _NEAR_SHAPE.fullmatch(written) is not None


# A move number as PGN writes it before a move: "12." (White's), "12..." (Black's).
_NUMBER = re.compile(r"^[0-9]+\.+")
_RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "*"})


def line_moves(text: str) -> tuple[str, ...]:
    """The moves of a line as PGN writes it (``12...Nf6 13.e5 Nd5 14.c4``): the move
    numbers (``13.``, ``12...``, alone or before a move) and a result are no moves."""
    moves = []
    for word in text.split():
        move = _NUMBER.sub("", word)
        if move and move not in _RESULTS:
            moves.append(move)
    return tuple(moves)


def parse_move(board: chess.Board, text: str) -> chess.Move:
    """The legal move ``text`` stands for on ``board``.

    Raises ``BadNotation`` for text that is no chess move, ``IllegalMove``
    with the reason for a move the rules refuse (or an ambiguous one).
    """
    written = normalize(text)
    if _SHAPE.fullmatch(written) is None:
        for square in _SQUARE_LIKE.findall(written):
            if square[0] > "h" or not "1" <= square[1] <= "8":
                raise BadNotation(
                    f"{square} is not a square of the board: files a to h, ranks 1 to 8 "
                    f"(write a move like {EXAMPLES})"
                )
        raise BadNotation(f"{text.strip()!r} is not a chess move: write it like {EXAMPLES}")
    if written.startswith("O-O"):
        kingside = written == "O-O"
        try:
            return board.parse_san(written)
        except chess.IllegalMoveError:
            raise IllegalMove(refusals.castling(board, kingside=kingside)) from None
    from_to = _FROM_TO.fullmatch(written) or _king_to_castle(board, written)
    if from_to is not None:
        return _parse_from_to(board, written, from_to)
    return _parse_san(board, written)


def _king_to_castle(board: chess.Board, written: str) -> re.Match[str] | None:
    """``Kg1`` (or ``Kc1``) with the king on e1: castling, read as ``Ke1-g1``."""
    m = _KING_TO.fullmatch(written)
    king = board.king(board.turn)
    if m is None or king is None:
        return None
    target = chess.parse_square(m.group(1))
    if not refusals.is_castling_path(board, king, target):
        return None
    return _FROM_TO.fullmatch(f"K{chess.square_name(king)}{m.group(1)}")


def _parse_from_to(board: chess.Board, written: str, m: re.Match[str]) -> chess.Move:
    """Long algebraic and coordinates: python-chess's UCI reader, after the piece letter."""
    letter, origin_name, target_name, promotion = m.groups()
    origin = chess.parse_square(origin_name)
    target = chess.parse_square(target_name)
    piece = board.piece_at(origin)
    if piece is None:
        raise IllegalMove(f"there is no piece on {origin_name}")
    if piece.color != board.turn:
        raise IllegalMove(
            f"the {chess.piece_name(piece.piece_type)} on {origin_name} is not yours: "
            f"you play {colour(board.turn)}"
        )
    if letter is not None and letter.lower() != piece.symbol().lower():
        wrote = chess.piece_name(chess.PIECE_SYMBOLS.index(letter.lower()))
        raise IllegalMove(
            f"there is your {chess.piece_name(piece.piece_type)} on {origin_name}, not a {wrote}"
        )
    promoted = chess.PIECE_SYMBOLS.index(promotion.lower()) if promotion else None
    if promoted == chess.KING:
        raise IllegalMove("a pawn cannot be promoted to a king: choose Q, R, B or N")
    uci = origin_name + target_name + (promotion.lower() if promotion else "")
    try:
        move = board.parse_uci(uci)
    except chess.IllegalMoveError:
        if piece.piece_type == chess.KING and refusals.is_castling_path(board, origin, target):
            raise IllegalMove(
                refusals.castling(board, kingside=chess.square_file(target) > 4)
            ) from None
        raise IllegalMove(
            refusals.illegal(
                board,
                written,
                piece.piece_type,
                chess.BB_SQUARES[origin],
                target,
                promoted,
                origin=origin,
            )
        ) from None
    if not move:  # python-chess reads 0000 as a null move; _SHAPE keeps it out, but be sure
        raise BadNotation(f"{written!r} is not a chess move: write it like {EXAMPLES}")
    return move


def _parse_san(board: chess.Board, written: str) -> chess.Move:
    """SAN, and a small b for a bishop when the pawn reading fails (``bc4``)."""
    spellings = [written]
    if written.startswith("b") and len(written) > 2:
        spellings.append("B" + written[1:])
    first_error: IllegalMove | None = None
    for san in spellings:
        try:
            move = board.parse_san(san)
        except chess.AmbiguousMoveError:
            raise IllegalMove(refusals.ambiguous(board, san)) from None
        except (chess.IllegalMoveError, chess.InvalidMoveError):
            if first_error is None:
                first_error = IllegalMove(refusals.illegal_san(board, san))
            continue
        if move:
            return move
    assert first_error is not None  # one spelling at least was tried
    raise first_error
