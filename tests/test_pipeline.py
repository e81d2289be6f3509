"""The inbox pipeline's steps (pbm.mail.pipeline), each alone, on hand-made mails.

No database: ``Env.seen`` and ``Env.game_of`` are plain functions here. A
step either lets the mail go on or settles it; what a mail asks for becomes
``Request``s, one per command line, keyed by the mail's Message-ID.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from email.message import EmailMessage
from email.policy import SMTP

import pytest

from pbm import commands
from pbm.config import Config, from_mapping
from pbm.mail import pipeline
from pbm.mail.addresses import BOARD, CHAT, FOLLOW, context_address, token_address
from pbm.mail.pipeline import Env, Mail, run_steps
from pbm.refusals import BadRequest, Refuse, Refused, WrongPassword
from pbm.replies import Reply
from pbm.usecases import moves, talk
from pbm.usecases.answers import error_reply, refusal_reply
from pbm.usecases.auth import ByReply, Password, Who
from pbm.usecases.queries import reading
from pbm.usecases.unit import Request

SERVER = "pbm@example.org"
SECRET = "test-secret"
ALICE = "alice@example.org"
MID = "<m1@example.org>"
MOVE_USAGE = "accasta move needs: accasta move BOARD USERID PASSWORD MOVE[#N]"


def make_config(secret: str = SECRET) -> Config:
    return from_mapping({"mail": {"address": SERVER, "secret": secret}}, env={})


def make_env(
    seen: Iterable[str] = (),
    boards: Mapping[int, str] | None = None,
    secret: str = SECRET,
    asked: list[str] | None = None,
) -> Env:
    """An Env over plain functions: the Message-IDs seen, the game of each board."""
    known = set(seen)
    games_of = {12: "accasta"} if boards is None else dict(boards)

    def was_seen(message_id: str) -> bool:
        if asked is not None:
            asked.append(message_id)
        return message_id in known

    return Env(make_config(secret), seen=was_seen, game_of=games_of.get)


def raw_mail(
    body: str,
    subject: str = "hello",
    sender: str = ALICE,
    message_id: str | None = MID,
    **headers: str,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = SERVER
    msg["Subject"] = subject
    if message_id is not None:
        msg["Message-ID"] = message_id
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body + "\n")
    return msg.as_bytes(policy=SMTP)


def make_mail(raw: bytes, rcpt: str = SERVER, mail_from: str = ALICE) -> Mail:
    return Mail(1, raw, mail_from, [rcpt])


def parsed_mail(raw: bytes, env: Env, rcpt: str = SERVER, mail_from: str = ALICE) -> Mail:
    """A mail through the ``parse`` step (what every later step needs)."""
    mail = make_mail(raw, rcpt, mail_from)
    pipeline.parse(mail, env)
    assert mail.inbound is not None and mail.outcome is None
    return mail


def commands_of(body: str, env: Env | None = None, rcpt: str = SERVER, **kw: str) -> Mail:
    """A mail through ``parse`` and ``find_commands``."""
    env = env or make_env()
    mail = parsed_mail(raw_mail(body, **kw), env, rcpt)
    pipeline.find_commands(mail, env)
    return mail


def refusal_of(request: Request) -> Refused:
    assert isinstance(request.action, Refuse)
    return request.action.error


def answer_of(request: Request) -> Reply:
    """The one reply a refused request is answered with."""
    assert request.quoted is not None and request.sender is not None
    return refusal_reply(request.sender, refusal_of(request), request.quoted)


def bob_token(board: int = 12, secret: str = SECRET) -> str:
    return token_address(SERVER, secret, board, "bob")


# --- parse ---------------------------------------------------------------------------


def test_parse_reads_the_mail_and_settles_nothing() -> None:
    mail = parsed_mail(raw_mail("accasta show 12", subject="Re: board"), make_env())
    assert mail.inbound is not None
    assert mail.inbound.sender == ALICE
    assert mail.inbound.subject == "Re: board"
    assert mail.message_id == MID
    assert mail.inbound.token is None
    assert (mail.outcome, mail.note, mail.requests) == (None, "", [])


def test_parse_never_fails_on_garbage() -> None:
    mail = make_mail(b"\xff\xfe\x00 not a mail at all \x80\x81")
    pipeline.parse(mail, make_env())
    assert mail.inbound is not None
    assert mail.outcome is None  # screening is the next step's


def test_a_mail_without_message_id_has_none() -> None:
    mail = parsed_mail(raw_mail("help", message_id=None), make_env())
    assert mail.message_id is None


# --- screen --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "mail_from", "reason"),
    [
        ({"Auto_Submitted": "auto-replied"}, ALICE, "Auto-Submitted: auto-replied"),
        ({"Precedence": "bulk"}, ALICE, "Precedence: bulk"),
        ({}, "", "empty return path (a bounce)"),
    ],
)
def test_screen_ignores_robots(headers: dict[str, str], mail_from: str, reason: str) -> None:
    env = make_env()
    mail = parsed_mail(raw_mail("accasta show 12", **headers), env, mail_from=mail_from)
    pipeline.screen(mail, env)
    assert (mail.outcome, mail.note) == ("ignored", reason)
    assert mail.requests == []


def test_screen_ignores_an_auto_reply_however_it_says_so() -> None:
    env = make_env()
    mail = parsed_mail(raw_mail("I am out of office.", X_Autoreply="yes"), env)
    pipeline.screen(mail, env)
    assert mail.outcome == "ignored"
    assert "auto-reply" in mail.note


def test_screen_lets_a_persons_mail_go_on() -> None:
    env = make_env()
    mail = parsed_mail(raw_mail("accasta show 12", Auto_Submitted="no"), env)
    pipeline.screen(mail, env)
    assert (mail.outcome, mail.note) == (None, "")


# --- dedupe --------------------------------------------------------------------------


def test_dedupe_ignores_a_seen_message_id() -> None:
    env = make_env(seen=[MID])
    mail = parsed_mail(raw_mail("accasta show 12"), env)
    pipeline.dedupe(mail, env)
    assert (mail.outcome, mail.note) == ("ignored", f"duplicate of {MID}")
    assert mail.requests == []


def test_dedupe_lets_a_new_message_id_go_on() -> None:
    asked: list[str] = []
    env = make_env(seen=["<other@example.org>"], asked=asked)
    mail = parsed_mail(raw_mail("accasta show 12"), env)
    pipeline.dedupe(mail, env)
    assert mail.outcome is None
    assert asked == [MID]


def test_dedupe_lets_a_mail_without_message_id_go_on_unasked() -> None:
    asked: list[str] = []
    env = make_env(asked=asked)
    mail = parsed_mail(raw_mail("accasta show 12", message_id=None), env)
    pipeline.dedupe(mail, env)
    assert mail.outcome is None
    assert asked == []


# --- find_commands: one request per command line ------------------------------------------


def test_one_command_line_is_one_request_under_the_mails_message_id() -> None:
    mail = commands_of("accasta move 12 alice pw a1:-d1#3\nGood luck!")
    (request,) = mail.requests
    assert request.action == moves.Move(12, "a1:-d1", 3, "Good luck!", False, MID)
    assert request.who == Who("alice", Password("pw"))
    assert request.sender == ALICE
    assert request.in_reply_to == MID
    assert request.message_id == MID
    assert mail.outcome is None  # the commands are the worker's to carry out


def test_several_command_lines_are_keyed_mid_1_mid_2() -> None:
    mail = commands_of("accasta show 12\nA comment.\naccasta chat 12 alice pw\nMore comment.")
    assert [r.message_id for r in mail.requests] == [f"{MID}#1", f"{MID}#2"]
    assert [r.action for r in mail.requests] == [
        reading.Show(12, ALICE),
        talk.Chat(12, "A comment.\nMore comment."),
    ]
    assert all(r.in_reply_to == MID for r in mail.requests)  # replies stay in the thread
    assert all(r.sender == ALICE for r in mail.requests)


def test_command_lines_of_a_mail_without_message_id_have_no_key() -> None:
    mail = commands_of("accasta show 12\naccasta history 12", message_id=None)
    assert [r.message_id for r in mail.requests] == [None, None]
    assert [r.in_reply_to for r in mail.requests] == [None, None]


def test_a_command_in_the_subject() -> None:
    mail = commands_of("Nice game so far.", subject="accasta move 12 alice pw a1:-d1")
    (request,) = mail.requests
    assert request.action == moves.Move(12, "a1:-d1", None, "Nice game so far.", False, MID)
    assert request.message_id == MID


# --- find_commands: reply addresses ---------------------------------------------------------


def test_a_valid_reply_token_acts_as_its_player_on_its_board() -> None:
    mail = commands_of("a1:-d1\nWell played.", rcpt=bob_token())
    (request,) = mail.requests
    assert request.action == moves.Move(12, "a1:-d1", None, "Well played.", False, MID)
    assert request.who == Who("bob", ByReply(12))
    assert request.message_id == MID


@pytest.mark.parametrize(
    "rcpt",
    [
        "pbm+12.bob.0000000000@example.org",  # a guessed token
        bob_token(secret="another secret"),  # made with another secret
        bob_token(board=13).replace("+13.", "+12."),  # bob's token of another board
    ],
)
def test_an_invalid_reply_token_makes_one_refusal(rcpt: str) -> None:
    mail = commands_of("a1:-d1\naccasta show 12", rcpt=rcpt)
    (request,) = mail.requests
    error = refusal_of(request)
    assert isinstance(error, WrongPassword)
    assert error.message == "This reply address is not valid."
    assert request.who is None
    assert request.message_id == MID
    assert (mail.outcome, mail.note) == ("done", "wrong reply token")
    answer = answer_of(request)
    assert answer.to == ALICE
    assert answer.is_error
    assert "This reply address is not valid." in answer.body
    assert "Nothing was changed." in answer.body


def test_no_reply_token_is_valid_without_a_secret() -> None:
    env = make_env(secret="")
    mail = commands_of("a1:-d1", env=env, rcpt=token_address(SERVER, "", 12, "bob"))
    (request,) = mail.requests
    assert isinstance(refusal_of(request), WrongPassword)
    assert mail.note == "wrong reply token"


def test_a_reply_with_no_command_is_told_so() -> None:
    mail = commands_of("", rcpt=bob_token())
    (request,) = mail.requests
    assert request.action == reading.NoCommand(12, "bob", "")
    assert request.quoted is not None  # its refusal is answered
    assert (mail.outcome, mail.note) == ("done", "no command")


def test_words_on_the_line_of_a_move_are_no_comment() -> None:
    """Issue 36 point 8: text on the same line as the move is not a comment."""
    mail = commands_of("a1:-d1 please", rcpt=bob_token())
    (request,) = mail.requests
    assert request.action == moves.Move(12, "a1:-d1", None, "", message_id=MID)


def test_a_malformed_reply_line_is_refused_quoting_it() -> None:
    mail = commands_of("a1:-d1#0 please", rcpt=bob_token())
    (request,) = mail.requests
    error = refusal_of(request)
    assert error.message == (
        "#N must be a move number like #7, not '#0'.\nIn a reply: MOVE[#N]  (or: move MOVE[#N])"
    )
    answer = answer_of(request)
    assert answer.subject == "Accasta Board 12 - error"
    assert answer.board == 12
    assert answer.body.startswith("Your command:\n  > a1:-d1#0 please\n\n#N must be")


def test_a_reply_with_no_command_line_says_what_it_began_with() -> None:
    mail = commands_of("Thanks for the game!\nSee you.", rcpt=bob_token())
    (request,) = mail.requests
    assert request.action == reading.NoCommand(12, "bob", "Thanks for the game!")


def test_the_lines_after_the_move_are_its_comment_not_the_greeting_above_it() -> None:
    mail = commands_of("Hi Bob,\n\na1:-d1\n\nYour turn!", rcpt=bob_token())
    (request,) = mail.requests
    assert request.action == moves.Move(12, "a1:-d1", None, "Your turn!", False, MID)
    assert request.who == Who("bob", ByReply(12))


def test_a_whole_command_in_a_reply_acts_by_its_own_password() -> None:
    """A corrected command sent back to an error mail: its userid and password, not the
    reply address's, say who acts."""
    mail = commands_of("accasta move 12 carol pw-c a1:-d1", rcpt=bob_token())
    (request,) = mail.requests
    assert request.who == Who("carol", Password("pw-c"))


def test_a_reply_to_a_chat_that_holds_no_command_is_chat() -> None:
    chat_token = context_address(SERVER, SECRET, CHAT, "bob", board=12)
    mail = commands_of("Thanks Alice, we will see!", rcpt=chat_token)
    (request,) = mail.requests
    assert request.action == talk.Chat(12, "Thanks Alice, we will see!")
    assert request.who == Who("bob", ByReply(12))
    moved = commands_of("a1:-d1\nThere.", rcpt=chat_token)  # a command is a command
    assert moved.requests[0].action == moves.Move(12, "a1:-d1", None, "There.", False, MID)


def test_a_followers_reply_can_unsubscribe_but_not_move() -> None:
    follow_token = context_address(SERVER, SECRET, FOLLOW, "carol", board=12)
    (request,) = commands_of("unsubscribe", rcpt=follow_token).requests
    assert request.action == talk.Unsubscribe(12)
    assert request.who == Who("carol", ByReply(12))
    (refused,) = commands_of("a1:-d1", rcpt=follow_token).requests
    assert "A follower's reply may hold only show, history, moves, record, chat" in (
        refusal_of(refused).message
    )
    forged = context_address(SERVER, SECRET, BOARD, "carol", board=12)  # not the same token
    assert (
        forged.partition("@")[0].rpartition(".")[2]
        != follow_token.partition("@")[0].rpartition(".")[2]
    )


def test_a_reply_to_a_board_of_no_known_game_reads_any_games_moves() -> None:
    mail = commands_of("a1:-d1", env=make_env(boards={}), rcpt=bob_token())
    (request,) = mail.requests
    assert request.action == moves.Move(12, "a1:-d1", None, "", False, MID)


# --- find_commands: no command, a malformed command ----------------------------------------


def test_a_mail_with_no_command_gets_the_help() -> None:
    mail = commands_of("Hello, how do I play?")
    (request,) = mail.requests
    assert isinstance(request.action, reading.Answer)
    assert request.action.subject == "pbm - help"
    assert request.action.body.startswith("Your mail held no command, so here is what")
    assert request.action.body.endswith(commands.help_text())
    assert request.who is None
    assert request.message_id == MID
    assert (mail.outcome, mail.note) == ("done", "no command")


def test_a_malformed_line_makes_a_refusal_quoting_it() -> None:
    mail = commands_of("Here is my move:\naccasta move 12 alice\nThanks")
    (request,) = mail.requests
    error = refusal_of(request)
    assert isinstance(error, BadRequest)
    assert error.message == f"PASSWORD is missing.\n{MOVE_USAGE}"
    assert request.message_id == MID
    assert (mail.outcome, mail.note) == ("done", "no command")
    answer = answer_of(request)
    assert answer == Reply(
        to=ALICE,
        subject="Accasta - error",
        body=(
            "Your command:\n"
            "  > accasta move 12 alice\n"
            "\n"
            "PASSWORD is missing.\n"
            f"{MOVE_USAGE}\n"
            "\n"
            "Nothing was changed. Send 'help' for the commands.\n"
        ),
        board=None,
        is_error=True,
    )


def test_a_malformed_command_typed_in_the_subject_is_refused_quoting_it() -> None:
    mail = commands_of("", subject="accasta show twelve")
    (request,) = mail.requests
    assert refusal_of(request).message == (
        "BOARD must be a board number like 12, not 'twelve'.\n"
        "accasta show needs: accasta show BOARD"
    )
    assert "  > accasta show twelve\n" in answer_of(request).body


def test_a_malformed_subject_of_a_reply_to_us_is_not_quoted() -> None:
    """``Re: <our subject>`` was not typed by the sender: it gets the help, not an error."""
    mail = commands_of("", subject="Re: accasta show twelve")
    (request,) = mail.requests
    assert isinstance(request.action, reading.Answer)


def test_good_lines_beside_a_malformed_one_are_carried_out() -> None:
    """Body mode runs the lines that are commands; the malformed one is a comment."""
    mail = commands_of("accasta show 12\naccasta move 12 alice")
    (request,) = mail.requests
    assert request.action == reading.Show(12, ALICE)


# --- each line is parsed once --------------------------------------------------------------


def counting(
    read: Callable[..., commands.Parsed | None], calls: Counter[str]
) -> Callable[..., commands.Parsed | None]:
    """``read`` as it is, counting the lines it is given (a lenient reading apart: it is
    a second way of reading a line, tried when no line of the mail is a command)."""

    def counted(line: str, *args: object, **kw: bool) -> commands.Parsed | None:
        calls[f"{line} (lenient)" if kw.get("lenient") else line] += 1
        return read(line, *args, **kw)

    return counted


@pytest.mark.parametrize(
    ("body", "subject", "rcpt"),
    [
        ("accasta show 12\nA comment.\naccasta history 12\nA comment.", "hello", SERVER),
        ("Just chatting.\nNothing to do.", "hello there", SERVER),
        ("Here:\naccasta move 12 alice\nbye", "accasta move", SERVER),
        ("a1:-d1 please\nthanks", "Re: Accasta Board 12", bob_token()),
    ],
)
def test_each_line_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch, body: str, subject: str, rcpt: str
) -> None:
    calls: Counter[str] = Counter()
    monkeypatch.setattr(commands, "parse", counting(commands.parse, calls))
    monkeypatch.setattr(commands, "parse_reply", counting(commands.parse_reply, calls))
    mail = commands_of(body, subject=subject, rcpt=rcpt)
    assert mail.requests
    assert calls, "no line was read"
    assert max(calls.values()) == 1, calls


# --- run_steps -----------------------------------------------------------------------------


def test_run_steps_stops_at_the_step_that_settles() -> None:
    env = make_env(seen=[MID])
    mail = run_steps(make_mail(raw_mail("accasta show 12")), env)
    assert (mail.outcome, mail.note, mail.requests) == ("ignored", f"duplicate of {MID}", [])
    robot = run_steps(make_mail(raw_mail("accasta show 12", Auto_Submitted="auto-generated")), env)
    assert (robot.outcome, robot.requests) == ("ignored", [])
    assert robot.note == "Auto-Submitted: auto-generated"  # screened before the dedupe


def test_run_steps_makes_the_requests() -> None:
    mail = run_steps(make_mail(raw_mail("accasta show 12\naccasta moves 12")), make_env())
    assert mail.outcome is None
    assert [r.action for r in mail.requests] == [
        reading.Show(12, ALICE),
        reading.LegalMoves(12, ALICE),
    ]


def test_a_broken_step_fails_that_mail_alone() -> None:
    def game_of(board: int) -> str | None:
        raise RuntimeError("the database went away")

    env = Env(make_config(), seen=lambda mid: False, game_of=game_of)
    mail = run_steps(make_mail(raw_mail("a1:-d1"), rcpt=bob_token()), env)
    assert (mail.outcome, mail.note) == ("failed", "RuntimeError: the database went away")
    assert mail.requests == []
    other = run_steps(make_mail(raw_mail("accasta show 12")), env)  # no reply address: fine
    assert other.outcome is None and len(other.requests) == 1


# --- error_reply -----------------------------------------------------------------------------


def test_error_reply_quotes_the_command_and_says_nothing_changed() -> None:
    reply = error_reply(ALICE, "Board 12 is over.", "accasta show 12", 12, "accasta")
    assert reply == Reply(
        to=ALICE,
        subject="Accasta Board 12 - error",
        body=(
            "Your command:\n  > accasta show 12\n\nBoard 12 is over.\n\n"
            "Nothing was changed. Send 'help' for the commands.\n"
        ),
        board=12,
        is_error=True,
    )
    assert error_reply(ALICE, "No.", "accasta ratings x", None, "accasta").subject == (
        "Accasta - error"
    )
    bare = error_reply(ALICE, "No.", "", None)  # an account command, or no command at all
    assert bare.subject == "pbm - error"
    assert bare.body == "No.\n\nNothing was changed. Send 'help' for the commands.\n"
