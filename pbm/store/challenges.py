"""The challenges waiting for an answer (boards ``waiting``), as the limits on them count."""

from __future__ import annotations

from typing import NamedTuple

import sqlalchemy as sa
from sqlmodel import Session

from pbm.store.tables import Game, table

GAMES = table(Game)


class OpenChallenge(NamedTuple):
    """A board that waits for its challenged player: who challenged whom."""

    board: int
    challenger: str
    challenged: str


def open_challenges(session: Session, userid: str) -> list[OpenChallenge]:
    """The challenges ``userid`` sent or was sent that wait for an answer, oldest first."""
    uid = userid.lower()
    stmt = (
        sa.select(GAMES.c.board, GAMES.c.white, GAMES.c.black, GAMES.c.challenger)
        .where(
            GAMES.c.status == "waiting",
            GAMES.c.challenger.is_not(None),
            sa.or_(GAMES.c.white == uid, GAMES.c.black == uid),
        )
        .order_by(GAMES.c.board)
    )
    return [
        OpenChallenge(int(board), str(by), str(black if by == white else white))
        for board, white, black, by in session.execute(stmt)
    ]
