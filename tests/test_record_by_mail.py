"""``G record B`` (or a reply ``record``) mails the game's record in every format its game
has, as attachments: text and JSON for every game, PGN for chess. Through the real inbox
worker; the mail is built as the sender builds it and read back with the email package."""

from __future__ import annotations

import email
import io
from email.message import EmailMessage
from email.policy import SMTP, default

import chess.pgn
from conftest import Clock, accepted
from test_forgiving_reading import reply_address, send
from test_inbox_runner import mails_to, make_runner, run

from pbm.config import Config
from pbm.mail.message import build_message
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.records.replay import parse_record, replay
from pbm.usecases.site import Site

ALICE = "alice@example.org"


def files_of(db: Database, config: Config, to: str) -> dict[str, bytes]:
    row = [m for m in mails_to(db, to) if m.attachment][-1]
    msg = email.message_from_bytes(build_message(row, config), policy=default)
    assert isinstance(msg, EmailMessage) and msg.get_content_type() == "multipart/mixed"
    text = msg.get_body(("plain",))
    assert text is not None and "is attached" in text.get_content()
    found = {}
    for part in msg.iter_attachments():
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        found[str(part.get_filename())] = payload
    return found


def test_a_reply_record_mails_the_accasta_records(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    for uid in ("alice", "bob", "alice"):
        move = queries_first_move(site, board)
        unit.run(site, Move(board, move, comment="well"), Who(uid, Password("pw")))
    send(db, clock, ALICE, reply_address(config, board, "alice"), "record")
    run(make_runner(db, config, clock))
    files = files_of(db, config, ALICE)
    assert sorted(files) == [f"accasta-board-{board}.json", f"accasta-board-{board}.txt"]
    record = parse_record(files[f"accasta-board-{board}.txt"].decode())
    assert len(replay(record).canonical) == 3


def test_chess_record_by_mail_includes_a_pgn_python_chess_reads(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    board = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    for uid, move in (("alice", "e4"), ("bob", "e5"), ("alice", "Nf3")):
        unit.run(site, Move(board, move), Who(uid, Password("pw")))
    send(db, clock, ALICE, config.mail.address, f"chess record {board}", subject="records")
    run(make_runner(db, config, clock))
    files = files_of(db, config, ALICE)
    pgn = files[f"chess-board-{board}.pgn"].decode()
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3"]


def queries_first_move(site: Site, board: int) -> str:
    from pbm.usecases import queries

    return str(queries.board(site, board).state.legal_moves()[0])


def test_a_message_without_attachments_is_one_text_part(config: Config) -> None:
    from conftest import Row

    raw = build_message(Row(), config)
    msg = email.message_from_bytes(raw, policy=SMTP)
    assert msg.get_content_type() == "text/plain"
