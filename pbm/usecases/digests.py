"""Digest mail: one mail at a player's chosen times, in place of a mail for every move.

``notify UID PW digest 08:00 Europe/Berlin`` (``SetNotify``) chooses it, ``notify UID
PW each`` (the default) goes back. A player's digest (``SendDigest``, carried out by
the timers at his times) lists every board that waits for his move, the least time
left first, each with the opponent's last move, its diagram (a picture in the HTML
part) and the time left; a reply to it moves on several boards at once, a line
``B: MOVE`` each (``pbm.mail.digest_replies``). Meanwhile the board mails that can wait (his
opponent moved: ``MailKind.MOVED``) are not sent him (``limits.screen``): what cannot wait
still comes at once (challenges, undo and draw requests, a game's end, the last
reminder).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbm.model import Account, Digest, Key
from pbm.refusals import BadRequest
from pbm.replies import MailKind, Reply
from pbm.store import Session
from pbm.store.digests import due_digests, load_digest, save_digest
from pbm.timecontrol import duration_words
from pbm.usecases.auth import Actor
from pbm.usecases.boardtext import diagram
from pbm.usecases.moves import acting
from pbm.usecases.pictures.choice import board_picture, draws_pictures
from pbm.usecases.readers import account_nonce
from pbm.usecases.schedule import BadSchedule, Schedule, read_schedule
from pbm.usecases.text import fmt_time, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.waiting import Waiting, boards_of, waiting_for
from pbm.usecases.world import World

EACH = "each"
DIGEST = "digest"


def digest_key(userid: str) -> Key:
    return ("digest", userid.lower())


def calendar_url(base_url: str, userid: str) -> str:
    """The address of a player's deadlines as a calendar (``pbm.web``)."""
    return f"{base_url.rstrip('/')}/players/{userid.lower()}/deadlines.ics"


def digest_reply_key(account: Account) -> str:
    """``Reply.reply_key`` of a digest: a reply to it moves on the boards it lists."""
    return f"digest:{account_nonce(account)}"


@dataclass(frozen=True)
class DigestChange:
    """A player's digest plan as it was and is to be (None: a mail for every move)."""

    userid: str
    before: Digest | None
    after: Digest | None

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({digest_key(self.userid)})

    def save(self, session: Session) -> None:
        save_digest(session, self.before, self.after)


def plan_of(world: World, userid: str) -> Digest | None:
    world.reads.add(digest_key(userid))
    return load_digest(world.session, userid)


def digests_due(world: World) -> list[str]:
    """The players whose digest is due now (an index: nothing else is read)."""
    return due_digests(world.session, world.now)


def schedule_of(plan: Digest) -> Schedule:
    return read_schedule([plan.times, plan.zone])


@dataclass(frozen=True)
class SetNotify:
    """How the acting player's board mails come: ``each`` (one a move), or ``digest
    TIMES [ZONE]`` (one mail at those times)."""

    spec: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        before = plan_of(world, me.userid)
        words = self.spec.split()
        if not words or words[0].lower() not in (EACH, DIGEST):
            raise BadRequest("notify takes each, or digest HH:MM[,HH:MM] [TIMEZONE].")
        by = "The site admin set it: " if me.is_admin else ""
        if words[0].lower() == EACH:
            if len(words) > 1:
                raise BadRequest("notify ... each takes nothing after it.")
            text = f"{by}Board mails come to {me.display} again as they happen: one for every move."
            change = DigestChange(me.userid, before, None) if before is not None else None
        else:
            try:
                schedule = read_schedule(words[1:])
            except BadSchedule as exc:
                raise BadRequest(str(exc)) from None
            first = schedule.next_after(world.now)
            after = Digest(me.userid, schedule.times_text, schedule.zone, first)
            change = DigestChange(me.userid, before, after)
            text = (
                f"{by}{me.display} gets a digest at {schedule.words()}: one mail with "
                "every board that waits for your move, the one with the least time left "
                f"first (the first comes on {fmt_time(first)}). Reply to it with a line "
                "for each board you move on: its number, a colon and your move "
                "(4: a1:C+b2). Challenges, draw offers, requests to take back a move, "
                "the end of a game and the last reminder still "
                f"come at once. Back to a mail for every move: notify {me.display} "
                "PASSWORD each"
            )
            base = world.config.web.base_url
            if base:
                text += f". Your deadlines in a calendar: {calendar_url(base, me.userid)}"
        reply = Reply(
            to=me.account.email,
            subject="pbm - notify",
            body="\n".join(wrap(text)) + "\n",
            kind=MailKind.NOTICE if me.is_admin else MailKind.ANSWER,
        )
        return Decision((reply,), (change,) if change is not None else ())


@dataclass(frozen=True)
class SendDigest:
    """``userid``'s digest, when it is due: the boards that wait for him (none: no mail),
    and when the next is due."""

    userid: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        plan = plan_of(world, self.userid)
        if plan is None or plan.next_at > world.now:
            return Decision()  # sent already, or no digest any more
        later = replace(plan, next_at=schedule_of(plan).next_after(world.now))
        change = DigestChange(plan.userid, plan, later)
        account = world.find_account(plan.userid)
        waiting = waiting_for(boards_of(world, plan.userid), plan.userid, world.now)
        if account is None or not account.active or not waiting:
            return Decision(changes=(change,))
        return Decision((digest_mail(world, account, waiting, later),), (change,))


def digest_mail(world: World, account: Account, waiting: list[Waiting], plan: Digest) -> Reply:
    """The digest of ``account``: every board of ``waiting``, in order, answerable by a
    reply of ``B: MOVE`` lines."""
    count = f"{len(waiting)} boards wait" if len(waiting) > 1 else "1 board waits"
    lines = wrap(
        f"{count} for your move, the one with the least time left first. To move, reply "
        "to this mail with a line for each board you move on: its number, a colon and "
        "your move (4: a1:C+b2). Each move is checked, and all are answered in one mail."
    )
    pictures = []
    for w in waiting:
        part = _board_part(w)
        lines += ["", *part]
        if account.format != "text" and draws_pictures(w.board.game):
            pictures.append(board_picture(w.board, w.seat, "\n".join(part), world.now))
    base = world.config.web.base_url
    lines.append("")
    if base:
        lines += wrap(f"Your deadlines in a calendar: {calendar_url(base, account.userid)}")
    lines += wrap(
        f"Your next digest: {fmt_time(plan.next_at)} ({schedule_of(plan).words()}). A mail "
        f"for every move again: notify {account.display} PASSWORD each"
    )
    return Reply(
        to=account.email,
        subject=f"pbm - digest: {count} for your move",
        body="\n".join(line.rstrip() for line in lines) + "\n",
        reply_as=account.userid,
        reply_key=digest_reply_key(account),
        kind=MailKind.DIGEST,
        picture=pictures[0] if pictures else None,
        pictures=tuple(pictures[1:]),
    )


def _board_part(w: Waiting) -> list[str]:
    """One board of a digest: who, the opponent's last move and comment, the time left,
    the diagram from the reader's side, how to answer."""
    board = w.board
    them = board.name(board.player_at(1 - w.seat))
    lines = [f"== {board.title()}, against {them} ({board.variant}) =="]
    if board.moves:
        last = board.moves[-1]
        number = board.move_number(last.ply)
        lines += wrap(
            f"{them} played {last.notation} (move {number}), {fmt_time(last.created_at)}."
        )
        if last.comment.strip():
            lines += [f"{them} writes:", *wrap(last.comment.strip(), indent="  > ")]
    else:
        lines.append("No moves yet.")
    due = board.move_number(board.ply + 1)
    lines += wrap(
        f"Your move {due}: {duration_words(w.left)} left, time out {fmt_time(w.time_out)}."
    )
    if board.draw_offer_by:
        lines.append(f"{board.name(board.draw_offer_by)} offers a draw.")
    lines += ["", diagram(board.game, board.position, w.seat, None, board.state), ""]
    example = board.state.example_move() or "MOVE"
    lines.append(f"Reply: {board.number}: YOUR-MOVE   (such as {board.number}: {example})")
    return lines
