"""A game's records, as values: the text record, the JSON record, the game's own.

The text record is what ``pbm rules replay`` reads: PGN-like tag lines (the
players under the game's names for its seats), then the moves numbered as
the game numbers them (``Game.move_number``: Accasta every turn, chess
pairs) with comments in braces, then the result. A game may have record
formats of its own (``Game.record_formats``, each with its file ending and
media type), written from the ``GameRecord`` the protocol defines. Written
to disk by ``pbm.usecases.records.archive``, mailed by ``pbm.usecases.queries.reading.Records``.
"""

from __future__ import annotations

import json
from datetime import datetime

from pbm import games
from pbm.games import GameRecord, RecordedMove
from pbm.model import Board
from pbm.usecases.clocks import control_of

FORMATS = ("text", "json")
# The media types of the records every game has, by their endings (a game's own format
# names its own).
MEDIA_TYPES = {"txt": "text/plain", "json": "application/json"}


class NoRecordFormat(ValueError):
    """A format the board's game has no records in; ``title`` names the game."""

    def __init__(self, title: str, fmt: str) -> None:
        super().__init__(f"{title} has no {fmt} record format")
        self.title = title


def formats() -> tuple[str, ...]:
    """Every record format: text and JSON for every game, then the games' own."""
    own = {f.name for name in games.names() for f in games.record_formats(games.get(name))}
    return FORMATS + tuple(sorted(own - set(FORMATS)))


def formats_words() -> str:
    """Which games have which record formats, in words: ``text and json for every game;
    pgn for Chess``."""
    own = []
    for name in games.names():
        game = games.get(name)
        names = [f.name for f in games.record_formats(game) if f.name not in FORMATS]
        if names:
            own.append(f"{' and '.join(names)} for {game.title}")
    return "; ".join([f"{' and '.join(FORMATS)} for every game", *own])


def formats_of(board: Board) -> tuple[str, ...]:
    """The record formats of ``board``: text and JSON, then its game's own."""
    return (*FORMATS, *(f.name for f in games.record_formats(board.rules)))


def media_type(game: str, suffix: str) -> str:
    """The media type of a record of ``game`` in a file ending in ``suffix``."""
    if suffix in MEDIA_TYPES:
        return MEDIA_TYPES[suffix]
    own = games.record_formats(games.get(game))
    return next((f.media_type for f in own if f.suffix == suffix), "text/plain")


def _date(value: datetime | None) -> str:
    return value.strftime("%Y.%m.%d") if value else "?"


def _clean_comment(text: str) -> str:
    # Braces and parentheses would open or close a comment in the record.
    return " ".join(text.translate(str.maketrans("{}()", "[][]")).split())


def tags(board: Board) -> dict[str, str]:
    """The record's tag pairs, in order."""
    t = {
        "Game": board.rules.title,
        "Variant": board.variant,
        "Board": str(board.number),
        board.rules.seat_names[0]: board.white,  # the seat that moves first
        board.rules.seat_names[1]: board.black,
        "Started": _date(board.created_at),
        "Ended": _date(board.ended_at or board.last_move_at or board.created_at),
        "Result": board.result or "*",
        "Termination": board.termination or "",
        "TimeControl": control_of(board).spec,
    }
    if board.options:
        t["Option"] = " ".join(f"{k}={v}" for k, v in sorted(board.options.items()))
    return t


def record_text(board: Board) -> str:
    """The text record of a game."""
    lines = [f'[{k} "{v}"]' for k, v in tags(board).items()]
    lines.append("")
    per_turn = board.move_number(2) == 2  # Accasta numbers every turn, chess pairs
    for k, mv in enumerate(board.moves):
        comment = _clean_comment(mv.comment)
        entry = mv.notation + (f" {{{comment}}}" if comment else "")
        if per_turn:
            entry = f"{mv.ply}. {entry}"
        if mv.ply % 2 == 1:
            lines.append(entry if per_turn else f"{(mv.ply + 1) // 2}. {entry}")
        elif k == 0:  # the second seat's, first (Go's White after the handicap stones)
            lines.append(entry if per_turn else f"{mv.ply // 2}... {entry}")
        else:  # the first seat moves first, so the second's move joins its line
            lines[-1] += f" {entry}"
    lines.append(board.result or "*")
    return "\n".join(lines) + "\n"


def record_json(board: Board) -> str:
    """The JSON record of a game: its tags and every move with player, time and comment."""
    data = {
        "tags": tags(board),
        "moves": [
            {
                "ply": mv.ply,
                "player": mv.userid,
                "notation": mv.notation,
                "text": mv.text,
                "comment": mv.comment,
                "time": mv.created_at.isoformat(),
            }
            for mv in board.moves
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def game_record(board: Board, site: str) -> GameRecord:
    """The game as a game's own record format is given it (``site``: the server's address)."""
    return GameRecord(
        game=board.game,
        variant=board.variant,
        options=dict(board.options),
        board=board.number,
        players=board.players,
        started=board.created_at,
        ended=board.ended_at,
        result=board.result or "*",
        termination=board.termination,
        moves=tuple(RecordedMove(m.ply, m.notation, m.comment, m.created_at) for m in board.moves),
        site=site,
        nag_days=board.nag_days,
        forfeit_days=board.forfeit_days,
        time_control=control_of(board).pgn,
    )


def record_in(board: Board, fmt: str, site: str) -> tuple[str, str]:
    """The record of ``board`` in ``fmt`` and its file ending; ``NoRecordFormat`` if none."""
    if fmt == "json":
        return record_json(board), "json"
    if fmt == "text":
        return record_text(board), "txt"
    own = games.record_format(board.rules, fmt)
    if own is None:
        raise NoRecordFormat(board.rules.title, fmt)
    return own.write(game_record(board, site)), own.suffix


def suffix_of(game: str, fmt: str) -> str:
    """The file ending of ``fmt`` records of ``game`` (a format it lacks: the name)."""
    if fmt == "json":
        return "json"
    if fmt == "text":
        return "txt"
    own = games.record_format(games.get(game), fmt)
    return own.suffix if own is not None else fmt
