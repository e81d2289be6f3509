"""Hex game records in SGF (FF[4], GM[11]), as HexGui writes and reads them.

Written::

    (;FF[4]GM[11]AP[pbm]SZ[13]RU[swap]EV[pbm correspondence game]
    GN[board 12]PC[pbm@example.org]DT[2026-11-27]PB[anna]PW[bert]RE[W+R]
    ;B[f6];W[swap-pieces];B[g7]C[the comment]...)

- Red, who moves first, is SGF's Black (``B``, ``PB``) and Blue is White
  (``W``, ``PW``), as HexGui has it: its Black joins north and south.
- A move is the cell as pbm writes it, ``B[c3]``: HexGui's own coordinates
  (column letter, row number from the top), not Go's two letters. The swap
  is ``W[swap-pieces]``, HexGui's name for the very same rule (the stone is
  mirrored and changes colour; Red moves next).
- ``RE``: ``B+`` or ``W+`` for a connection, ``+R`` for a resignation and
  ``+T`` for a forfeit (SGF's loss on time: pbm forfeits a player who does
  not move in time); no ``RE`` while the game goes on.
- ``RU[swap]`` or ``RU[no swap]``: whether the board played with the swap
  rule (HexGui keeps the property and ignores it). ``DT`` is the day the
  game started; comments go into ``C`` of their move's node.

Read with sgfmill's SGF grammar (``sgf_grammar``), as UTF-8: the first
game tree in the text, a game of Hex from the empty board (the main line
when it has variations), with HexGui's cells or Little Golem's Go-style
pairs (``B[cb]`` is c2), ``swap``/``swap-pieces``, and ``resign`` as a
move. The tags read are the root's properties, with ``size`` (from
``SZ``), ``swap`` (from ``RU``) and ``Game`` added for the replay. The
format recognizes an SGF game tree of Hex (``GM[11]``, or no ``GM``);
pbm's text record of a Hex game is the shell's to read
(``pbm.usecases.records.replay``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from sgfmill import sgf_grammar

from pbm.games import RESULTS, GameRecord, ReadRecord, RecordedMove, Termination

__all__ = ["SGF", "SgfFormat", "read_sgf", "write_sgf"]

EVENT = "pbm correspondence game"
SWAP_PIECES = "swap-pieces"  # HexGui's word for the swap
_COLOURS = ("B", "W")  # by seat: Red is SGF's Black
_LINE = 72  # HexGui breaks its lines there
_CELL = re.compile(r"^[a-z][0-9]{1,2}$")
_GAME = re.compile(r"\bGM\s*\[\s*(\d+)\s*\]")  # the root's game: 11 is Hex, 1 Go
_GO_POINT = re.compile(r"^[a-z][a-z]$")  # Little Golem's: column, then row as a letter
_ENDINGS = {
    "r": Termination.RESIGN,
    "resign": Termination.RESIGN,
    "t": Termination.FORFEIT,
    "time": Termination.FORFEIT,
    "f": Termination.FORFEIT,
    "forfeit": Termination.FORFEIT,
}

Node = dict[str, list[str]]


def _value(text: str) -> str:
    return "[" + text.replace("\\", "\\\\").replace("]", "\\]") + "]"


def _result(record: GameRecord) -> str | None:
    if record.result == "*":
        return None
    if record.result == RESULTS[None]:
        return "0"
    winner = _COLOURS[0] if record.result == RESULTS[0] else _COLOURS[1]
    letters = {str(Termination.RESIGN): "R", str(Termination.FORFEIT): "T"}
    how = letters.get(record.termination or "", "")
    return f"{winner}+{how}"


def write_sgf(record: GameRecord) -> str:
    """The game as an SGF collection of one game tree."""
    size = record.options.get("size", "13")
    root = [
        ("FF", "4"),
        ("GM", "11"),
        ("AP", "pbm"),
        ("SZ", size),
        ("RU", "no swap" if record.options.get("swap") == "off" else "swap"),
        ("EV", EVENT),
        ("GN", f"board {record.board}"),
        ("PC", record.site),
        ("DT", record.started.strftime("%Y-%m-%d")),
        ("PB", record.players[0]),
        ("PW", record.players[1]),
    ]
    result = _result(record)
    if result is not None:
        root.append(("RE", result))
    # Properties, each node's first after its ";", laid into lines as HexGui lays them.
    pieces = [f"{key}{_value(value)}" for key, value in root]
    pieces[0] = ";" + pieces[0]
    for move in record.moves:
        colour = _COLOURS[(move.ply - 1) % 2]
        point = SWAP_PIECES if move.notation == "swap" else move.notation
        pieces.append(f";{colour}{_value(point)}")
        if move.comment:
            pieces.append(f"C{_value(move.comment)}")
    lines = ["("]
    for piece in pieces:
        if len(lines[-1]) + len(piece) > _LINE:
            lines.append("")
        lines[-1] += piece
    lines[-1] += ")"
    return "\n".join(lines) + "\n"


def _nodes(text: str) -> list[Node]:
    """The main line's nodes of the first game tree, values read out of their escapes."""
    try:
        tree = sgf_grammar.parse_sgf_game(text.encode("utf-8", "surrogateescape"))
    except ValueError as exc:
        raise ValueError(f"the SGF record cannot be read: {exc}") from None
    raw: list[dict[str, list[bytes]]] = list(sgf_grammar.main_sequence_iter(tree))
    return [{name: [_text(v) for v in values] for name, values in node.items()} for node in raw]


def _text(raw: bytes) -> str:
    """A property's value: escapes undone, line breaks kept (a comment's are collapsed)."""
    value: bytes = sgf_grammar.text_value(raw)
    return value.decode("utf-8", "replace")


def _point(value: str, ply: int) -> str:
    """A move's value as pbm writes the move: ``c3``, ``swap``, or ``resign``."""
    point = value.strip().lower()
    if point in ("swap", SWAP_PIECES):
        return "swap"
    if point == "resign":
        return point
    if _CELL.match(point):
        return point
    if _GO_POINT.match(point):
        return f"{point[0]}{ord(point[1]) - ord('a') + 1}"
    if point == "swap-sides":
        raise ValueError(
            f"move {ply} swaps sides (swap-sides): pbm's swap moves the stone "
            "(swap-pieces), so the record cannot be replayed here"
        )
    raise ValueError(f"move {ply} ({value!r}) is not a cell, swap or resign")


def _ending(value: str) -> tuple[str | None, str | None]:
    """``RE``'s result and termination."""
    said = value.strip()
    if said.lower() in ("0", "draw", "jigo"):
        return RESULTS[None], None
    colour, plus, how = said.partition("+")
    if not plus or colour.upper() not in _COLOURS:
        return None, None  # "?", "Void", or words: the moves decide
    return RESULTS[_COLOURS.index(colour.upper())], _ENDINGS.get(how.strip().lower())


def read_sgf(text: str) -> ReadRecord:
    """The root's properties, the moves with their comments, the result and how the game
    ended, of the first game tree in ``text``; ``ValueError`` saying why not."""
    nodes = _nodes(text)
    tags = {name: values[0] for name, values in nodes[0].items()}
    game = tags.get("GM", "11").strip()
    if game != "11":
        raise ValueError(f"the SGF record is of game {game} (GM[{game}]), not of Hex (GM[11])")
    size = tags.get("SZ", "").strip()
    if ":" in size:
        width, _, height = size.partition(":")
        if width != height:
            raise ValueError(f"SZ[{size}]: pbm plays Hex on square boards only")
        size = width
    tags |= {"Game": "Hex", **({"size": size} if size else {})}
    rules = tags.get("RU", "").lower()
    if "swap" in rules:
        tags["swap"] = "off" if re.search(r"\bno\s*-?\s*swap", rules) else "on"
    result, termination = _ending(tags.get("RE", ""))
    moves: list[RecordedMove] = []
    for node in nodes:
        if {"AB", "AW", "AE"} & node.keys():
            raise ValueError("set-up stones (AB, AW, AE) are not read: pbm replays from the start")
        played = [colour for colour in _COLOURS if colour in node]
        if not played:
            continue
        ply = len(moves) + 1
        colour = played[0]
        due = _COLOURS[(ply - 1) % 2]
        if len(played) > 1 or colour != due:
            who = "Red's" if due == _COLOURS[0] else "Blue's"
            raise ValueError(f"move {ply} is {colour}[...] where {due}[...] ({who}) was due")
        point = _point(node[colour][0], ply)
        if point == "resign":  # HexGui's resignation, as a move: the other side wins
            result, termination = RESULTS[1 - _COLOURS.index(colour)], Termination.RESIGN
            break
        moves.append(RecordedMove(ply, point, " ".join(node.get("C", [""])[0].split())))
    return ReadRecord(tags, tuple(moves), result, termination)


class SgfFormat:
    """SGF as a record format of Hex: ``pbm archive --format sgf``, ``rules replay``."""

    name = "sgf"
    suffix = "sgf"
    media_type = "application/x-hex-sgf"

    def write(self, record: GameRecord) -> str:
        return write_sgf(record)

    def read(self, text: str) -> ReadRecord:
        return read_sgf(text)

    def recognizes(self, tags: Mapping[str, str]) -> bool:
        return tags.get("GM", "").strip() == "11"

    def recognizes_text(self, text: str) -> bool:
        """An SGF game tree of Hex: ``GM[11]``, or no ``GM`` where the game is named."""
        if not text.lstrip().startswith("("):
            return False
        game = _GAME.search(text)
        return game is None or game.group(1) == "11"


SGF = SgfFormat()
