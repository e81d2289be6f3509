"""Tournaments by mail and by the admin: opened, joined, left, started, cancelled, listed
and shown. The play itself (boards, withdrawals, the end) is ``running``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from pbm.games import BadOption, Result
from pbm.model import BoardStatus, rules_of
from pbm.refusals import BadRequest
from pbm.replies import Reply
from pbm.store.events import (
    Entry,
    Event,
    EventStatus,
    Kind,
    event_games,
    load_entries,
    load_events,
    next_event_number,
)
from pbm.usecases.auth import Actor
from pbm.usecases.changes import BoardChange, Change
from pbm.usecases.events import bracket as cup_rules
from pbm.usecases.events import withdrawal
from pbm.usecases.events.berger import MAX_PLAYERS, MIN_PLAYERS
from pbm.usecases.events.cups import CUP_RULE, cup_lines, start_cup
from pbm.usecases.events.event_changes import EntryChange, EventChange
from pbm.usecases.events.new_boards import control_of, title
from pbm.usecases.events.running import (
    LEAVING_RULE,
    EventState,
    cancel,
    names_of,
    read_event,
    standing_bar,
    standings_text,
    start,
    withdraw,
)
from pbm.usecases.moves import acting
from pbm.usecases.site import Site
from pbm.usecases.text import fmt_time, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

__all__ = ["LEAVING_RULE"]


def _answer(to: str, subject: str, lines: list[str]) -> Reply:
    return Reply(to=to, subject=subject, body="\n".join(lines) + "\n")


@dataclass(frozen=True)
class CreateEvent:
    """Open a round robin for entries (the admin's ``pbm tournament create``)."""

    game: str
    players: int
    time: str | None = None
    double: bool = False
    starts_at: datetime | None = None
    vacation_days: int | None = None
    variant: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None
    kind: str = Kind.ROUND_ROBIN
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        rules = rules_of(self.game)
        cup = self.kind == Kind.CUP
        if self.kind not in (Kind.ROUND_ROBIN, Kind.CUP):
            raise BadRequest(f"An event is a roundrobin or a cup, not {self.kind!r}.")
        low, high = (
            (cup_rules.MIN_PLAYERS, cup_rules.MAX_PLAYERS)
            if cup
            else (
                MIN_PLAYERS,
                MAX_PLAYERS,
            )
        )
        if not low <= self.players <= high:
            what = "A cup" if cup else "A round robin"
            raise BadRequest(f"{what} has {low} to {high} players, not {self.players}.")
        if cup and self.double:
            raise BadRequest("A cup is played in matches of two games already: no --double.")
        if self.vacation_days is not None and self.vacation_days < 0:
            raise BadRequest("The vacation days of an event are 0 or more.")
        variant = self.variant or rules.variants[0]
        try:
            options = rules.check_options(variant, dict(self.options))
        except BadOption as exc:
            raise BadRequest(str(exc)) from None
        spec = control_of(self.time)[0] if self.time else world.config.clock.default_control().spec
        if self.starts_at is not None and self.starts_at <= world.now:
            raise BadRequest(f"The start date {fmt_time(self.starts_at)} has passed.")
        world.reads.add(("events", "new"))
        number = next_event_number(world.session)
        kind = "cup" if cup else "double round robin" if self.double else "round robin"
        event = Event(
            number=number,
            name=self.name or f"{rules.title} {kind} {number}",
            kind=Kind.CUP if cup else Kind.ROUND_ROBIN,
            game=rules.name,
            variant=variant,
            options=dict(options),
            time_control=spec,
            double=self.double,
            players=self.players,
            vacation_days=self.vacation_days,
            status=EventStatus.OPEN,
            version=0,
            created_at=world.now,
            starts_at=self.starts_at,
        )
        return Decision(changes=(EventChange(None, event),))


@dataclass(frozen=True)
class JoinEvent:
    """``tournament join T UID PW``: enter an open event; a full one starts at once."""

    event: int
    sender: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor).account
        state = read_event(world, self.event)
        event = state.event
        name = title(event)
        if event.kind == Kind.DIVISION:
            raise BadRequest(
                f"{name} is a league division; join the league: league join "
                f"{event.game} {me.display} PASSWORD."
            )
        if event.status == EventStatus.CANCELLED:
            raise BadRequest(f"{name} was cancelled; tournament list shows the events open.")
        if event.status != EventStatus.OPEN:
            raise BadRequest(
                f"{name} started on {fmt_time(event.started_at)}: it takes no more players; "
                "tournament list shows the events open."
            )
        mine = state.entry(me.userid)
        if mine is not None:
            raise BadRequest(f"You are in {name} already (since {fmt_time(mine.joined_at)}).")
        if len(state.entries) >= event.players:
            raise BadRequest(f"{name} is full ({event.players} players).")
        _not_barred(world, me.userid)
        entry = Entry(event.number, me.userid, world.now)
        joined = replace(state, entries=[*state.entries, entry])
        count = len(joined.entries)
        changes: list[Change] = [EntryChange(None, entry)]
        text = [
            f"You joined {name}: {event.game} {event.variant}, time control "
            f"{event.time_control}, {count} of {event.players} players.",
        ]
        mails: list[Reply] = []
        if count == event.players:
            made, mails, _ = begin(world, joined, world.next_board_number())
            # The entry is new: its seed goes in with it (its change made above).
            seeded = {
                c.after.userid: c.after for c in made if isinstance(c, EntryChange) and c.after
            }
            changes = [
                EntryChange(None, seeded[me.userid]),
                *(
                    c
                    for c in made
                    if not (isinstance(c, EntryChange) and c.after and c.after.userid == me.userid)
                ),
            ]
            text.append("It is full and starts now: your boards follow.")
        else:
            # The event's version moves on: two joins at once cannot both take its last
            # places (the second is decided again, and starts it or is refused).
            changes.append(EventChange(event, event))
            when = f"on {fmt_time(event.starts_at)}" if event.starts_at else "when it is full"
            text.append(f"It starts {when}.")
        text.append(CUP_RULE if event.kind == Kind.CUP else LEAVING_RULE)
        body = [line for t in text for line in [*wrap(t), ""]]
        reply = _answer(self.sender, f"{name} - joined", body[:-1])
        return Decision((reply, *mails), changes)


def begin(
    world: World, state: EventState, first_number: int
) -> tuple[list[Change], list[Reply], int]:
    """Start an event as its kind starts: a round robin, or a cup."""
    if state.event.kind == Kind.CUP:
        return start_cup(world, state, first_number)
    return start(world, state, first_number)


def _not_barred(world: World, userid: str) -> None:
    """Refuse a player withdrawn from an event less than ``withdrawal.BAR`` ago."""
    world.reads.add(("entries", userid))
    bar = standing_bar(world, userid)
    if bar is not None:
        entry, until = bar
        raise BadRequest(
            f"You were withdrawn from tournament {entry.event} on "
            f"{fmt_time(entry.withdrawn_at)}: you may join a new event from "
            f"{fmt_time(until)} ({withdrawal.BAR.days} days after)."
        )


@dataclass(frozen=True)
class LeaveEvent:
    """``tournament leave T UID PW``: leave an event (ICCF's rule once it is played)."""

    event: int
    sender: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor).account
        state = read_event(world, self.event)
        event = state.event
        name = title(event)
        mine = state.entry(me.userid)
        if mine is None:
            raise BadRequest(f"You are not in {name}.")
        if mine.withdrawn_at is not None:
            raise BadRequest(f"You left {name} already, on {fmt_time(mine.withdrawn_at)}.")
        if event.status == EventStatus.OPEN:
            reply = _answer(
                self.sender,
                f"{name} - left",
                wrap(f"You left {name} before it started; nothing else changes."),
            )
            return Decision((reply,), (EntryChange(mine, None), EventChange(event, event)))
        if event.status != EventStatus.PLAYING:
            raise BadRequest(f"{name} is {event.status.value}: there is nothing to leave.")
        changes, replies, _ = withdraw(world, state, me.userid, "left")
        return Decision(replies, changes)


@dataclass(frozen=True)
class StartEvent:
    """``pbm tournament start T``: start an open event with those who joined."""

    event: int
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        state = read_event(world, self.event)
        if state.event.status != EventStatus.OPEN:
            raise BadRequest(f"{title(state.event)} is {state.event.status.value}, not open.")
        changes, replies, _ = begin(world, state, world.next_board_number())
        return Decision(replies, changes)


@dataclass(frozen=True)
class CancelEvent:
    """``pbm tournament cancel T``: the event and its boards in play cancelled."""

    event: int
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        state = read_event(world, self.event)
        if state.event.status not in (EventStatus.OPEN, EventStatus.PLAYING):
            raise BadRequest(f"{title(state.event)} is {state.event.status.value} already.")
        return cancel(world, state, "the admin cancelled it")


@dataclass(frozen=True)
class EventLine:
    """One event as a list shows it."""

    event: Event
    entries: int
    games: int
    finished: int

    def text(self) -> str:
        e = self.event
        if e.status == EventStatus.OPEN:
            when = f"starts {fmt_time(e.starts_at)}" if e.starts_at else "starts when full"
            state = f"open: {self.entries} of {e.players} players, {when}"
        elif e.status == EventStatus.PLAYING:
            state = f"in play: {self.finished} of {self.games} games over"
        else:
            state = e.status.value
        double = ", double" if e.double else ""
        return f"{e.number:>4}  {e.name} ({e.game} {e.variant}, {e.time_control}{double}): {state}"


def event_lines(world: World, statuses: tuple[str, ...]) -> list[EventLine]:
    """The events of ``statuses``, with their counts."""
    world.reads.add(("events", "all"))
    found = load_events(world.session, statuses)
    numbers = [e.number for e in found]
    entries = load_entries(world.session, numbers)
    games = event_games(world.session, numbers)
    return [
        EventLine(
            e,
            len(entries[e.number]),
            len(games[e.number]),
            sum(g.status != BoardStatus.ACTIVE for g in games[e.number]),
        )
        for e in found
    ]


@dataclass(frozen=True)
class ListEvents:
    """``tournament list``: the events open to join and those in play."""

    sender: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        lines = event_lines(world, (EventStatus.OPEN, EventStatus.PLAYING))
        opened = [x.text() for x in lines if x.event.status == EventStatus.OPEN]
        playing = [x.text() for x in lines if x.event.status == EventStatus.PLAYING]
        body = ["Open to join (tournament join T UID PASSWORD):", *(opened or ["  none"]), ""]
        body += ["In play (tournament show T):", *(playing or ["  none"]), ""]
        body += wrap(LEAVING_RULE)
        return Decision((_answer(self.sender, "pbm - tournaments", body),))


def show_lines(world: World, state: EventState) -> list[str]:
    """What ``tournament show`` says of an event: its state, standings and crosstable."""
    event = state.event
    names = names_of(world, state.players)
    head = f"{title(event)}: {event.game} {event.variant}, time control {event.time_control}"
    if event.double:
        head += ", double round robin"
    if event.vacation_days is not None:
        head += f", at most {event.vacation_days} vacation days"
    lines = wrap(head + ".")
    if event.status == EventStatus.OPEN:
        joined = ", ".join(names.get(p, p) for p in state.players) or "nobody yet"
        lines += wrap(f"Open: {len(state.players)} of {event.players} players ({joined}).")
        return lines
    lines += wrap(f"{event.status.value.capitalize()} since {fmt_time(event.started_at)}.")
    if event.kind == Kind.CUP:
        return [*lines, "", *cup_lines(state, names)]
    lines += ["", *standings_text(state, names)]
    gone = [e for e in state.entries if e.withdrawn_at is not None]
    for e in gone:
        rule = "results struck" if e.struck else "results stand"
        lines += wrap(
            f"{names.get(e.userid, e.userid)} withdrew {fmt_time(e.withdrawn_at)} ({rule})."
        )
    return lines


@dataclass(frozen=True)
class ShowEvent:
    """``tournament show T``: the standings and the crosstable."""

    event: int
    sender: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        state = read_event(world, self.event)
        body = show_lines(world, state)
        return Decision((_answer(self.sender, f"{title(state.event)} - standings", body),))


# ---------------------------------------------------------------- for the shell


def listed(site: Site, statuses: tuple[str, ...]) -> list[EventLine]:
    """The events of ``statuses`` (the command line's list), on a snapshot."""
    with site.db.read() as session:
        return event_lines(World(session, site.config, site.clock()), statuses)


def shown(site: Site, number: int) -> list[str]:
    """``tournament show``'s lines for the command line, on a snapshot."""
    with site.db.read() as session:
        world = World(session, site.config, site.clock())
        return show_lines(world, read_event(world, number))


def newest(site: Site) -> int:
    """The number of the event opened last."""
    with site.db.read() as session:
        return next_event_number(session) - 1


@dataclass(frozen=True)
class CorrectResult:
    """``pbm tournament result T BOARD RESULT``: the admin corrects the result of a finished
    game of an event (a ruling, a mistake). The standings, computed from the games,
    follow; the ratings of the game stay as they were."""

    event: int
    number: int
    result: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        state = read_event(world, self.event)
        if self.number not in {g.board for g in state.games}:
            raise BadRequest(f"Board {self.number} is not a board of {title(state.event)}.")
        try:
            result = Result(self.result)
        except ValueError:
            raise BadRequest(
                f"A result is {', '.join(r.value for r in Result)}, not {self.result!r}."
            ) from None
        board = world.board(self.number)
        if board.status != BoardStatus.FINISHED:
            raise BadRequest(f"Board {self.number} is {board.status.value}: it has no result yet.")
        after = replace(board, result=result, termination="adjudication")
        return Decision(changes=(BoardChange(board, after),))
