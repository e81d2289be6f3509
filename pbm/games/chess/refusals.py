"""Why a move is refused, in a chess player's words.

python-chess says only that a move is illegal or ambiguous; these functions
look at the position (with python-chess's own move generator and attack
maps) to say why: the king would be in check, no such piece can reach the
square, the piece is not yours, castling is not allowed and why, a
promotion lacks its piece, or which moves an ambiguous one could mean.
"""

from __future__ import annotations

import chess

from pbm.games.chess.words import either, pieces


def _home(board: chess.Board, kingside: bool) -> tuple[chess.Square, chess.Square, int]:
    """The king's and the rook's home squares of the side to move, and its back rank."""
    rank = 0 if board.turn == chess.WHITE else 7
    return chess.square(4, rank), chess.square(7 if kingside else 0, rank), rank


def is_castling_path(board: chess.Board, origin: chess.Square, target: chess.Square) -> bool:
    """Whether a king move from ``origin`` to ``target`` can only mean castling."""
    king_home, _, rank = _home(board, kingside=True)
    return origin == king_home and target in (chess.square(6, rank), chess.square(2, rank))


def _lost_right(board: chess.Board, king_home: chess.Square, rook_home: chess.Square) -> str:
    """Why the right to castle on one side is gone, from the moves played."""
    for move in board.move_stack:
        # The first move from the king's square is the king's: nothing else stood there.
        if move.from_square == king_home:
            return "your king has moved"
        if move.from_square == rook_home:
            return f"your rook on {chess.square_name(rook_home)} has moved"
        if move.to_square == rook_home:
            return f"your rook on {chess.square_name(rook_home)} has been taken"
    return "this position gives you no right to castle on that side"


def castling(board: chess.Board, *, kingside: bool) -> str:
    """Why castling (``O-O`` when ``kingside``, else ``O-O-O``) is not allowed."""
    side = "kingside" if kingside else "queenside"
    head = f"you cannot castle {side}"
    king_home, rook_home, rank = _home(board, kingside)
    if not board.castling_rights & chess.BB_SQUARES[rook_home]:
        return f"{head}: {_lost_right(board, king_home, rook_home)}"
    if board.is_check():
        return f"{head} while your king is in check (from {pieces(board, board.checkers())})"
    between = (5, 6) if kingside else (1, 2, 3)
    blockers = [chess.square(f, rank) for f in between if board.piece_at(chess.square(f, rank))]
    if blockers:
        verb = "is" if len(blockers) == 1 else "are"
        return f"{head}: {pieces(board, blockers)} {verb} in the way"
    enemy = not board.turn
    crossed = chess.square(5 if kingside else 3, rank)
    attackers = board.attackers(enemy, crossed)
    if attackers:
        verb = "attacks" if len(attackers) == 1 else "attack"
        return (
            f"{head}: your king would pass through {chess.square_name(crossed)}, "
            f"which {pieces(board, attackers)} {verb}"
        )
    landing = chess.square(6 if kingside else 2, rank)
    attackers = board.attackers(enemy, landing)
    if attackers:
        return (
            f"{head}: your king would be in check on {chess.square_name(landing)} "
            f"from {pieces(board, attackers)}"
        )
    return f"{head} here"


def _san_filter(
    board: chess.Board, san: str
) -> tuple[chess.PieceType, chess.Bitboard, chess.Square, chess.PieceType | None, str] | None:
    """What a SAN move names, read as python-chess reads it.

    The piece type, the squares it may come from, the target, the promotion
    piece and words for the origin (`` on the b-file``); None if no SAN at all.
    """
    m = chess.SAN_REGEX.match(san)
    if m is None:
        return None
    letter, file, rank, target_name, promotion = m.groups()
    piece_type = chess.PIECE_SYMBOLS.index(letter.lower()) if letter else chess.PAWN
    target = chess.parse_square(target_name)
    from_mask = board.pieces_mask(piece_type, board.turn)
    where = ""
    if file:
        from_mask &= chess.BB_FILES[chess.FILE_NAMES.index(file)]
        where = f" on the {file}-file"
    if rank:
        from_mask &= chess.BB_RANKS[int(rank) - 1]
        where = f" on {file}{rank}" if file else f" on rank {rank}"
    if piece_type == chess.PAWN and not file:
        # SAN names the file a pawn captures from; without it the pawn goes straight.
        from_mask &= chess.BB_FILES[chess.square_file(target)]
    promoted = chess.PIECE_SYMBOLS.index(promotion[-1].lower()) if promotion else None
    return piece_type, from_mask, target, promoted, where


def ambiguous(board: chess.Board, san: str) -> str:
    """``Nd2 is ambiguous: write Nbd2 or Nfd2``."""
    found = _san_filter(board, san)
    if found is None:
        return f"{san} is ambiguous"
    piece_type, from_mask, target, promotion, _ = found
    candidates = [
        board.san(move)
        for move in board.generate_legal_moves(from_mask, chess.BB_SQUARES[target])
        if board.piece_type_at(move.from_square) == piece_type and move.promotion == promotion
    ]
    return f"{san} is ambiguous: write {either(sorted(candidates))}"


def illegal_san(board: chess.Board, san: str) -> str:
    """Why the SAN move ``san`` (read, but refused by python-chess) is not legal."""
    found = _san_filter(board, san)
    if found is None:
        return f"{san} is not a legal move here"
    piece_type, from_mask, target, promotion, where = found
    return illegal(board, san, piece_type, from_mask, target, promotion, where=where)


def illegal(
    board: chess.Board,
    written: str,
    piece_type: chess.PieceType,
    from_mask: chess.Bitboard,
    target: chess.Square,
    promotion: chess.PieceType | None,
    *,
    origin: chess.Square | None = None,
    where: str = "",
) -> str:
    """Why no legal move takes a ``piece_type`` from ``from_mask`` to ``target``.

    ``origin``: the move named its square (long algebraic, coordinates);
    ``where`` words the SAN's origin file or rank.
    """
    name = chess.piece_name(piece_type)
    target_name = chess.square_name(target)
    if promotion == chess.KING:
        return "a pawn cannot be promoted to a king: choose Q, R, B or N"
    reaching = [
        move
        for move in board.generate_pseudo_legal_moves(from_mask, chess.BB_SQUARES[target])
        if board.piece_type_at(move.from_square) == piece_type
    ]
    if not reaching:
        return _cannot_reach(board, name, piece_type, target, origin, where)
    matching = [move for move in reaching if move.promotion == promotion]
    if not matching:
        if promotion is not None:
            return f"only a pawn reaching the last rank is promoted, and {written} is no such move"
        legal = [board.san(move) for move in reaching if board.is_legal(move)]
        if legal:
            return f"a pawn reaching {target_name} must be promoted: write {either(legal)}"
        matching = reaching
    return _into_check(board, written, matching[0])


def _cannot_reach(
    board: chess.Board,
    name: str,
    piece_type: chess.PieceType,
    target: chess.Square,
    origin: chess.Square | None,
    where: str,
) -> str:
    target_name = chess.square_name(target)
    occupant = board.piece_at(target)
    if occupant is not None and occupant.color == board.turn:
        return f"{target_name} is taken by your own {chess.piece_name(occupant.piece_type)}"
    if origin is not None:
        why = f"the {name} on {chess.square_name(origin)} cannot move to {target_name}"
    elif not board.pieces_mask(piece_type, board.turn):
        why = f"you have no {name} left"
    else:
        why = f"no {name} of yours{where} can reach {target_name}"
    # A hint for a forgotten or wrong piece letter: what does go there.
    to_target = board.generate_legal_moves(to_mask=chess.BB_SQUARES[target])
    others = sorted(board.san(m) for m in to_target)
    if others:
        why += f" (legal moves to {target_name}: {', '.join(others)})"
    return why


def _into_check(board: chess.Board, written: str, move: chess.Move) -> str:
    """Why ``move``, pseudo-legal, is illegal: it leaves or puts the own king in check."""
    after = board.copy(stack=False)
    after.push(move)
    king = after.king(board.turn)
    attackers = pieces(after, after.attackers(after.turn, king)) if king is not None else ""
    if board.is_check():
        return (
            f"your king is in check from {pieces(board, board.checkers())}, "
            f"and {written} does not get it out of check"
            + (f" ({attackers} would still give check)" if attackers else "")
        )
    if board.piece_type_at(move.from_square) == chess.KING:
        target = chess.square_name(move.to_square)
        return f"your king would be in check on {target} from {attackers}"
    origin = chess.square_name(move.from_square)
    name = chess.piece_name(board.piece_type_at(move.from_square) or chess.PAWN)
    if board.is_pinned(board.turn, move.from_square):
        return (
            f"the {name} on {origin} is pinned: {written} would leave your king "
            f"in check from {attackers}"
        )
    return f"{written} would leave your king in check from {attackers}"
