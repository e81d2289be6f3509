"""New boards: a challenge one player sends another, who accepts or declines it.

A challenge makes a board that waits (``waiting``): nothing is clocked or
rated until the challenged player accepts (``proposals.Accept``); he may
decline (``proposals.Reject``), the challenger may take it back
(``proposals.Cancel``), and a challenge nobody answers lapses after the site's
``clock.challenge_days`` (``ExpireChallenge``; both players are told, and ``games``
shows it for as long again). So a stranger cannot force anyone
into a game. The admin's ``pbm game create`` starts a board at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from pbm import verbs
from pbm.config import ClockConfig
from pbm.games import BadOption
from pbm.model import Account, Board, BoardStatus, rules_of
from pbm.refusals import BadRequest, NotAPlayer, NotConfirmed
from pbm.replies import MailKind, Reply
from pbm.store import Session
from pbm.store.challenges import open_challenges
from pbm.store.digests import LAPSED
from pbm.store.lists import challenges_made_before
from pbm.timecontrol import BadTimeControl, Kind, TimeControl
from pbm.timecontrol import parse as parse_time_control
from pbm.usecases import computer
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.changes import BoardChange
from pbm.usecases.clocks import control_meaning, control_of, control_words
from pbm.usecases.text import fmt_time, note, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World
from pbm.verbs import Reader

CHALLENGE_DAYS = 7  # the default of ``clock.challenge_days``
DAY = timedelta(days=1)
# Open challenges (waiting for an answer): one a pair of players, and at most these
# many sent by one player and sent to one player. A stranger's flood of challenges
# cannot bury anyone in mail, nor fill the boards.
SENT_AT_ONCE = 10
RECEIVED_AT_ONCE = 20


@dataclass(frozen=True)
class Challenge:
    """A new board of ``game``, ``white`` moving first.

    Unless ``admin``, ``sender`` must be the address of one of the two, the
    challenger; the board then waits for the other to accept, who gets the
    challenge with its ``comment``. The admin's board starts at once, and
    both players get the board mail. ``options`` are the game's own
    (``Game.options``); ``time``: the time control's spec (``pbm.timecontrol``),
    else ``nag_days`` and ``forfeit_days`` of a classic one, else the site's
    (``clock`` settings).
    """

    game: str
    white: str
    black: str
    sender: str | None = None
    admin: bool = False
    variant: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    nag_days: int | None = None
    forfeit_days: int | None = None
    comment: str = ""
    time: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        rules = rules_of(self.game)
        options = dict(self.options)
        level = options.pop("level", None)  # the computer's, not the game's
        try:
            chosen = rules.check_options(self.variant or rules.variants[0], options)
        except BadOption as exc:
            raise BadRequest(str(exc)) from None
        control = self._control(world.config.clock)
        nag, forfeit = (
            (control.nag // DAY, control.start // DAY)
            if control.kind is Kind.CLASSIC
            else (world.config.clock.nag_days, world.config.clock.forfeit_days)
        )
        if self.white.lower() == self.black.lower():
            raise BadRequest("A board needs two different players.")
        (white, made_white), (black, made_black) = (
            computer.account_for(world, self.white),
            computer.account_for(world, self.black),
        )
        made = (*made_white, *made_black)  # the computer's account, the first time
        for player in (white, black):
            if not player.active:
                raise NotConfirmed(f"{player.display} has not confirmed the account yet.")
        challenger = None
        if not self.admin:
            sender = (self.sender or "").lower()
            challenger = next((p for p in (white, black) if p.email.lower() == sender), None)
            if challenger is None:
                raise NotAPlayer(
                    f"Only {white.display} or {black.display} can start a board for them; "
                    "send the challenge from your registered address."
                )
        players = (white.userid, black.userid)
        if challenger is not None and world.config.computer.account not in players:
            _within_the_limits(world, challenger, black if challenger is white else white)
        computer_level = computer.check_challenge(world, rules, players, level)
        state = rules.new(self.variant or rules.variants[0], chosen)
        now = world.now
        board = replace(
            Board.new(
                world.next_board_number(),
                rules.name,
                state,
                white,
                black,
                time_control=control.spec,
                nag_days=nag,
                forfeit_days=forfeit,
                now=now,
                challenger=challenger.userid if challenger is not None else None,
                computer_level=computer_level,
                reminders=world.config.clock.reminders,
            ),
            vacations=(*world.vacations(white.userid), *world.vacations(black.userid)),
            pauses=world.pauses(),
        )
        if challenger is None:
            replies = board_mails(board, now, f"New board {board.number} started.")
            return Decision(replies, (*made, BoardChange(None, board)))
        days = world.config.clock.challenge_days
        return Decision(
            challenge_mails(board, self.comment, now, days), (*made, BoardChange(None, board))
        )

    def _control(self, site: ClockConfig) -> TimeControl:
        """The board's time control: the one asked for, else the site's."""
        if self.time is not None:
            try:
                return parse_time_control(self.time)
            except BadTimeControl as exc:
                raise BadRequest(str(exc)) from None
        if self.nag_days is not None or self.forfeit_days is not None:
            nag = site.nag_days if self.nag_days is None else self.nag_days
            forfeit = site.forfeit_days if self.forfeit_days is None else self.forfeit_days
            if nag < 1 or forfeit < 1:
                raise BadRequest(
                    "Reminder and forfeit times are whole numbers of days, at least 1."
                )
            return TimeControl.classic(nag, forfeit)
        return site.default_control()


def _within_the_limits(world: World, challenger: Account, challenged: Account) -> None:
    """Refuse a challenge past the limits on open challenges (``SENT_AT_ONCE``,
    ``RECEIVED_AT_ONCE``, one a pair)."""
    mine = open_challenges(world.session, challenger.userid)
    if any({c.challenger, c.challenged} == {challenger.userid, challenged.userid} for c in mine):
        raise BadRequest(
            f"A challenge between {challenger.display} and {challenged.display} waits for an "
            "answer already; one at a time."
        )
    if sum(c.challenger == challenger.userid for c in mine) >= SENT_AT_ONCE:
        raise BadRequest(
            f"{challenger.display} has {SENT_AT_ONCE} challenges waiting for an answer, the "
            "most at once: wait for them, or take one back with cancel."
        )
    theirs = open_challenges(world.session, challenged.userid)
    if sum(c.challenged == challenged.userid for c in theirs) >= RECEIVED_AT_ONCE:
        raise BadRequest(
            f"{challenged.display} has {RECEIVED_AT_ONCE} challenges waiting for an answer, "
            "the most at once: try again later."
        )


def _clock_words(board: Board) -> str:
    control = control_of(board)
    return control_meaning(control) if control.kind is Kind.CLASSIC else control_words(control)


def challenge_mails(
    board: Board, comment: str, now: datetime, days: int = CHALLENGE_DAYS
) -> list[Reply]:
    """The challenge for the challenged player (answerable by reply), a note for the other;
    it lapses after ``days``."""
    assert board.challenger is not None
    rules = board.rules
    me = board.people[board.challenger]
    them = board.people[board.player_at(1 - (board.seat_of(me.userid) or 0))]
    seat = rules.seat_names[board.seat_of(me.userid) or 0]
    until = fmt_time(board.created_at + timedelta(days=days))
    options = ", ".join(f"{k}={v}" for k, v in sorted(board.options.items()))
    what = f"{rules.title} ({board.variant}{', ' + options if options else ''})"
    lines = wrap(
        f"{me.display} challenges you to a game of {what} on board {board.number}, "
        f"{me.display} playing {seat}; {_clock_words(board)}."
    )
    if comment.strip():
        lines += [f"{me.display} writes:", *wrap(comment.strip(), indent="  > ")]
    lines += [
        "",
        *wrap(
            f"To play, reply to this mail with {verbs.ACCEPT}; to refuse, reply with "
            f"{verbs.REJECT}. Or send: {board.game} {verbs.ACCEPT} {board.number} "
            f"{them.display} PASSWORD (or {verbs.REJECT}). The challenge lapses on {until} "
            "if you do not answer."
        ),
    ]
    challenge = Reply(
        to=them.email,
        subject=f"{board.title()} - challenge from {me.display}",
        body="\n".join(lines) + "\n",
        board=board.number,
        reply_as=them.userid,
        kind=MailKind.CHALLENGE,  # never his answer allowance: he did not ask for it
    )
    waiting = note(
        me.email,
        f"{board.title()} - challenge sent",
        f"Board {board.number} waits for {them.display} to accept your challenge, until "
        f"{until}. To take it back, reply to this mail with "
        f"{verbs.listed(verbs.sendable(Reader.CHALLENGER))}.",
        board.number,
        kind=MailKind.NOTICE,
    )
    return [challenge, replace(waiting, reply_as=me.userid)]


@dataclass(frozen=True)
class ExpireChallenge:
    """A challenge left unanswered for ``clock.challenge_days`` lapses: the board is
    cancelled (its termination ``lapsed``), and both players are told."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        days = world.config.clock.challenge_days
        lapse = board.created_at + timedelta(days=days)
        if board.status != BoardStatus.WAITING or world.now < lapse or board.challenger is None:
            return Decision()
        after = replace(board, status=BoardStatus.CANCELLED, ended_at=world.now, termination=LAPSED)
        challenger = board.people[board.challenger]
        challenged = board.people[board.player_at(1 - (board.seat_of(board.challenger) or 0))]
        subject = f"{board.title()} - challenge lapsed"
        told = note(
            challenger.email,
            subject,
            f"Your challenge on board {board.number} lapsed: {challenged.display} did not "
            f"answer it within {days} days. Challenge again whenever you like.",
            board.number,
            kind=MailKind.NOTICE,
        )
        them = note(
            challenged.email,
            subject,
            f"{challenger.display}'s challenge on board {board.number} lapsed: it waited "
            f"{days} days for your answer. To play {challenger.display} after all, send: "
            f"{board.game} challenge {challenged.display} {challenger.display}",
            board.number,
            kind=MailKind.NOTICE,
        )
        return Decision((told, them), (BoardChange(board, after),))


def lapsed_challenges(session: Session, now: datetime, days: int = CHALLENGE_DAYS) -> list[int]:
    """The waiting boards older than ``days``."""
    return challenges_made_before(session, now - timedelta(days=days))
