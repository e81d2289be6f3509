"""Seeded random chess games through the store, the board mails and the PGN archive.

Two hundred and fifty legal games chosen by a seed, of up to 20 plies each
(full-length games are for the property tests of ``test_chess_properties``),
are played on a SQLite site the way the inbox worker plays mail: each round
one move on every board still going, decided on a snapshot and written in
one transaction. Each move is written in SAN, long algebraic or coordinates
at random. Then each game must be what python-chess says: the stored moves
and position, the last board mail's move list and FEN, and the PGN archive
read back by python-chess and replayed by ``pbm rules replay``'s reader.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn
import pytest

from pbm.replies import Reply
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
from pbm.usecases.records import archive
from pbm.usecases.records.replay import parse_record, replay
from pbm.usecases.site import Site

SEED = 20250301
GAMES = 60
LONGEST = 20  # plies: with the games' random lengths, about 600 moves in all
PLAYERS = ("alice", "bob")


@dataclass
class Planned:
    """A game chosen by the seed: the texts to mail, their SAN, the final position."""

    texts: list[str] = field(default_factory=list)
    sans: list[str] = field(default_factory=list)
    final: chess.Board = field(default_factory=chess.Board)
    board: int = 0
    last_mail: Reply | None = None


def planned(rng: random.Random) -> Planned:
    game = Planned()
    for _ in range(rng.randrange(1, LONGEST + 1)):
        if game.final.is_game_over():
            break
        move = rng.choice(list(game.final.legal_moves))
        san = game.final.san(move)
        game.texts.append(rng.choice((san, game.final.lan(move), move.uci())))
        game.sans.append(san)
        game.final.push(move)
    return game


def run_batch(site: Site, requests: list[unit.Request]) -> list[unit.Outcome]:
    """Decide on a snapshot, write in one transaction: the inbox worker's way."""
    with site.db.read() as snapshot:
        decided = unit.decide_all(site, snapshot, requests)
    with site.db.transaction() as session:
        outcomes = unit.write(site, session, decided)
    for outcome in outcomes:
        assert outcome.refused is None, outcome.refused
    return outcomes


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_random_games_round_trip(site: Site, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    games = [planned(rng) for _ in range(GAMES)]
    challenges = [unit.Request(Challenge("chess", *PLAYERS, admin=True)) for _ in games]
    for game, outcome in zip(games, run_batch(site, challenges), strict=True):
        game.board = outcome.replies[0].board or 0
    for ply in range(LONGEST):
        playing = [g for g in games if ply < len(g.texts)]
        if not playing:
            break
        who = Who(PLAYERS[ply % 2], ADMIN)
        requests = [unit.Request(Move(g.board, g.texts[ply]), who) for g in playing]
        for game, outcome in zip(playing, run_batch(site, requests), strict=True):
            game.last_mail = next(r for r in outcome.replies if r.to == "bob@example.org")
    going = [g for g in games if not g.final.is_game_over()]
    run_batch(site, [unit.Request(Resign(g.board), Who("alice", ADMIN)) for g in going])

    ended: dict[str, int] = {}
    for game in games:
        stored = queries.board(site, game.board)
        assert [m.notation for m in stored.moves] == game.sans
        assert stored.state.fen == game.final.fen()  # type: ignore[attr-defined]
        assert stored.status == "finished"
        ended[stored.termination or ""] = ended.get(stored.termination or "", 0) + 1
        assert game.last_mail is not None
        mail = game.last_mail.body
        assert f"FEN: {game.final.fen()}" in mail
        assert f"1. {game.sans[0]}" in mail and game.sans[-1] in mail

        done = archive.archive_board(site, game.board, tmp_path, "pgn")
        text = done.path.read_text(encoding="utf-8")
        read = chess.pgn.read_game(io.StringIO(text))
        assert read is not None and not read.errors
        assert read.end().board().fen() == game.final.fen()
        assert read.headers["Result"] == stored.result
        replayed = replay(parse_record(text))
        assert replayed.state.dump() == stored.state.dump()
        assert (replayed.result, replayed.termination) == (stored.result, stored.termination)
    assert sum(ended.values()) == GAMES and ended["resign"] == len(going)
