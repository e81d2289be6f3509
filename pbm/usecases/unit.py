"""The unit of work: decide on a snapshot, write with compare-and-set, decide again if stale.

Every command, whether it came by mail, from the command line or from a
timer, is carried out the same way, for one command or a batch alike:

1. ``decide``: on a snapshot of the database, holding no lock, the acting
   player is authenticated and the use case's ``decide`` works out a
   ``Decision`` (the values to save, the replies to send) from what it reads
   in a ``World``, or raises ``Refused``;
2. ``write``: in one short write transaction, for each command in order and
   in a savepoint of its own: the Message-ID it came in (a second copy acts
   no more), its changes, each guarded by a compare-and-set, and its replies;
3. a command whose decision read something written since (by an earlier
   command of the batch, or by anyone: the compare-and-set fails) is decided
   again, by the same function, on values read inside the write transaction.

The write lock is held for the writing alone: authenticating (argon2id) and
deciding (the rules, the board mails) happen before it is taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from pbm.model import Board, BoardOf, Key, rules_of
from pbm.refusals import (
    AlreadyProcessed,
    BoardChanged,
    LockedOut,
    Refused,
    UnknownBoard,
    WrongPassword,
)
from pbm.replies import Reply
from pbm.store import Session, inbox, outbox
from pbm.store.accounts import first_userid_at
from pbm.store.lists import board_rows
from pbm.store.statements import Stale, savepoint
from pbm.usecases import limits
from pbm.usecases.answers import Quoted, one_answer, refusal_reply
from pbm.usecases.auth import (
    Actor,
    Password,
    Who,
    authenticate,
    hash_password,
    locked_out,
    needs_rehash,
)
from pbm.usecases.changes import AccountChange, BoardChange, Change, VacationChange
from pbm.usecases.extras import noted
from pbm.usecases.pictures.choice import pictured
from pbm.usecases.readers import addressed
from pbm.usecases.site import Site
from pbm.usecases.threads import threaded
from pbm.usecases.weblinks import linked
from pbm.usecases.world import World

ATTEMPTS = 3  # decisions of one command, before it is refused as too contended
LISTED_BOARDS = 10  # the open boards a refusal of an unknown board names


@dataclass(frozen=True)
class Decision:
    """What a command decided: the changes to save and the replies to send."""

    replies: Sequence[Reply] = ()
    changes: Sequence[Change] = ()

    @property
    def keys(self) -> frozenset[Key]:
        """What it writes."""
        return frozenset(k for change in self.changes for k in change.keys)


class Action(Protocol):
    """A use case bound to its arguments (``pbm.usecases.moves.Move``, ...)."""

    @property
    def board(self) -> int | None:
        """The board it acts on (a reply address must be for this board), if any."""
        ...

    def decide(self, world: World, actor: Actor | None) -> Decision:
        """The decision, from what ``world`` holds; raises ``Refused`` to refuse."""
        ...


@dataclass(frozen=True)
class Request:
    """An action to carry out, who asks for it, and the mail it came in.

    ``message_id`` is remembered with the change, so the same mail acts once;
    replies to ``sender`` are threaded under ``in_reply_to``. A refusal of a
    mailed command (``quoted``) is answered to ``sender`` (written, like a
    decision's replies, with the Message-ID, ``refusals.refusal_reply``);
    without ``quoted`` it changes nothing and is returned.
    """

    action: Action
    who: Who | None = None
    sender: str | None = None
    in_reply_to: str | None = None
    message_id: str | None = None
    quoted: Quoted | None = None
    envelope: str | None = None  # the SMTP envelope sender ("" for a bounce)


@dataclass
class Outcome:
    """What became of a request: the replies it wrote (of one command alone: as they went
    out, past the limits), or why not."""

    request: Request
    replies: tuple[Reply, ...] = ()
    refused: Refused | None = None
    already_done: bool = False
    changed: bool = False  # it wrote changes (a move, a new board...)


@dataclass
class Decided:
    """A request decided (or refused) on some world, and what the decision read."""

    request: Request
    actor: Actor | None
    decision: Decision | Refused
    reads: set[Key]


def decide(site: Site, world: World, request: Request, actor: Actor | None = None) -> Decided:
    """Authenticate (unless ``actor`` is known already) and decide one request."""
    with world.reading() as reads:
        try:
            if actor is None and request.who is not None:
                who, board = request.who, request.action.board
                actor = authenticate(
                    world, who, board, site.passwords, request.sender, request.envelope
                )
            decided = _rehashed(request.action.decide(world, actor), actor)
            decision: Decision | Refused = _address_works(decided, world, actor)
        except UnknownBoard as unknown:
            decision = _unknown_board(world, request, unknown)
        except Refused as exc:
            decision = exc
    return Decided(request, actor, decision, reads)


def _unknown_board(world: World, request: Request, refused: UnknownBoard) -> UnknownBoard:
    """``refused``, and the open boards of the player who asked by mail (his userid's, else
    his address's account's): the boards he may have meant."""
    if request.sender is None:
        return refused
    who = request.who
    userid = who.userid if who is not None else first_userid_at(world.session, request.sender)
    if userid is None:
        return refused
    rows = board_rows(world.session, "open", userid, None)
    boards = [f"{g.board} ({rules_of(g.game).title}, {g.white} vs {g.black})" for g in rows]
    if len(boards) > LISTED_BOARDS:
        boards[LISTED_BOARDS:] = [f"and {len(rows) - LISTED_BOARDS} more (games {userid})"]
    more = f"Your open boards: {', '.join(boards)}." if boards else "You have no open boards."
    told = UnknownBoard(f"{refused.message} {more}")
    told.mistake = refused.mistake
    return told


def _rehashed(decision: Decision, actor: Actor | None) -> Decision:
    """The decision, and a hash of an older kind or cost made anew from the password given."""
    if actor is None or not isinstance(actor.credentials, Password):
        return decision
    account = actor.account
    if not needs_rehash(account.password_hash):
        return decision
    if any(
        isinstance(c, AccountChange) and c.after.userid == account.userid for c in decision.changes
    ):
        return decision  # the decision changes the account itself (a new password, say)
    new = replace(account, password_hash=hash_password(actor.credentials.password))
    return replace(decision, changes=(AccountChange(account, new), *decision.changes))


def _address_works(decision: Decision, world: World, actor: Actor | None) -> Decision:
    """The decision, and the end of its actor's bounce (``pbm.usecases.bounces``): he
    wrote, so his address works again."""
    if actor is None or not actor.account.bouncing:
        return decision
    ended = [
        VacationChange(v, replace(v, ends_at=world.now))
        for v in world.vacations(actor.userid)
        if v.kind == "bounce" and v.ends_at > world.now
    ]
    return replace(decision, changes=(*decision.changes, *ended))


def world_for(
    site: Site, session: Session, requests: Sequence[Request], *, boards: bool = True
) -> World:
    """A world on ``session`` (a snapshot) with what ``requests`` act on read at once:
    the accounts, and the boards unless ``boards`` is False (``preload`` reads them later)."""
    world = World(session, site.config, site.clock())
    preload(world, requests, boards=boards)
    return world


def preload(world: World, requests: Sequence[Request], *, boards: bool = True) -> None:
    """Read the accounts ``requests`` name and, unless ``boards`` is False, the boards
    they act on, all at once."""
    world.preload(
        boards=[r.action.board for r in requests if boards and r.action.board is not None],
        accounts=[r.who.userid for r in requests if r.who is not None],
    )
    world.reads.clear()  # what a decision reads is counted when it decides


def decide_all(site: Site, session: Session, requests: Sequence[Request]) -> list[Decided]:
    """Decide every request on one session (a snapshot), what they act on read at once."""
    world = world_for(site, session, requests)
    return [decide(site, world, r) for r in requests]


class _Undo(Exception):
    """Roll a refused command's savepoint back: nothing of it is kept."""


def write(
    site: Site,
    session: Session,
    decided: Sequence[Decided],
    world: World | None = None,
    *,
    sender: str | None = None,
) -> list[Outcome]:
    """Carry out decided requests in the caller's write transaction, in order.

    ``world``: the write transaction's own (if the requests were decided on
    it); otherwise one is made, for the requests that must be decided again.
    Their replies to ``sender`` (the mail's) go in one reply
    (``answers.one_answer``); all of them pass the site's limits on automatic
    mail (``limits.screen``) and go into the outbox, in this transaction.
    """
    return Writer(site, session, world).write(decided, sender)


class Writer:
    """``write``'s state: what was written so far in the transaction (a decision that
    read it is decided again)."""

    def __init__(self, site: Site, session: Session, world: World | None = None) -> None:
        self.site = site
        self.session = session
        self.now = site.clock()
        self.world = world or World(session, site.config, self.now, lock=True)
        self.written: set[Key] = set()

    def write(self, decided: Sequence[Decided], sender: str | None = None) -> list[Outcome]:
        """Write ``decided``, in order, and queue their replies; their outcomes."""
        outcomes = [self._write(item) for item in decided]
        site, now = self.site, self.now
        prepared = [r for o in outcomes for r in o.replies]
        gathered = one_answer(prepared, sender, site.config.web.base)
        queued = limits.screen(self.session, gathered, now, site.config.limits)
        outbox.enqueue(self.session, queued, site.mail_domain, now, site.due(now))
        if len(outcomes) == 1:  # one command: its replies as they went out
            outcomes[0].replies = tuple(queued)
        return outcomes

    def _write(self, item: Decided) -> Outcome:
        site, session, world = self.site, self.session, self.world
        current = item
        stale = bool(current.reads & self.written)
        for _ in range(ATTEMPTS):
            if stale:  # decide again, on values read in this transaction
                world.forget(current.reads)
                current = decide(site, world, item.request)
            try:
                outcome = _write_one(site, session, current, world)
                break
            except Stale:
                stale = True
        else:
            contended = BoardChanged(
                "Another command changed the same data at the same moment; nothing was "
                "done. Look at the board and send your command again."
            )
            contended.mistake = False
            current = Decided(item.request, None, contended, current.reads)
            outcome = _write_one(site, session, current, world)
        if not outcome.already_done:
            keys = _keys(current.decision)
            self.written |= keys
            world.forget(keys)
        return outcome


def _write_one(site: Site, session: Session, item: Decided, world: World) -> Outcome:
    """Write one decided request in a savepoint of its own: all of it, or nothing.

    Each reply gets its reader's reply address (``readers.addressed``).

    Raises ``Stale`` when a change finds its values changed (or a unique key taken
    meanwhile, ``pbm.store.statements.savepoint``): the savepoint is rolled back and
    the caller decides again.
    """
    request, decision = item.request, item.decision
    outcome = Outcome(request)
    now = world.now
    try:
        with savepoint(session):
            if request.message_id and not inbox.remember(session, request.message_id, now):
                raise AlreadyProcessed(request.message_id)
            _no_guess_past_the_lockout(world, item)
            if isinstance(decision, Refused):
                outcome.refused = decision
                if request.quoted is None or request.sender is None:
                    raise _Undo
                for change in decision.changes:  # what a refusal must remember
                    change.save(session)
                replies = tuple(decision.notices)
                if not decision.silent:
                    replies += (refusal_reply(request.sender, decision, request.quoted),)
            else:
                for change in decision.changes:
                    change.save(session)
                _forget_replaced_passwords(site, decision.changes)
                replies = tuple(decision.replies)
                outcome.changed = bool(decision.changes)
            board_of = _boards_as_decided(world, decision.changes)
            replies = tuple(
                pictured(
                    world,
                    linked(
                        world,
                        threaded(
                            noted(world, addressed(world, r), request.sender, board_of), board_of
                        ),
                        board_of,
                    ),
                    board_of,
                )
                for r in _threaded(replies, request)
            )
            # The computer player reads no mail: none is sent it.
            outcome.replies = tuple(
                r for r in replies if r.to.lower() != site.config.computer.address
            )
    except AlreadyProcessed:
        outcome.already_done = True
    except _Undo:
        pass
    return outcome


def _boards_as_decided(world: World, changes: Sequence[Change]) -> BoardOf:
    """The boards replies show (their picture, their page): as the decision left them,
    the others as the world read them."""
    decided = {c.after.number: c.after for c in changes if isinstance(c, BoardChange)}

    def board_of(number: int) -> Board | None:
        if number in decided:
            return decided[number]
        try:
            return world.board(number)
        except UnknownBoard:
            return None

    return board_of


def _no_guess_past_the_lockout(world: World, item: Decided) -> None:
    """A decision that checked a password stands only if the account was not locked out
    meanwhile (``Stale``: decided again, and refused as locked out then).

    Two server instances may check two guesses at the same moment, each on a
    snapshot that shows one failure fewer than the lockout: the account's row
    is locked while its failures are counted again here, so the one written
    second sees the first's failure and no guess past the limit is let in.
    """
    who, decision = item.request.who, item.decision
    if who is None or not isinstance(who.credentials, Password) or isinstance(decision, LockedOut):
        return
    checked = item.actor is not None or isinstance(decision, WrongPassword)
    if isinstance(decision, Refused) and not checked:
        return  # refused before the password was looked at (no such account, say)
    world.lock_account(who.userid)
    if locked_out(world, who.userid):
        raise Stale


def _forget_replaced_passwords(site: Site, changes: Sequence[Change]) -> None:
    """A password changed (or rehashed): what was remembered of the old hash goes."""
    for change in changes:
        if not isinstance(change, AccountChange) or change.before is None:
            continue
        if change.before.password_hash != change.after.password_hash:
            site.passwords.forget(change.before.password_hash)


def _keys(decision: Decision | Refused) -> frozenset[Key]:
    """What a decision (or a refusal that remembers something) writes."""
    changes: Sequence[Change] = decision.changes
    return frozenset(k for change in changes for k in change.keys)


def _threaded(replies: Sequence[Reply], request: Request) -> tuple[Reply, ...]:
    """Replies to the sender go in the thread of the mail that asked."""
    sender, parent = request.sender, request.in_reply_to
    if not (sender and parent):
        return tuple(replies)
    return tuple(
        replace(r, in_reply_to=parent) if r.to.lower() == sender.lower() else r for r in replies
    )


def run(
    site: Site,
    action: Action,
    who: Who | None = None,
    *,
    sender: str | None = None,
    message_id: str | None = None,
    in_reply_to: str | None = None,
) -> tuple[Reply, ...]:
    """Carry out one action in a transaction of its own; its replies.

    Raises the ``Refused`` when it is refused (nothing changes) and
    ``AlreadyProcessed`` when ``message_id`` was acted on before.
    """
    request = Request(action, who, sender, in_reply_to or message_id, message_id)
    with site.db.transaction() as session:
        world = World(session, site.config, site.clock(), lock=True)
        decided = decide(site, world, request)
        (outcome,) = write(site, session, [decided], world)
    if outcome.already_done:
        raise AlreadyProcessed(message_id)
    if outcome.refused is not None:
        raise outcome.refused
    return outcome.replies
