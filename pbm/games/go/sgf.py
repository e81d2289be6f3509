"""Game records in SGF (FF[4], GM[1]), written and read with sgfmill.

``write_sgf`` gives the root properties any Go program reads: GM, FF, CA,
SZ, KM, HA (and the handicap stones as AB), RU (Chinese: area scoring),
PB and PW (Black is the first seat), DT, RE (``B+3.5``, ``W+R`` for a
resignation, ``B+T`` for a game lost on time, ``0`` for jigo, ``Draw`` for
a draw agreed), PC (the server), GN (the board) and EV; then one node a
move, a pass written ``B[]``, each player's comment as C. The scoring
phase's moves (``accept``, ``dead D4 E5``, ``resume``) have no SGF
property: each is a node of its own with the private property ``PBM``
(``PBM[dead D4 E5]``), which other programs skip, and a comment saying it
in words, so that ``pbm rules replay`` plays the whole game again.

``read`` takes SGF, and pbm's own text record of a Go game too (tag lines,
then ``1. D4 2. Q16 ... 41. dead D4 E5``): the format recognizes both (an
SGF game tree of Go, a text record whose tags name Go), as the shell's
reader of text records takes a move for one word. Its tags carry the SGF
root's properties and the game's options by their names (``size``,
``komi``, ``handicap``), which is how a replay finds them. A score (``RE[W+0.5]``)
is the record's own word where the moves stop before the scoring phase, as
a professional game's record does: its result stands (``result_stands``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from sgfmill import sgf

from pbm.games import GameRecord, ReadRecord, RecordedMove, Termination
from pbm.games.go.board import handicap_points
from pbm.games.go.notation import PASS, parse_point, point_name
from pbm.games.go.scoring import komi_text

__all__ = ["SGF", "SgfFormat", "read_record", "write_sgf"]

PRIVATE = "PBM"  # the scoring phase's moves
EVENT = "pbm correspondence game"
_COLOUR_NAMES = {"b": "Black", "w": "White"}
_POINTS = re.compile(r"^by (\d+(?:\.5)?) points?$")
_SCORE = re.compile(r"^([BW])\+(\d+(?:\.\d+)?)$", re.IGNORECASE)
_END_LETTERS = {
    "R": Termination.RESIGN,
    "RESIGN": Termination.RESIGN,
    "T": Termination.FORFEIT,
    "TIME": Termination.FORFEIT,
    "F": Termination.FORFEIT,
    "FORFEIT": Termination.FORFEIT,
}
_RESULTS = {"1-0": "B", "0-1": "W"}
_GAME = re.compile(r"\bGM\s*\[\s*(\d+)\s*\]")  # the SGF root's game: 1 is Go
_GAME_TAG = re.compile(r'^\s*\[\s*Game\s+"go"\s*\]\s*$', re.IGNORECASE | re.MULTILINE)


def _point(text: str, size: int) -> tuple[int, int] | None:
    """The (row, col) of a canonical move, None for a pass; ValueError for any other word."""
    if text == PASS:
        return None
    row, col = divmod(parse_point(text, size), size)
    return row, col


def _sgf_result(record: GameRecord) -> str | None:
    """RE: who won and how, as SGF says it; None while the game goes on."""
    if record.result == "*":
        return None
    winner = _RESULTS.get(record.result)
    how = record.termination or ""
    if winner is None:
        return "Draw" if how == Termination.AGREEMENT else "0"
    by = _POINTS.match(how)
    if by is not None:
        return f"{winner}+{by.group(1)}"
    letter = {str(Termination.FORFEIT): "T", str(Termination.RESIGN): "R"}.get(how, "")
    return f"{winner}+{letter}"


def write_sgf(record: GameRecord) -> str:
    """The game as SGF text; ``ValueError`` for a recorded move that is no Go move."""
    options = record.options
    size = int(options.get("size", "19"))
    handicap = int(options.get("handicap", "0"))
    game = sgf.Sgf_game(size)
    root = game.get_root()
    root.set("KM", float(options.get("komi", "7.5")))
    root.set("RU", "Chinese")
    if handicap:
        root.set("HA", handicap)
        root.set_setup_stones([divmod(p, size) for p in handicap_points(size, handicap)], [])
    root.set("PB", record.players[0])
    root.set("PW", record.players[1])
    root.set("DT", record.started.strftime("%Y-%m-%d"))
    root.set("EV", EVENT)
    root.set("GN", f"board {record.board}")
    root.set("PC", record.site)
    root.set_raw("AP", b"pbm")
    result = _sgf_result(record)
    if result is not None:
        root.set("RE", result)
    for move in record.moves:
        colour = "bw"[(move.ply - 1) % 2]
        node = game.extend_main_sequence()
        comment = move.comment.strip()
        try:
            point = _point(move.notation, size)
        except ValueError:
            node.set(PRIVATE, move.notation)
            said = f"{_COLOUR_NAMES[colour]}: {move.notation}"
            comment = f"{said}\n\n{comment}" if comment else said
        else:
            if point is None:
                node.set_raw(colour.upper(), b"")  # FF[4]'s pass, not sgfmill's "tt"
            else:
                node.set_move(colour, point)
        if comment:
            node.set("C", comment)
    written: bytes = game.serialise()
    return written.decode("utf-8")


def _setup_handicap(root: sgf.Tree_node, size: int, stated: int | None) -> int:
    """The handicap the root's setup stones are; ``ValueError`` for other setups."""
    black, white, empty = root.get_setup_stones()
    if white or empty:
        raise ValueError("the SGF game starts from a set-up position, not from an empty board")
    stones = {r * size + c for r, c in black}
    count = len(stones) if stones else (stated or 0)
    if count == 1 or (stones and stones != set(handicap_points(size, count))):
        raise ValueError(
            "the SGF game's handicap stones are placed freely: only the fixed handicap "
            "(stones on the star points) is played here"
        )
    return count


def read_sgf(text: str) -> ReadRecord:
    """The first game of an SGF text: tags, moves in pbm's notation, result, termination."""
    try:
        game = sgf.Sgf_game.from_string(text)
    except ValueError as exc:
        raise ValueError(f"not an SGF game record: {exc}") from None
    root = game.get_root()
    if root.has_property("GM") and root.get("GM") != 1:
        raise ValueError(f"the SGF game is not Go (GM[{root.get('GM')}])")
    size = game.get_size()
    tags = {p: root.get_raw(p).decode("utf-8", "replace") for p in root.properties()}
    for name in ("PB", "PW", "RE", "DT"):
        if root.has_property(name):
            tags[name] = str(root.get(name))
    handicap = _setup_handicap(root, size, game.get_handicap())
    tags["size"], tags["handicap"] = str(size), str(handicap)
    if root.has_property("KM"):
        tags["komi"] = komi_text(game.get_komi())
    ply = 1 if handicap else 0
    moves: list[RecordedMove] = []
    for node in game.get_main_sequence()[1:]:
        colour, point = node.get_move()
        if node.has_property(PRIVATE):
            notation = str(node.get(PRIVATE))
        elif colour is None:
            continue  # a node with no move: a comment, a mark
        else:
            expected = "bw"[ply % 2]
            if colour != expected:
                raise ValueError(
                    f"move {ply + 1} of the SGF game is {_COLOUR_NAMES[colour]}'s, "
                    f"where {_COLOUR_NAMES[expected]} was to move"
                )
            notation = PASS if point is None else point_name(point[0] * size + point[1], size)
        comment = str(node.get("C")) if node.has_property("C") else ""
        ply += 1
        moves.append(RecordedMove(ply, notation, comment))
    result, termination = _result(tags.get("RE", ""))
    return ReadRecord(tags, tuple(moves), result, termination, _scored(termination))


def _scored(termination: str | None) -> bool:
    """Whether ``termination`` is a count of the board (``by 2.5 points``, jigo): the
    players' own where a record stops before its scoring phase."""
    return termination is not None and (
        _POINTS.match(termination) is not None or termination.startswith("jigo")
    )


def _result(re_value: str) -> tuple[str | None, str | None]:
    """SGF's RE as a result and the words of ``Outcome.termination``."""
    value = re_value.strip()
    if value in ("0", "Jigo", "jigo"):
        return "1/2-1/2", "jigo (equal score)"
    if value.lower() == "draw":
        return "1/2-1/2", Termination.AGREEMENT
    score = _SCORE.match(value)
    if score is not None:
        margin = float(score.group(2))
        words = f"by {margin:g} point" + ("" if margin == 1 else "s")
        return ("1-0" if score.group(1).upper() == "B" else "0-1"), words
    winner, _, how = value.partition("+")
    if winner.upper() in ("B", "W") and _:
        result = "1-0" if winner.upper() == "B" else "0-1"
        return result, _END_LETTERS.get(how.upper())
    return None, None


# pbm's text record of a Go game: tag lines, numbered moves ("12. dead D4 E5"), a result.
_TAG = re.compile(r'^\s*\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
_TOKEN = re.compile(r"\{[^}]*\}|\S+")
_NUMBER = re.compile(r"^(\d+)\.$")
_END_TOKENS = ("1-0", "0-1", "1/2-1/2", "*")


def read_text(text: str) -> ReadRecord:
    """pbm's own text record of a Go game (``pbm archive``'s default format)."""
    tags: dict[str, str] = {}
    body: list[str] = []
    for line in text.splitlines():
        tag = _TAG.match(line)
        if tag is not None:
            tags[tag.group(1)] = tag.group(2).replace('\\"', '"')
        else:
            body.append(line)
    moves: list[RecordedMove] = []
    current: tuple[int, list[str], list[str]] | None = None  # ply, words, comments
    ended = None
    for token in _TOKEN.findall("\n".join(body)):
        number = _NUMBER.match(token)
        if token.startswith("{"):
            if current is not None:
                current[2].append(token[1:-1].strip())
        elif number is not None or token in _END_TOKENS:
            if current is not None:
                moves.append(RecordedMove(current[0], " ".join(current[1]), " ".join(current[2])))
                current = None
            if number is not None:
                current = (int(number.group(1)), [], [])
            else:
                ended = token
        elif current is not None:
            current[1].append(token)
        else:
            raise ValueError(f"the Go record has {token!r} where a numbered move was due")
    if current is not None:
        moves.append(RecordedMove(current[0], " ".join(current[1]), " ".join(current[2])))
    if not moves and not tags:
        raise ValueError("no Go game found: neither SGF nor tags and moves")
    result = tags.get("Result", ended or "*")
    termination = tags.get("Termination") or None
    read = None if result == "*" else result
    return ReadRecord(tags, tuple(moves), read, termination, _scored(termination))


def read_record(text: str) -> ReadRecord:
    """An SGF game, or pbm's text record of a Go game."""
    if text.lstrip().startswith("("):
        return read_sgf(text)
    return read_text(text)


class SgfFormat:
    """SGF as the record format of Go: ``pbm archive --format sgf``, ``pbm rules replay``."""

    name = "sgf"
    suffix = "sgf"
    media_type = "application/x-go-sgf"

    def write(self, record: GameRecord) -> str:
        return write_sgf(record)

    def read(self, text: str) -> ReadRecord:
        return read_record(text)

    def recognizes(self, tags: Mapping[str, str]) -> bool:
        return tags.get("GM") == "1" or tags.get("Game", "").lower() == "go"

    def recognizes_text(self, text: str) -> bool:
        """An SGF game tree of Go (``GM[1]``, or no ``GM``: SGF's default), or pbm's text
        record of a Go game (a ``[Game "Go"]`` tag)."""
        if text.lstrip().startswith("("):
            game = _GAME.search(text)
            return game is None or game.group(1) == "1"
        return _GAME_TAG.search(text) is not None


SGF = SgfFormat()
