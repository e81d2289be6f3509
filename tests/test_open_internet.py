"""No spam cannon: the attacks of issue 35 that turned pbm's answers on strangers, each
reproduced as written, through the real inbox runner on SQLite and PostgreSQL.

One mail in gets at most one mail out to its sender; an address that has
confirmed no account gets one answer a day; an address change, a password
reset and a challenge reach their target within limits of their own, and
never spend its owner's answers; what a follower gets is counted; a comment
is bounded; received mail keeps no password once carried out.
"""

from __future__ import annotations

import email
import os
import re
import stat
from email.message import EmailMessage
from email.policy import SMTP, default
from pathlib import Path

import pytest
from conftest import Clock, accepted
from test_inbox_runner import command_mail, deliver, inbox_rows, mails_to, make_runner, run

from pbm import commands
from pbm.config import Config
from pbm.mail.message import build_message
from pbm.refusals import BadRequest
from pbm.store import inbox as inbox_store
from pbm.store.backup import backup
from pbm.store.engine import Database, init_db
from pbm.store.tables import OutboxMessage
from pbm.usecases import queries, unit
from pbm.usecases.accounts import Signup
from pbm.usecases.answers import MAX_ANSWER_BYTES
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import RECEIVED_AT_ONCE, SENT_AT_ONCE, Challenge
from pbm.usecases.moves import MAX_COMMENT_BYTES, Move
from pbm.usecases.site import Site
from pbm.usecases.talk import Subscribe

ALICE, BOB = "alice@example.org", "bob@example.org"
SERVER = "pbm@example.org"
# What one answer may weigh as sent: its text and files (MAX_ANSWER_BYTES), base64 and all.
MESSAGE_BOUND = MAX_ANSWER_BYTES * 4 // 3 + 16 * 1024


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


def sign_up(site: Site, *userids: str) -> None:
    for uid in userids:
        unit.run(site, Signup(uid, f"pw-{uid}", f"{uid}@example.org", confirmed=True))


def mail(db: Database, clock: Clock, sender: str, text: str, mid: str, **headers: str) -> None:
    deliver(db, clock, sender, command_mail(sender, text, mid, **headers))


def sent_size(row: OutboxMessage, config: Config) -> int:
    """The message as it goes out."""
    return len(build_message(row, config))  # type: ignore[arg-type]


def reply_to(db: Database, row: OutboxMessage, config: Config) -> str:
    message = email.message_from_bytes(build_message(row, config), policy=default)  # type: ignore[arg-type]
    return str(message["Reply-To"])


# --- 1: an address change needs confirmation; what a follower gets is counted -----------------


def test_case_01_an_address_change_waits_for_a_reply_from_the_new_address(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    sign_up(site, "spammer")
    spammer = "spammer@example.org"
    victim = "victim9@victim.example"
    runner = make_runner(db, config, clock)
    mail(db, clock, spammer, f"address spammer pw-spammer {victim}", "<a1@x>")
    mail(db, clock, spammer, f"accasta subscribe {board} spammer pw-spammer", "<a2@x>")
    assert run(runner) == 2
    [ask] = mails_to(db, victim)  # one mail asks the new address; no board mail goes there
    assert "confirm the new address of spammer" in ask.subject
    assert ask.kind == "confirm"
    [told] = [m for m in mails_to(db, spammer) if "new address was asked" in m.subject]
    assert victim in told.body and "password" in told.body
    assert any(f"Board {board}" in m.subject for m in mails_to(db, spammer))  # still old one
    # The mail to the new address is answered from somewhere else: nothing changes.
    token = reply_to(db, ask, config)
    answer(db, clock, token, "other@evil.example", "yes", "<a3@x>")
    run(runner)
    assert queries.player(site, "spammer").email == spammer
    # Its owner answers it: the address is changed; both addresses are told.
    answer(db, clock, token, victim, "Yes, that is me.", "<a4@x>")
    run(runner)
    assert queries.player(site, "spammer").email == victim
    assert any("address changed" in m.subject for m in mails_to(db, victim))
    assert any("address changed" in m.subject for m in mails_to(db, spammer))


def answer(db: Database, clock: Clock, to: str, sender: str, text: str, mid: str) -> None:
    """A reply from ``sender`` to the reply address ``to``, as the listener stores it."""
    with db.transaction() as s:
        inbox_store.add(
            s, [inbox_store.Received(raw_to(to, sender, text, mid), sender, [to])], clock()
        )


def raw_to(to: str, sender: str, text: str, mid: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = "Re: your mail"
    msg["Message-ID"] = mid
    msg.set_content(text + "\n")
    return msg.as_bytes(policy=SMTP)


def test_case_01_following_is_limited_and_counted_against_the_follower(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    sign_up(site, "fan")
    most = config.limits.boards_followed
    boards = [
        accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE)) for _ in range(most + 1)
    ]
    for b in boards[:most]:
        unit.run(site, Subscribe(b), Who("fan", Password("pw-fan")))
    with pytest.raises(BadRequest, match=f"You follow {most} boards in play already"):
        unit.run(site, Subscribe(boards[most]), Who("fan", Password("pw-fan")))
    followed = [m for m in mails_to(db, "fan@example.org") if m.board is not None]
    assert followed and all(m.kind == "follower" for m in followed)


# --- 2: one forged mail gets one answer -----------------------------------------------------


SAMPLES = {
    "USERID": "alice",
    "USERID1": "alice",
    "USERID2": "bob",
    "PASSWORD": "wrong",
    "NEW-PASSWORD": "wrong2",
    "EMAIL": "elsewhere@example.org",
    "BOARD": "1",
    "MOVE[#N]": "a1:C+b2",
    "MOVE": "a1:C+b2",
    "DAYS|off|status": "status",
    "html|text": "text",
}


def sample_line(command: commands.grammar.Command) -> str:
    """The command as a forger might write it: every argument given, the options left out."""
    words = []
    for word in command.form("accasta").split():
        if word.startswith("[--") or word.startswith("--") or word.endswith(']"]'):
            continue
        if word.startswith("[") and word.endswith("]"):
            inner = word[1:-1]
            word = SAMPLES.get(inner, "" if inner.startswith("if") else inner.lower())
        elif word.startswith("[") or word.endswith("]"):
            continue  # [if OPPONENT-MOVE]
        else:
            word = SAMPLES.get(word, word)
        if word:
            words.append(word)
    return " ".join(words)


def answers_to(db: Database, address: str) -> list[OutboxMessage]:
    return [m for m in mails_to(db, address)]


@pytest.mark.parametrize(
    "line", [sample_line(c) for c in commands.ALL], ids=[c.name for c in commands.ALL]
)
def test_one_mail_one_answer(
    db: Database, config: Config, clock: Clock, site: Site, board: int, line: str
) -> None:
    """A mail of 50 times one command (every command the grammar declares), from an
    address that has no account: exactly one answer, within the bound."""
    victim = "victim@victim.example"
    mail(db, clock, victim, "\n".join([line] * 50), "<many@x>")
    assert run(make_runner(db, config, clock)) == 1
    answered = answers_to(db, victim)
    assert len(answered) == 1, [m.subject for m in answered]
    assert sent_size(answered[0], config) <= MESSAGE_BOUND


def test_one_mail_one_answer_all_commands_together(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    victim = "victim2@victim.example"
    lines = [sample_line(c) for c in commands.ALL]
    text = "\n".join((lines * 2)[:50])
    mail(db, clock, victim, text, "<all@x>")
    run(make_runner(db, config, clock))
    (answer,) = answers_to(db, victim)
    assert sent_size(answer, config) <= MESSAGE_BOUND
    assert "answers to your mail" in answer.subject
    assert "Only the first 20 commands" in answer.body


def test_case_02_one_forged_mail_of_twenty_commands_gets_one_answer(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    victim = "victim2@victim.example"
    text = "\n".join(
        ["help", f"accasta show {board}", f"accasta record {board}", "games alice"] * 5
    )
    mail(db, clock, victim, text, "<f1@x>")
    run(make_runner(db, config, clock))
    (answer,) = answers_to(db, victim)
    assert sent_size(answer, config) <= MESSAGE_BOUND
    # A stranger's next mail today is carried out, not answered; tomorrow it is again.
    mail(db, clock, victim, "help", "<f2@x>")
    run(make_runner(db, config, clock))
    assert len(answers_to(db, victim)) == 1
    assert "one answer a day" in " ".join(answer.body.split())
    clock.advance(days=1, minutes=1)
    mail(db, clock, victim, "help", "<f3@x>")
    run(make_runner(db, config, clock))
    assert len(answers_to(db, victim)) == 2


def test_case_02_a_planted_comment_and_twenty_records_make_one_small_mail(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    huge = "<>&\"'" * (800_000 // 5)
    legal = queries.view(site, board).state.legal_moves()[0]
    unit.run(site, Move(board, legal, comment=huge), Who("alice", Password("pw")))
    victim = "victim3@victim.example"
    mail(db, clock, victim, "\n".join([f"accasta record {board}"] * 20), "<r@x>")
    run(make_runner(db, config, clock))
    (answer,) = answers_to(db, victim)
    assert sent_size(answer, config) <= MESSAGE_BOUND


# --- 3: password resets ---------------------------------------------------------------------


def test_case_03_strangers_cannot_flood_a_player_with_password_resets(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    sign_up(site, "dave")
    for n in range(4):
        stranger = f"stranger{n}@evil.example"
        mail(db, clock, stranger, "\n".join(["password reset dave"] * 20), f"<s{n}@x>")
    run(make_runner(db, config, clock))
    resets = [m for m in mails_to(db, "dave@example.org") if "reset the password" in m.subject]
    assert len(resets) == 1  # one outstanding at a time
    for n in range(4):
        assert len(answers_to(db, f"stranger{n}@evil.example")) == 1
    # dave's own mail is answered: the resets spent none of his allowance.
    mail(db, clock, "dave@example.org", "help", "<d@x>")
    run(make_runner(db, config, clock))
    assert any(m.subject == "pbm - help" for m in mails_to(db, "dave@example.org"))


def test_case_03_at_most_three_reset_mails_a_day(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    sign_up(site, "dave")
    runner = make_runner(db, config, clock)
    for n in range(4):  # each used at once, so none is outstanding when the next is asked
        mail(db, clock, f"s{n}@evil.example", "password reset dave", f"<r{n}@x>")
        run(runner)
        resets = [m for m in mails_to(db, "dave@example.org") if "reset the pass" in m.subject]
        if n < 3:
            token = reply_to(db, resets[-1], config)
            answer(db, clock, token, "dave@example.org", f"new{n}", f"<u{n}@x>")
            run(runner)
    assert len(resets) == config.limits.password_resets_per_day == 3
    assert "the most a day" in answers_to(db, "s3@evil.example")[-1].body


# --- 5: challenges ---------------------------------------------------------------------------


def test_case_05_a_challenge_flood_does_not_silence_a_player(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    sign_up(site, "mallory")
    for n in range(3):
        text = "\n".join(["accasta challenge mallory carol"] * 20)
        mail(db, clock, "mallory@example.org", text, f"<c{n}@x>")
    run(make_runner(db, config, clock))
    challenges = [m for m in mails_to(db, "carol@example.org") if "challenge" in m.subject]
    assert len(challenges) == 1  # one open challenge a pair
    # carol's own mail is answered: the challenges spent none of her allowance.
    before = len(mails_to(db, "carol@example.org"))
    for n, text in enumerate(("accasta show 1", "help", "vacation carol pw status")):
        mail(db, clock, "carol@example.org", text, f"<own{n}@x>")
    run(make_runner(db, config, clock))
    assert len(mails_to(db, "carol@example.org")) == before + 3


def test_case_05_open_challenges_are_bounded(site: Site) -> None:
    sign_up(site, "mallory", *(f"p{n}" for n in range(RECEIVED_AT_ONCE + 1)))
    for n in range(SENT_AT_ONCE):
        unit.run(site, Challenge("accasta", "mallory", f"p{n}", sender="mallory@example.org"))
    with pytest.raises(BadRequest, match=f"mallory has {SENT_AT_ONCE} challenges waiting"):
        unit.run(site, Challenge("accasta", "mallory", "carol", sender="mallory@example.org"))
    for n in range(1, RECEIVED_AT_ONCE + 1):  # p0 is challenged by mallory already
        if n == RECEIVED_AT_ONCE:
            with pytest.raises(BadRequest, match=f"p0 has {RECEIVED_AT_ONCE} challenges waiting"):
                unit.run(site, Challenge("accasta", f"p{n}", "p0", sender=f"p{n}@example.org"))
        else:
            unit.run(site, Challenge("accasta", f"p{n}", "p0", sender=f"p{n}@example.org"))


def test_case_05_challenges_reach_a_player_once_an_hour(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    sign_up(site, "p1", "p2", "p3")
    for n in (1, 2, 3):
        unit.run(site, Challenge("accasta", f"p{n}", "carol", sender=f"p{n}@example.org"))
    rows = [m for m in mails_to(db, "carol@example.org") if m.kind == "challenge"]
    first, held = rows  # the third joined the second, which waits for the hour
    assert first.next_attempt_at == clock.now
    assert (
        held.next_attempt_at is not None
        and held.next_attempt_at >= clock.now.replace(microsecond=0)
        and (held.next_attempt_at - clock.now).total_seconds() >= 3600
    )
    assert "2 challenges for you" in held.subject
    assert "p2 challenges you" in held.body and "p3 challenges you" in held.body
    assert held.board is None  # a reply cannot tell which: each names its own command
    assert re.search(r"accasta accept \d+ carol PASSWORD", held.body)


# --- 7: backups and the stored inbox ---------------------------------------------------------


def test_case_07_a_backup_is_its_owners_alone(tmp_path: Path) -> None:
    """``pbm db backup`` (SQLite's: PostgreSQL is backed up with pg_dump)."""
    db = init_db(f"sqlite:///{tmp_path / 'pbm.sqlite3'}")
    old = os.umask(0o022)
    try:
        backup(db, tmp_path / "copy.sqlite3")
    finally:
        os.umask(old)
        db.close()
    assert stat.S_IMODE((tmp_path / "copy.sqlite3").stat().st_mode) == 0o600


def test_case_07_received_mail_keeps_no_password_once_carried_out(
    db: Database, config: Config, clock: Clock, site: Site, board: int
) -> None:
    mail(
        db,
        clock,
        "newbie@example.org",
        "signup newbie pw-newbie-secret",
        "<p1@x>",
    )
    legal = queries.view(site, board).state.legal_moves()[0]
    mail(db, clock, ALICE, f"accasta move {board} alice pw {legal}\nGood luck", "<p2@x>")
    run(make_runner(db, config, clock))
    raws = [r.raw for r in inbox_rows(db)]
    assert all(raws)
    assert not any(b"pw-newbie-secret" in raw for raw in raws)
    assert not any(re.search(rb"alice pw\b", raw) for raw in raws)
    assert b"Good luck" in raws[1] and b"******" in raws[1]


# --- 10: a long comment ---------------------------------------------------------------------


def test_case_10_a_long_comment_is_cut_and_the_mover_told(
    db: Database, config: Config, site: Site, board: int
) -> None:
    huge = "<>&\"'" * (780_000 // 5)
    legal = queries.view(site, board).state.legal_moves()[0]
    replies = unit.run(site, Move(board, legal, comment=huge), Who("alice", Password("pw")))
    for r in replies:
        assert len(r.body.encode()) < MAX_COMMENT_BYTES + 8 * 1024
    (mine,) = [r for r in replies if r.to == ALICE]
    assert f"cut to its first {MAX_COMMENT_BYTES // 1024} KB" in " ".join(mine.body.split())
