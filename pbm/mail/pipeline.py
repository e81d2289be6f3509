"""The inbox pipeline: a received mail goes through small named steps to the commands it holds.

Each step is a plain function ``step(mail, env)`` that either lets the mail
go on or settles it (``Mail.settle``): ``parse`` (decode; never fails) ->
``bounce`` (a delivery report to a return path of ours marks the address) ->
``screen`` (robots, bounces, lists and loops get no answer) -> ``dedupe`` (a
Message-ID already acted on) -> ``find_commands`` (reply, subject or body
mode; each line parsed once). What a mail asks for ends up as
``Request``s in ``Mail.requests``, for the inbox worker to carry out
(``pbm.usecases.unit``) together with the rest of its batch. Steps read the
database only through ``Env``; they write nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pbm import commands, games
from pbm.commands import CommandError, Parsed
from pbm.commands.grammar import mask
from pbm.config import Config
from pbm.mail.addresses import BOARD_KINDS, CHAT, FOLLOW, RESET, TokenAddress, token_address
from pbm.mail.bounces import report_for
from pbm.mail.inbound import Inbound, read_message
from pbm.mail.quotes import command_candidates, subject_command_text
from pbm.replies import Reply
from pbm.usecases.accounts import Confirm, SetPassword
from pbm.usecases.auth import ByReply, Who, from_owner
from pbm.usecases.bounces import Bounced
from pbm.usecases.readers import account_nonce
from pbm.usecases.reading import Answer, NoCommand
from pbm.usecases.refusals import (
    BadRequest,
    ForeignSender,
    NotAPlayer,
    Refuse,
    Refused,
    WrongPassword,
)
from pbm.usecases.talk import Chat
from pbm.usecases.text import wrap
from pbm.usecases.unaddressed import UnaddressedMove
from pbm.usecases.unit import Action, Request
from pbm.usecases.world import Account


@dataclass(frozen=True)
class Env:
    """What the steps may know of the site: its settings, and a few looks at its database."""

    config: Config
    seen: Callable[[str], bool]  # whether a Message-ID was acted on
    game_of: Callable[[int], str | None]  # the game of a board (None: no such board)
    account: Callable[[str], Account | None] = lambda userid: None  # by userid
    # (userid, board) of the open boards of the accounts of an address
    open_boards: Callable[[str], list[tuple[str, int]]] = lambda address: []
    # the addresses that the replies with these Message-IDs went to
    sent_to: Callable[[Sequence[str]], set[str]] = lambda message_ids: set()


@dataclass
class Mail:
    """One inbox row on its way through the steps."""

    row_id: int
    raw: bytes
    mail_from: str
    rcpt: list[str]
    attempts: int = 0  # failed attempts at working it out before this one
    inbound: Inbound | None = None
    outcome: str | None = None  # None: go on; else the inbox status: done / ignored / failed
    note: str = ""
    requests: list[Request] = field(default_factory=list)
    fault: str | None = None  # why working it out failed this time (the worker's business)

    def settle(self, outcome: str, note: str) -> None:
        self.outcome, self.note = outcome, note

    @property
    def message_id(self) -> str | None:
        return (self.inbound.message_id or None) if self.inbound is not None else None


Step = Callable[[Mail, Env], None]


def parse(mail: Mail, env: Env) -> None:
    """Decode the message (never raises: garbage comes back with an ignore reason)."""
    mail.inbound = read_message(
        mail.raw,
        mail_from=mail.mail_from,
        rcpt_tos=mail.rcpt,
        server_address=env.config.mail.address,
    )


def bounce(mail: Mail, env: Env) -> None:
    """A delivery report to one of our return paths: a permanent failure marks the
    address (``usecases.bounces``); nothing is ever answered."""
    assert mail.inbound is not None
    mail_cfg = env.config.mail
    report = report_for(
        mail.raw, mail.inbound.rcpt, mail_cfg.address, mail_cfg.secret, mail.inbound.return_path
    )
    if report is None:
        return
    if not report.genuine:
        why = "not from the mail system (a return path, or no RFC 3464 report)"
        mail.settle("ignored", f"mail to the bounce address of outbox {report.outbox_id}: {why}")
        return
    if not report.permanent:
        mail.settle("ignored", f"delivery report for outbox {report.outbox_id}: no failure")
        return
    bounced = Bounced(report.outbox_id, report.recipients)
    mail.requests.append(Request(bounced, message_id=mail.message_id))
    mail.settle("done", f"bounce of outbox {report.outbox_id}")


def screen(mail: Mail, env: Env) -> None:
    """Never answer robots: auto-replies, bounces, list mail, ourselves (RFC 3834 2)."""
    assert mail.inbound is not None
    if mail.inbound.ignore_reason:
        mail.settle("ignored", mail.inbound.ignore_reason)


def dedupe(mail: Mail, env: Env) -> None:
    """A Message-ID already acted on is not acted on again (redelivery, a second copy)."""
    mid = mail.message_id
    if mid and env.seen(mid):
        mail.settle("ignored", f"duplicate of {mid}")


def find_commands(mail: Mail, env: Env) -> None:
    """Find the commands (reply, subject or body mode) and make each a request."""
    inbound = mail.inbound
    assert inbound is not None
    token = inbound.token
    if token is not None and token.kind not in BOARD_KINDS:
        if _account_reply(mail, env, token):
            return
        token = None  # an active account's reply: read like mail to the server's address
    reading = _Reading(inbound, env, token)
    limit = env.config.limits.commands_per_mail
    lines, comment = command_candidates(
        inbound.text,
        inbound.new_text,
        inbound.subject,
        reply_mode=token is not None,
        is_command=reading.is_command,
        limit=limit,
    )
    if not lines and token is not None:  # none as written: what did the player mean?
        reading.lenient = True
        lines, comment = command_candidates(
            inbound.text,
            inbound.new_text,
            inbound.subject,
            reply_mode=True,
            is_command=reading.is_command,
            limit=limit,
        )
    mid = mail.message_id
    if token is not None and not token.is_valid(env.config.mail.secret):
        mail.requests.append(
            reading.refused(WrongPassword("This reply address is not valid."), "", mid)
        )
        mail.settle("done", "wrong reply token")
        return
    if not lines and token is not None and token.kind == CHAT and comment.strip():
        # A reply to a chat that holds no command is chat back.
        assert token.board is not None
        chat = Chat(token.board, comment)
        mail.requests.append(reading.acting(chat, Who(token.userid, ByReply(token.board)), mid))
        return
    if not lines and token is None and (unaddressed := _unaddressed(mail, env, reading)):
        mail.requests.append(unaddressed)
        return
    if not lines:
        mail.requests.append(reading.no_command(mid, comment))
        mail.settle("done", "no command")
        return
    for i, line in enumerate(lines[:limit]):
        key = mid if (mid is None or len(lines) == 1) else f"{mid}#{i + 1}"
        mail.requests.append(reading.request(line, comment, key))
    if len(lines) > limit:
        why = (
            f"Only the first {limit} commands of a mail are carried out; the rest of this "
            "mail was not read. Send them in another mail."
        )
        key = f"{mid}#more" if mid else None
        mail.requests.append(reading.refused(BadRequest(why), "", key))


def _unaddressed(mail: Mail, env: Env, reading: _Reading) -> Request | None:
    """A move in a mail that names no board, from a player with open boards: the request
    that plays it on the one whose turn it is, or lists them (``UnaddressedMove``)."""
    inbound = mail.inbound
    assert inbound is not None
    lines = [ln.strip() for ln in inbound.new_text.splitlines() if ln.strip()]
    typed = subject_command_text(inbound.subject)
    if typed and typed == inbound.subject:
        lines.insert(0, typed)  # a subject the sender typed, not "Re: <our subject>"
    found = next(
        (
            (i, meant)
            for i, line in enumerate(lines[:5])
            # A malformed command is explained as one (``no_command``), not guessed at.
            if not isinstance(reading.read(line), CommandError)
            and (meant := commands.GRAMMAR.lenient_reply(line, _any_move)) is not None
            and meant.args.move is not None
        ),
        None,
    )
    if found is None:
        return None
    boards = env.open_boards(inbound.sender)
    if not boards:
        return None
    i, meant = found
    assert meant.args.move is not None
    secret = env.config.mail.secret
    addresses = {
        board: (userid, token_address(env.config.mail.address, secret, board, userid))
        for userid, board in boards
    }
    account_token = inbound.token is not None and inbound.token.kind not in BOARD_KINDS
    answered = [inbound.in_reply_to, *inbound.references]
    proven = account_token or inbound.sender.lower() in env.sent_to([a for a in answered if a])
    comment = "\n".join(part for part in (meant.said, *lines[:i], *lines[i + 1 :]) if part)
    action = UnaddressedMove(
        inbound.sender, inbound.return_path, meant.args.move, comment, addresses, proven
    )
    return reading.acting(action, None, mail.message_id)


def _account_reply(mail: Mail, env: Env, token: TokenAddress) -> bool:
    """A reply to an account's mail: a confirmation, a new password (a reset), or (False)
    mail to read as commands."""
    inbound = mail.inbound
    assert inbound is not None
    account = env.account(token.userid)
    reading = _Reading(inbound, env, token)
    nonce = None
    if account is not None:
        nonce = account.reset_nonce if token.kind == RESET else account_nonce(account)
    if account is None or nonce is None or not token.is_valid(env.config.mail.secret, nonce):
        invalid = WrongPassword("This reply address is not valid (a reset address works once).")
        mail.requests.append(reading.refused(invalid, "", mail.message_id))
        mail.settle("done", "wrong reply token")
        return True
    if token.kind == RESET:
        try:  # a leaked reset mail sets no password: only its owner's address may
            from_owner(account, inbound.sender, inbound.return_path, None)
        except ForeignSender as foreign:
            mail.requests.append(reading.refused(foreign, "", mail.message_id))
            mail.settle("done", "reply address used by another address")
            return True
        first = next((ln.strip() for ln in inbound.new_text.splitlines() if ln.strip()), "")
        if not first:
            why = BadRequest("Write the new password alone on the first line of your reply.")
            mail.requests.append(reading.refused(why, "", mail.message_id))
        else:
            reset = SetPassword(account.userid, nonce, first)
            mail.requests.append(reading.acting(reset, None, mail.message_id))
        mail.settle("done", "password reset")
        return True
    if account.active:
        return False
    confirm = Request(
        Confirm(account.userid),
        sender=inbound.sender,
        in_reply_to=inbound.thread_id,
        message_id=mail.message_id,
    )
    mail.requests.append(confirm)
    mail.settle("done", "confirmation")
    return True


STEPS: tuple[Step, ...] = (parse, bounce, screen, dedupe, find_commands)


def run_steps(mail: Mail, env: Env) -> Mail:
    """Run ``STEPS`` until one settles the mail; a broken mail fails alone."""
    try:
        for step in STEPS:
            step(mail, env)
            if mail.outcome is not None:
                break
    except Exception as exc:  # a bug must never stop the worker
        mail.requests.clear()
        mail.settle("failed", f"{type(exc).__name__}: {exc}")
    return mail


class _Reading:
    """One mail's lines read as commands, each once, and the requests they make."""

    def __init__(self, inbound: Inbound, env: Env, token: TokenAddress | None) -> None:
        self.inbound = inbound
        self.env = env
        self.token = token
        self._read: dict[tuple[str, bool], Parsed | CommandError | None] = {}
        self.lenient = False  # read lines as a person means them (``commands.parse_reply``)
        self.game = self._game()  # of the reply address's board
        self.looks_like_move = games.get(self.game).looks_like_move if self.game else _any_move

    def _game(self) -> str | None:
        if self.token is None or self.token.board is None:
            return None
        return self.env.game_of(self.token.board)

    def read(self, line: str) -> Parsed | CommandError | None:
        """The line as a command (or why it is a broken one), read once."""
        key = (line, self.lenient)
        if key not in self._read:
            try:
                if self.token is not None:
                    found = commands.parse_reply(line, self.looks_like_move, lenient=self.lenient)
                else:
                    found = commands.parse(line)
            except CommandError as exc:
                self._read[key] = exc
            else:
                self._read[key] = found
        return self._read[key]

    def is_command(self, line: str) -> bool:
        return isinstance(self.read(line), Parsed)

    def request(self, line: str, comment: str, key: str | None) -> Request:
        """The request of one candidate line (a refusal when it is no command)."""
        found = self.read(line)
        board = self.token.board if self.token is not None else None
        if not isinstance(found, Parsed):
            why = (
                str(found) if found else f"{line!r} is not a command. Send 'help' for the commands."
            )
            return self.refused(BadRequest(why), line, key, board)
        if self.token is not None and self.token.kind == FOLLOW:
            name = found.command.words[0]
            if name not in FOLLOWER_COMMANDS and found.in_reply:
                why = (
                    f"A follower's reply can only {', '.join(FOLLOWER_COMMANDS)}; the moves on "
                    f"board {board} are its players'."
                )
                return self.refused(NotAPlayer(why), line, key, board)
        ctx = commands.Context(
            sender=self.inbound.sender,
            comment="\n".join(part for part in (found.said, comment) if part.strip()),
            message_id=key,
            game=found.game,
            reply_board=board if found.in_reply else None,
            reply_userid=self.token.userid if self.token is not None and found.in_reply else None,
        )
        action, who = found.build(ctx)
        quoted = mask(line, found.secrets)
        return self._request(action, who, quoted, key, action.board, found.game)

    def no_command(self, key: str | None, text: str = "") -> Request:
        """A mail with no command: what is wrong with what it tried, or the help."""
        inbound = self.inbound
        if self.token is not None and self.token.board is not None:
            board = self.token.board
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            for line in lines:  # a line that tried to be a command, and what is wrong with it
                found = self.read(line)
                if isinstance(found, CommandError):
                    return self.refused(
                        BadRequest(str(found)), mask(line, found.secrets), key, board
                    )
            action = NoCommand(board, self.token.userid, lines[0] if lines else "")
            return self._request(action, None, "", key, board)
        # A malformed command in a subject the sender typed (not "Re: <our subject>"),
        # then in the body, is explained and quoted; help is for mail with none at all.
        typed = subject_command_text(inbound.subject)
        tried = [typed] if typed and typed == inbound.subject else []
        tried += [ln.strip() for ln in inbound.new_text.splitlines()]
        for line in tried:
            found = self.read(line) if line else None
            if isinstance(found, CommandError):
                return self.refused(BadRequest(str(found)), mask(line, found.secrets), key)
        intro = "\n".join(
            wrap(
                "Your mail held no command, so here is what this server understands. New "
                "here? Sign up with: signup USERID PASSWORD"
            )
        )
        intro += "\n\n"
        help_action = Answer(inbound.sender, "pbm - help", intro + commands.help_text())
        return self._request(help_action, None, "", key, None)

    def acting(self, action: Action, who: Who | None, key: str | None) -> Request:
        """The request of an action found otherwise than on a command line."""
        return self._request(action, who, "", key, action.board)

    def refused(
        self, error: Refused, line: str, key: str | None, board: int | None = None
    ) -> Request:
        return self._request(Refuse(error, board), None, line, key, board)

    def _request(
        self,
        action: Action,
        who: Who | None,
        line: str,
        key: str | None,
        board: int | None,
        game: str | None = None,
    ) -> Request:
        sender = self.inbound.sender
        game = game or self.game or _game_word(line)
        return Request(
            action,
            who,
            sender=sender,
            in_reply_to=self.inbound.thread_id,
            message_id=key,
            answer_refusal=lambda error: [
                error_reply(sender, error.message, line, board, game, mistake=error.mistake)
            ],
            envelope=self.inbound.return_path,
        )


# What a reply to a follower's mail may ask for.
FOLLOWER_COMMANDS = ("unsubscribe", "chat", "show", "history", "moves", "record")


def _game_word(line: str) -> str | None:
    """The game a command line names first (``accasta move ...``), if any."""
    first = line.split(maxsplit=1)[0].lower() if line.strip() else ""
    return first if first in games.names() else None


def _any_move(word: str) -> bool:
    return any(games.get(name).looks_like_move(word) for name in games.names())


def error_reply(
    to: str,
    why: str,
    command: str,
    board: int | None,
    game: str | None = None,
    *,
    mistake: bool = True,
) -> Reply:
    """The answer to a refused command: the command quoted, why, and that nothing changed.

    Titled by the board (``<Title> Board 12 - error``), else by the game of a game
    command (``<Title> - error``), else ``pbm - error`` (accounts, help, no command).
    """
    title = games.get(game).title if game is not None and game in games.names() else "pbm"
    subject = f"{title} Board {board} - error" if board is not None else f"{title} - error"
    lines = ["Your command:", *wrap(command, indent="  > "), ""] if command else []
    lines += [*wrap(why), "", "Nothing was changed. Send 'help' for the commands."]
    body = "\n".join(lines) + "\n"
    return Reply(to=to, subject=subject, body=body, board=board, is_error=mistake)
