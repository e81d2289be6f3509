"""The newcomer's session, replayed: fifteen mails of ordinary mistakes, then a correct move
by password. Once the error allowance ran out after eight minutes and the rest was dropped
in silence; now what could be understood is carried out, the mistakes are answered, the
challenge that came meanwhile arrives, the lock after five password typos is told once,
and the correct move is played and answered. Through the real inbox runner, SQLite and
PostgreSQL, with a settable clock."""

from __future__ import annotations

from conftest import Clock, accepted
from test_forgiving_reading import reply_address, send
from test_inbox_runner import mails_to, make_runner, moves_on, run

from pbm.config import Config
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site

CAROL, ALICE = "carol@example.org", "alice@example.org"


def legal(site: Site, board: int) -> str:
    return str(queries.board(site, board).state.legal_moves()[0])


def alice_moves(site: Site, board: int) -> None:
    unit.run(site, Move(board, legal(site, board)), Who("alice", Password("pw")))


def test_the_newcomer_session(db: Database, config: Config, clock: Clock, site: Site) -> None:
    board = accepted(site, Challenge("accasta", "alice", "carol", sender=ALICE))
    alice_moves(site, board)
    runner = make_runner(db, config, clock)
    mine = reply_address(config, board, "carol")
    server = config.mail.address

    def mail(to: str, text: str, **headers: str) -> None:
        send(db, clock, CAROL, to, text, **headers)
        clock.advance(seconds=30)
        run(runner)

    def last_board_mail() -> str:
        return [m for m in mails_to(db, CAROL) if m.board == board][-1].message_id

    # 1-2: typos in commands: each answered with what is wrong.
    mail(server, "acasta show 1", subject="board please")
    mail(server, f"accasta shwo {board}", subject="board please")
    # 3-4: a move with a full stop, and with words around it, by reply: played.
    mail(mine, f"{legal(site, board)}.")
    alice_moves(site, board)
    mail(mine, f"My move: {legal(site, board)}")
    alice_moves(site, board)
    # 5: replied to the From address, not the Reply-To: played (it answers her board mail).
    mail(server, legal(site, board), subject="Re: your board", In_Reply_To=last_board_mail())
    alice_moves(site, board)
    # 6-7: asks for help, then replies a move to the help mail: played.
    mail(server, "help", subject="help")
    helped = mails_to(db, CAROL)[-1]
    assert helped.subject == "pbm - help"
    mail(server, legal(site, board), subject="Re: pbm - help", In_Reply_To=helped.message_id)
    assert moves_on(db, board) == 8  # alice's four and carol's four
    alice_moves(site, board)
    # Meanwhile bob challenges her.
    unit.run(site, Challenge("accasta", "bob", "carol", sender="bob@example.org"))
    # 8-12: five typos in her password: refused, and the account is locked.
    for _ in range(5):
        mail(server, f"accasta move {board} carol pW {legal(site, board)}", subject="move")
    # 13: "OK, accept" to bob's challenge, by reply: accepted (no password needed).
    challenge = next(m for m in mails_to(db, CAROL) if "challenge from bob" in m.subject)
    assert challenge.board is not None
    mail(reply_address(config, challenge.board, "carol"), "OK, accept")
    assert queries.board(site, challenge.board).status == "active"
    # 14-15: a thank-you with no command, and a stray word: answered, no harm.
    mail(mine, "Thanks, this is fun!")
    mail(server, "hello?", subject="?")
    # The lock was told once, with when it ends and how to reset the password (in the
    # answer to the mail that made it: one mail in, one mail out).
    told = [m for m in mails_to(db, CAROL) if "wrong passwords for your account" in m.body]
    assert len(told) == 1
    assert "password reset carol" in " ".join(told[0].body.split())
    # After the lock's time, the correct move by password is played and answered.
    clock.advance(minutes=16)
    before = moves_on(db, board)
    mail(server, f"accasta move {board} carol pw {legal(site, board)}", subject="move")
    assert moves_on(db, board) == before + 1
    assert mails_to(db, CAROL)[-1].board == board  # her board mail
    # Every one of her fifteen mails and the last got an answer: nothing dropped.
    with db.read() as s:
        from pbm.store import inbox

        assert inbox.counts(s).get("done", 0) >= 16
    answered = {m.in_reply_to for m in mails_to(db, CAROL) if m.in_reply_to}
    assert len(answered) >= 15
