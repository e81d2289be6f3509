"""Finished games -> game records (text or JSON); records read back by ``pbm.record``.

The text record is what ``pbm rules replay`` reads: PGN-like tag lines, then
the numbered moves with comments in braces, then the result.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import col, select

from pbm import games, store


@dataclass(frozen=True)
class ArchivedGame:
    board: int
    path: Path


def _date(value: datetime | None) -> str:
    return value.strftime("%Y.%m.%d") if value else "?"


def _clean_comment(text: str) -> str:
    # Braces and parentheses would open or close a comment in the record.
    return " ".join(text.translate(str.maketrans("{}()", "[][]")).split())


def tags(game: store.Game) -> dict[str, str]:
    """The record's tag pairs, in order."""
    title = games.get(game.game).title
    t = {
        "Game": title,
        "Variant": game.variant,
        "Board": str(game.board),
        "White": game.white,
        "Black": game.black,
        "Started": _date(game.created_at),
        "Ended": _date(game.ended_at or game.last_move_at or game.created_at),
        "Result": game.result or "*",
        "Termination": game.termination or "",
    }
    if game.options:
        t["Option"] = " ".join(f"{k}={v}" for k, v in sorted(game.options.items()))
    return t


def record_text(game: store.Game, moves: Sequence[store.Move]) -> str:
    """The text record of a game."""
    lines = [f'[{k} "{v}"]' for k, v in tags(game).items()]
    lines.append("")
    for mv in moves:
        comment = _clean_comment(mv.comment)
        entry = mv.notation + (f" {{{comment}}}" if comment else "")
        if mv.ply % 2 == 1:
            lines.append(f"{(mv.ply + 1) // 2}. {entry}")
        else:  # White moves first, so Black's move joins White's line
            lines[-1] += f" {entry}"
    lines.append(game.result or "*")
    return "\n".join(lines) + "\n"


def record_json(game: store.Game, moves: Sequence[store.Move]) -> str:
    """The JSON record of a game: its tags and every move with player, time and comment."""
    data = {
        "tags": tags(game),
        "moves": [
            {
                "ply": mv.ply,
                "player": mv.userid,
                "notation": mv.notation,
                "text": mv.text,
                "comment": mv.comment,
                "time": mv.created_at.isoformat(),
            }
            for mv in moves
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


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


def pending_boards(db: store.Database, since: datetime | None = None) -> list[int]:
    """Finished games not yet archived (ended on or after ``since``), oldest first."""
    with db.transaction() as s:
        stmt = select(store.Game.board).where(
            store.Game.status == "finished", col(store.Game.archived_at).is_(None)
        )
        if since is not None:
            stmt = stmt.where(
                sa.func.coalesce(
                    store.Game.ended_at, store.Game.last_move_at, store.Game.created_at
                )
                >= since
            )
        return [b for b in s.exec(stmt.order_by(col(store.Game.board))).all() if b is not None]


def archive_board(
    db: store.Database, board: int, out_dir: Path, fmt: str, now: datetime
) -> ArchivedGame:
    """Write one finished game's record and mark it archived (it stays queryable)."""
    with db.transaction() as s:
        game = s.get(store.Game, board)
        if game is None or game.status != "finished":
            raise ValueError(f"board {board} is not a finished game")
        moves = s.exec(
            select(store.Move).where(store.Move.board == board).order_by(col(store.Move.ply))
        ).all()
        text = record_json(game, moves) if fmt == "json" else record_text(game, moves)
        path = out_dir / f"{game.game}-board-{board}.{'json' if fmt == 'json' else 'txt'}"
        _write_atomically(path, text)
        game.archived_at = now
        s.add(game)
    return ArchivedGame(board, path)


def archive(
    db: store.Database,
    out_dir: Path,
    fmt: str = "text",
    since: datetime | None = None,
    now: datetime | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ArchivedGame]:
    """Archive every finished game not yet archived; returns what was written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for board in pending_boards(db, since):
        done.append(archive_board(db, board, out_dir, fmt, now or store.utc_now()))
        if progress is not None:
            progress(1)
    return done
