"""A mail's lines read as commands: the requests a mail makes, each line parsed once.

``read_commands`` is the whole of it, for the ``find_commands`` step
(``pbm.mail.pipeline``): a reply to an account's mail (a confirmation, a new
password) is answered as such; otherwise the candidate lines
(``quotes.command_candidates``: reply, subject or body mode) are searched in
one pass, each line read as written and, in a reply, as a person means it
(``commands.parse_reply``, lenient) when no line is a command as written. A
move with no board becomes an ``UnaddressedMove``; a mail with no command gets
what was wrong with what it tried, or the help. It reads the site only
through ``Env`` and returns what it found (``Found``); it writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pbm import commands, games
from pbm.commands import CommandError, Parsed
from pbm.commands.grammar import mask
from pbm.mail.addresses import (
    ADDRESS,
    BOARD_KINDS,
    CHAT,
    FOLLOW,
    RESET,
    TokenAddress,
    token_address,
)
from pbm.mail.digest_replies import DIGEST, DigestReply
from pbm.mail.env import Env
from pbm.mail.inbound import Inbound
from pbm.mail.quotes import command_candidates, subject_command_text
from pbm.refusals import BadRequest, ForeignSender, NotAPlayer, Refuse, Refused, WrongPassword
from pbm.usecases.accounts import Confirm, ConfirmAddress, SetPassword
from pbm.usecases.answers import Quoted
from pbm.usecases.auth import ByReply, Who, from_owner, same_mailbox
from pbm.usecases.queries.reading import Answer, NoCommand
from pbm.usecases.readers import account_nonce
from pbm.usecases.talk import Chat
from pbm.usecases.text import wrap
from pbm.usecases.unaddressed import UnaddressedMove
from pbm.usecases.unit import Action, Request
from pbm.verbs import Reader, listed, sendable


@dataclass
class Found:
    """What a mail asks for: its requests, the passwords it holds (the stored mail keeps
    none), and ``note``: how the mail ends when it holds no command of its own (a
    confirmation, a reply address that is not valid, no command...)."""

    requests: list[Request] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    note: str | None = None


def read_commands(inbound: Inbound, env: Env, message_id: str | None) -> Found:
    """The requests of a decoded mail (``message_id``: its Message-ID, their key)."""
    token = inbound.token
    if token is not None and token.kind not in BOARD_KINDS:
        answered = _account_reply(_Reading(inbound, env, token, message_id))
        if answered is not None:
            return answered
        if token.kind == DIGEST:  # a reply to a digest: "B: MOVE" lines
            digest = DigestReply(inbound, token, env.game_of, env.config.limits.commands_per_mail)
            requests = digest.requests(message_id)
            return Found(requests, digest.secrets)
        token = None  # an active account's reply: read like mail to the server's address
    reading = _Reading(inbound, env, token, message_id)
    found = _commands(reading)
    found.secrets |= reading.secrets
    return found


def _commands(reading: _Reading) -> Found:
    """The requests of a mail's command lines (reply, subject or body mode), or of what
    it holds instead: a chat back, a move with no board, no command."""
    inbound, env, token, mid = reading.inbound, reading.env, reading.token, reading.message_id
    limit = env.config.limits.commands_per_mail
    lines, comment = command_candidates(
        inbound.text,
        inbound.new_text,
        inbound.subject,
        reply_mode=token is not None,
        is_command=reading.is_command,
        is_meant=reading.is_meant,
        limit=limit,
    )
    if token is not None and not token.is_valid(env.config.mail.secret):
        invalid = WrongPassword("This reply address is not valid.")
        return Found([reading.refused(invalid, "", mid)], note="wrong reply token")
    if not lines and token is not None and token.kind == CHAT and comment.strip():
        # A reply to a chat that holds no command is chat back.
        assert token.board is not None
        chat = Chat(token.board, comment)
        return Found([reading.acting(chat, Who(token.userid, ByReply(token.board)))])
    if not lines and token is None and (unaddressed := _unaddressed(reading)) is not None:
        return Found([unaddressed])
    if not lines:
        return Found([reading.no_command(comment)], note="no command")
    requests = [
        reading.request(line, comment, mid if mid is None or len(lines) == 1 else f"{mid}#{i}")
        for i, line in enumerate(lines[:limit], start=1)
    ]
    if len(lines) > limit:
        why = (
            f"Only the first {limit} commands of a mail are carried out; the rest of this "
            "mail was not read. Send them in another mail."
        )
        requests.append(reading.refused(BadRequest(why), "", f"{mid}#more" if mid else None))
    return Found(requests)


def _unaddressed(reading: _Reading) -> Request | None:
    """A move in a mail that names no board, from a player with open boards: the request
    that plays it on the one whose turn it is, or lists them (``UnaddressedMove``)."""
    inbound, env = reading.inbound, reading.env
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
            and (meant := commands.GRAMMAR.lenient_reply(line, games.looks_like_any_move))
            is not None
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
    comment = "\n".join(lines[i + 1 :])  # what he wrote after the move, not around it
    action = UnaddressedMove(
        inbound.sender, inbound.return_path, meant.args.move, comment, addresses, proven
    )
    return reading.acting(action, None)


def _account_reply(reading: _Reading) -> Found | None:
    """A reply to an account's mail: a confirmation, a new password (a reset), or (None)
    mail to read as commands."""
    inbound, env, token = reading.inbound, reading.env, reading.token
    assert token is not None
    account = env.account(token.userid)
    nonce = None
    if account is not None:
        nonces = {RESET: account.reset_nonce, ADDRESS: account.new_email_nonce}
        nonce = nonces.get(token.kind, account_nonce(account))
    if account is None or nonce is None or not token.is_valid(env.config.mail.secret, nonce):
        invalid = WrongPassword("This reply address is not valid (a reset address works once).")
        return Found([reading.refused(invalid, "")], note="wrong reply token")
    if token.kind == ADDRESS:  # only a reply from the new address itself confirms it
        if not same_mailbox(inbound.sender, account.new_email or ""):
            stranger = ForeignSender(
                f"Only a reply from {account.new_email} confirms it as the new address."
            )
            return Found([reading.refused(stranger, "")], note="address confirmation")
        confirmed = ConfirmAddress(account.userid, nonce)
        return Found([reading.acting(confirmed, None)], note="address confirmation")
    if token.kind == RESET:
        try:  # a leaked reset mail sets no password: only its owner's address may
            from_owner(account, inbound.sender, inbound.return_path, None)
        except ForeignSender as foreign:
            used = "reply address used by another address"
            return Found([reading.refused(foreign, "")], note=used)
        first = next((ln.strip() for ln in inbound.new_text.splitlines() if ln.strip()), "")
        if not first:
            why = BadRequest("Write the new password alone on the first line of your reply.")
            return Found([reading.refused(why, "")], note="password reset")
        reset = SetPassword(account.userid, nonce, first)
        return Found([reading.acting(reset, None)], {first}, note="password reset")
    if account.active:
        return None
    confirm = Request(
        Confirm(account.userid),
        sender=inbound.sender,
        in_reply_to=inbound.thread_id,
        message_id=reading.message_id,
    )
    return Found([confirm], note="confirmation")


class _Reading:
    """One mail's lines read as commands, each once (as written, and as meant), and the
    requests they make."""

    def __init__(
        self, inbound: Inbound, env: Env, token: TokenAddress | None, message_id: str | None
    ) -> None:
        self.inbound = inbound
        self.env = env
        self.token = token
        self.message_id = message_id
        self._read: dict[tuple[str, bool], Parsed | CommandError | None] = {}
        self.secrets: set[str] = set()  # the passwords of the lines read
        self.game = self._game()  # of the reply address's board
        self.looks_like_move = games.looks_like_move_of(self.game)
        # A game whose moves may be several words (``g 7``, ``dead D4 E5``) reads them so.
        self.phrases = games.move_phrases(games.get(self.game)) if self.game else None

    def _game(self) -> str | None:
        if self.token is None or self.token.board is None:
            return None
        return self.env.game_of(self.token.board)

    def read(self, line: str, lenient: bool = False) -> Parsed | CommandError | None:
        """The line as a command (or why it is a broken one), read once; ``lenient``: in a
        reply, as a person means it (``commands.parse_reply``)."""
        key = (line, lenient)
        if key not in self._read:
            try:
                if self.token is not None:
                    found = commands.parse_reply(
                        line, self.looks_like_move, lenient=lenient, phrases=self.phrases
                    )
                else:
                    found = commands.parse(line)
            except CommandError as exc:
                self._read[key] = exc
            else:
                self._read[key] = found
            read = self._read[key]
            at = read.secrets if isinstance(read, Parsed | CommandError) else frozenset()
            self.secrets |= {w for i, w in enumerate(line.split()) if i in at}
        return self._read[key]

    def is_command(self, line: str) -> bool:
        return isinstance(self.read(line), Parsed)

    def is_meant(self, line: str) -> bool:
        """Whether a reply's line is a command as a person means it (none without a reply
        address: mail to the server is read as written)."""
        return self.token is not None and isinstance(self.read(line, lenient=True), Parsed)

    def request(self, line: str, comment: str, key: str | None) -> Request:
        """The request of one candidate line (a refusal when it is no command)."""
        found = self.read(line)
        if not isinstance(found, Parsed) and self.token is not None:
            found = self.read(line, lenient=True)
        board = self.token.board if self.token is not None else None
        if not isinstance(found, Parsed):
            why = (
                str(found) if found else f"{line!r} is not a command. Send 'help' for the commands."
            )
            return self.refused(BadRequest(why), line, key, board)
        verb = found.command.verb if found.in_reply else None
        follows = self.token is not None and self.token.kind == FOLLOW
        if follows and verb is not None and Reader.FOLLOWER not in verb.readers:
            why = (
                f"A follower's reply may hold only {listed(sendable(Reader.FOLLOWER))}; the "
                f"moves on board {board} are its players'."
            )
            return self.refused(NotAPlayer(why), line, key, board)
        ctx = commands.Context(
            sender=self.inbound.sender,
            comment=comment,
            message_id=key,
            game=found.game,
            reply_board=board if found.in_reply else None,
            reply_userid=self.token.userid if self.token is not None and found.in_reply else None,
        )
        action, who = found.build(ctx)
        quoted = mask(line, found.secrets)
        return self._request(action, who, quoted, key, action.board, found.game)

    def no_command(self, text: str = "") -> Request:
        """A mail with no command: what is wrong with what it tried, or the help."""
        inbound, key = self.inbound, self.message_id
        if self.token is not None and self.token.board is not None:
            board = self.token.board
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            for line in lines:  # a line that tried to be a command, and what is wrong with it
                found = self.read(line)
                if isinstance(found, CommandError):
                    return self.refused(
                        BadRequest(str(found)), mask(line, found.secrets), key, board
                    )
            first = lines[0] if lines else ""
            near = commands.suggestion(first, reply=True) or ""
            action = NoCommand(board, self.token.userid, first, near)
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
        for line in tried:  # a command misspelled (quoted no further: it may hold a password)
            if (meant := commands.suggestion(line)) is not None:
                written = " ".join(line.split()[: len(meant.split())])
                why = BadRequest(f"{written!r} is no command here. Did you mean {meant}?")
                return self.refused(why, "", key)
        intro = "Your mail held no command, so here is what this server understands."
        if not self.env.known(inbound.sender):
            intro += " New here? Sign up with: signup USERID PASSWORD"
        intro = "\n".join(wrap(intro)) + "\n\n"
        help_action = Answer(inbound.sender, "pbm - help", intro + commands.help_text())
        return self._request(help_action, None, "", key, None)

    def acting(self, action: Action, who: Who | None) -> Request:
        """The request of an action found otherwise than on a command line."""
        return self._request(action, who, "", self.message_id, action.board)

    def refused(
        self, error: Refused, line: str, key: str | None = None, board: int | None = None
    ) -> Request:
        """A refusal, keyed by ``key`` (the mail's Message-ID when not given)."""
        key = self.message_id if key is None else key
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
        return Request(
            action,
            who,
            sender=self.inbound.sender,
            in_reply_to=self.inbound.thread_id,
            message_id=key,
            quoted=Quoted(line, board, game or self.game or _game_word(line)),
            envelope=self.inbound.return_path,
        )


def _game_word(line: str) -> str | None:
    """The game a command line names first (``accasta move ...``), if any."""
    first = line.split(maxsplit=1)[0].lower() if line.strip() else ""
    return first if first in games.names() else None
