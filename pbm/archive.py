"""Finished games -> game records (text or JSON) on disk; records read back by ``pbm.record``.

The text record is what ``pbm rules replay`` reads: PGN-like tag lines, then
the numbered moves with comments in braces, then the result. A game may
have record formats of its own (``Game.record_formats``), written from the
``GameRecord`` the protocol defines. A game is marked archived when its
record is written (it stays in the database).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from pbm import games
from pbm.games import GameRecord, RecordedMove
from pbm.usecases.changes import BoardChange
from pbm.usecases.site import Site
from pbm.usecases.world import GAMES, Board, World

FORMATS = ("text", "json")


class NoRecordFormat(ValueError):
    """A format the board's game has no records in; ``title`` names the game."""

    def __init__(self, title: str, fmt: str) -> None:
        super().__init__(f"{title} has no {fmt} record format")
        self.title = title


def formats() -> tuple[str, ...]:
    """Every record format: text and JSON for every game, then the games' own."""
    own = {f.name for name in games.names() for f in games.record_formats(games.get(name))}
    return FORMATS + tuple(sorted(own - set(FORMATS)))


@dataclass(frozen=True)
class ArchivedGame:
    board: int
    path: Path


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
        "White": board.white,
        "Black": board.black,
        "Started": _date(board.created_at),
        "Ended": _date(board.ended_at or board.last_move_at or board.created_at),
        "Result": board.result or "*",
        "Termination": board.termination or "",
    }
    if board.options:
        t["Option"] = " ".join(f"{k}={v}" for k, v in sorted(board.options.items()))
    return t


def record_text(board: Board) -> str:
    """The text record of a game."""
    lines = [f'[{k} "{v}"]' for k, v in tags(board).items()]
    lines.append("")
    for mv in board.moves:
        comment = _clean_comment(mv.comment)
        entry = mv.notation + (f" {{{comment}}}" if comment else "")
        if mv.ply % 2 == 1:
            lines.append(f"{(mv.ply + 1) // 2}. {entry}")
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


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def record_path(out_dir: Path, game: str, number: int, suffix: str) -> Path:
    """Where the record of a game is written in ``out_dir``, by its file ending."""
    return out_dir / f"{game}-board-{number}.{suffix}"


def suffix_of(game: str, fmt: str) -> str:
    """The file ending of ``fmt`` records of ``game`` (a format it lacks: the name)."""
    if fmt == "json":
        return "json"
    if fmt == "text":
        return "txt"
    own = games.record_format(games.get(game), fmt)
    return own.suffix if own is not None else fmt


def pending_boards(
    site: Site, since: datetime | None = None, out_dir: Path | None = None, fmt: str = "text"
) -> list[int]:
    """Finished games (ended on or after ``since``) to archive, oldest first.

    Those not yet archived, and (given ``out_dir``) those archived before whose
    record in ``fmt`` is not in ``out_dir``: archived as text, a game is still
    archived as JSON.
    """
    stmt = sa.select(GAMES.c.board, GAMES.c.game, GAMES.c.archived_at).where(
        GAMES.c.status == "finished"
    )
    if out_dir is None:
        stmt = stmt.where(GAMES.c.archived_at.is_(None))
    if since is not None:
        ended = sa.func.coalesce(GAMES.c.ended_at, GAMES.c.last_move_at, GAMES.c.created_at)
        stmt = stmt.where(ended >= since)
    with site.db.read() as session:
        rows = session.execute(stmt.order_by(GAMES.c.board)).all()
    return [
        int(board)
        for board, game, archived_at in rows
        if archived_at is None
        or (
            out_dir is not None
            and not record_path(out_dir, game, board, suffix_of(game, fmt)).exists()
        )
    ]


def archive_board(site: Site, number: int, out_dir: Path, fmt: str) -> ArchivedGame:
    """Write one finished game's record and mark it archived (it stays queryable)."""
    with site.db.transaction() as session:
        now = site.clock()
        board = World(session, site.config, now, lock=True).board(number)
        if board.status != "finished":
            raise ValueError(f"board {number} is not a finished game")
        text, suffix = record_in(board, fmt, site.config.mail.address)
        path = record_path(out_dir, board.game, number, suffix)
        _write_atomically(path, text)
        if board.archived_at is None:  # the first record of it: a later one keeps the date
            BoardChange(board, replace(board, archived_at=now)).save(session)
    return ArchivedGame(number, path)
