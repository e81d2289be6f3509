"""An event in play: read, its boards made and started, a player withdrawn, its end.

``read_event`` gathers an event, its entries and its games; the standings
are computed from them each time (``standings``). ``start`` makes every
board at once from the Berger table (players seeded by rating) and tells
each player, in one mail, all his boards. ``withdraw`` applies ICCF's rule
(``withdrawal``); ``CheckEvent`` is what the timers do: withdraw a player with
two losses on time, end the event when its last game ends, start one whose
date has come.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pbm.games import Outcome, Result, Termination
from pbm.model import Board, BoardStatus, Standing
from pbm.refusals import BadRequest
from pbm.replies import MailKind, Reply
from pbm.store.events import (
    Entry,
    Event,
    EventGame,
    EventStatus,
    Kind,
    entries_of,
    event_games,
    load_entries,
    load_event,
)
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.changes import BoardChange, Change
from pbm.usecases.endings import finish
from pbm.usecases.events import withdrawal
from pbm.usecases.events.berger import MIN_PLAYERS, pairings
from pbm.usecases.events.crosstable import crosstable
from pbm.usecases.events.event_changes import (
    EntryChange,
    EventBoards,
    EventChange,
    NewBoards,
    event_key,
)
from pbm.usecases.events.new_boards import boards_mail, make_boards, seeding, title
from pbm.usecases.events.standings import Game, Line, standings
from pbm.usecases.text import fmt_time, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

DAY = timedelta(days=1)
SCORES = {Result.FIRST_SEAT_WINS: 1.0, Result.SECOND_SEAT_WINS: 0.0, Result.DRAW: 0.5}
LEAVING_RULE = (
    "Leaving (tournament leave T UID PASSWORD), or losing two games on time, withdraws "
    "a player: his unfinished games are resigned. If he had played fewer than half of "
    "his games, all of them are struck from the standings (results against him count "
    "for nobody); otherwise they stand, the resigned ones as losses. A player withdrawn "
    f"may join no new event for {withdrawal.BAR.days} days."
)


@dataclass(frozen=True)
class EventState:
    """An event, its entries (by draw number) and its games (by round)."""

    event: Event
    entries: Sequence[Entry]
    games: Sequence[EventGame]

    @property
    def players(self) -> list[str]:
        return [e.userid for e in self.entries]

    @property
    def struck(self) -> set[str]:
        return {e.userid for e in self.entries if e.struck}

    def entry(self, userid: str) -> Entry | None:
        return next((e for e in self.entries if e.userid == userid.lower()), None)

    @property
    def results(self) -> list[Game]:
        return [game_of(g) for g in self.games]

    def standings(self) -> list[Line]:
        return standings(self.players, self.results, self.struck)

    @property
    def over(self) -> bool:
        """Every game ended (or was cancelled)."""
        return bool(self.games) and all(g.status != BoardStatus.ACTIVE for g in self.games)


def game_of(g: EventGame) -> Game:
    """A board as the standings count it: White's score once it is finished."""
    done = g.status == BoardStatus.FINISHED and g.result is not None
    return Game(g.white, g.black, SCORES[g.result] if done and g.result else None, g.board)


def read_event(world: World, number: int) -> EventState:
    """The event ``number``; refused if there is none."""
    world.reads.add(event_key(number))
    event = load_event(world.session, number)
    if event is None:
        raise BadRequest(f"There is no tournament {number}; tournament list shows them.")
    entries = load_entries(world.session, [number])[number]
    games = event_games(world.session, [number])[number]
    return EventState(event, entries, games)


def time_losses(state: EventState, userid: str) -> int:
    """The games ``userid`` lost on time in the event."""
    return sum(
        1
        for g in state.games
        if g.termination == Termination.FORFEIT
        and g.result is not None
        and (g.white, g.black)[0 if g.result == Result.SECOND_SEAT_WINS else 1] == userid
        and g.result != Result.DRAW
    )


def names_of(world: World, userids: Iterable[str]) -> dict[str, str]:
    """Display names by userid."""
    return {uid: a.display for uid, a in world.accounts(list(userids)).items()}


def standings_text(state: EventState, names: Mapping[str, str]) -> list[str]:
    """The crosstable with its figures, and what the columns mean."""
    lines = crosstable(state.standings(), state.results, names)
    return [
        *lines,
        "",
        *wrap(
            "1 a win, = a draw, 0 a loss, . still played, - struck. Pts: points; then the "
            "tiebreaks in order: W wins, SB Sonneborn-Berger, DE direct encounter; a place "
            "still tied is shared (=)."
        ),
    ]


# ---------------------------------------------------------------- starting


def start(
    world: World, state: EventState, first_number: int, *, new: bool = False
) -> tuple[list[Change], list[Reply], int]:
    """The changes and mails that start ``state``'s event, its boards numbered from
    ``first_number``; and the next free board number. ``new``: the event and its
    entries are made in the same decision (a league's division)."""
    event, now = state.event, world.now
    if len(state.entries) < MIN_PLAYERS:
        raise BadRequest(
            f"{title(event)} has {len(state.entries)} players; a round robin needs {MIN_PLAYERS}."
        )
    people = world.accounts(state.players)
    order, seeded = seeding(world, event, state.entries)
    games = [
        (p.round, people[seeded[p.white - 1].userid], people[seeded[p.black - 1].userid])
        for p in pairings(len(seeded), event.double)
    ]
    boards = make_boards(world, event, games, first_number)
    changes: list[Change] = [
        EventChange(
            None if new else event, replace(event, status=EventStatus.PLAYING, started_at=now)
        ),
        *(
            EntryChange(None if new else before, after)
            for before, after in zip(order, seeded, strict=True)
        ),
        NewBoards([b for b, _ in boards]),
        EventBoards(event.number, [(b.number, r) for b, r in boards]),
    ]
    head = (
        f"{title(event)} has started: {len(seeded)} players, every game at once, time "
        f"control {event.time_control}."
    )
    mails = [
        boards_mail(event, people[e.userid], boards, people, head, "started", LEAVING_RULE)
        for e in seeded
    ]
    return changes, mails, first_number + len(boards)


# ---------------------------------------------------------------- withdrawing


def withdraw(
    world: World, state: EventState, userid: str, reason: str
) -> tuple[list[Change], list[Reply], list[Board]]:
    """``userid`` leaves the event in play (``reason``: left | time): his unfinished
    boards resigned, his results struck or standing by ICCF's rule; the changes, the
    mails (his one notice; his opponents' board mails) and the boards ended."""
    event, now = state.event, world.now
    entry = state.entry(userid)
    assert entry is not None
    mine = [g for g in state.games if userid in (g.white, g.black)]
    counted = [g for g in mine if g.status != BoardStatus.CANCELLED]
    finished = [g for g in counted if g.status == BoardStatus.FINISHED]
    active = [g.board for g in counted if g.status == BoardStatus.ACTIVE]
    strike = withdrawal.struck(len(finished), len(counted))
    world.preload(boards=active)
    carried: dict[str, Standing] = {}
    changes: list[Change] = []
    replies: list[Reply] = []
    ended: list[Board] = []
    me = world.account(userid)
    for number in active:
        board = world.board(number)
        before = replace(
            board,
            standings={
                **board.standings,
                **{u: s for u, s in carried.items() if u in board.players},
            },
        )
        seat = board.seat_of(userid) or 0
        after = finish(before, Outcome(1 - seat, Termination.RESIGN), now)
        carried.update(after.standings)
        changes.append(BoardChange(before, after))
        ended.append(after)
        other = board.name(board.player_at(1 - seat))
        headline = (
            f"{me.display} withdrew from {title(event)}: board {board.number} is resigned "
            f"and {other} wins."
        )
        replies += [r for r in board_mails(after, now, headline) if r.to != me.email]
    withdrawn = replace(entry, withdrawn_at=now, reason=reason, struck=strike)
    changes.append(EntryChange(entry, withdrawn))
    why = (
        f"You left {title(event)}."
        if reason == "left"
        else f"You were withdrawn from {title(event)}: you lost "
        f"{withdrawal.TIME_LOSSES} games on time."
    )
    text = [why]
    if active:
        text.append(f"Your unfinished boards ({', '.join(str(n) for n in active)}) are resigned.")
    if event.kind == Kind.CUP:
        text.append("Your match is lost: your opponent goes through.")
    elif strike:
        text.append(
            f"You had finished {len(finished)} of your {len(counted)} games, fewer than half: "
            "all your results are struck from the standings and count for nobody."
        )
    else:
        text.append(
            f"You had finished {len(finished)} of your {len(counted)} games, half or more: "
            "your results stand, and the resigned games count as losses."
        )
    text.append(
        f"You may join a new event from {fmt_time(withdrawal.barred_until(now))} "
        f"({withdrawal.BAR.days} days)."
    )
    body = "\n\n".join("\n".join(wrap(t)) for t in text) + "\n"
    replies.append(
        Reply(to=me.email, subject=f"{title(event)} - withdrawn", body=body, kind=MailKind.NOTICE)
    )
    return changes, replies, ended


def with_ended(state: EventState, ended: Iterable[Board], changes: Iterable[Change]) -> EventState:
    """``state`` as these boards and entries now are (decided, not yet written)."""
    done = {b.number: b for b in ended}
    games = [
        replace(
            g,
            status=done[g.board].status,
            result=done[g.board].result,
            termination=done[g.board].termination,
            ended_at=done[g.board].ended_at,
        )
        if g.board in done
        else g
        for g in state.games
    ]
    entries = {e.userid: e for e in state.entries}
    for c in changes:
        if isinstance(c, EntryChange) and c.after is not None:
            entries[c.after.userid] = c.after
    return replace(state, games=games, entries=[entries[e.userid] for e in state.entries])


def withdraw_late(world: World, state: EventState) -> tuple[list[Change], list[Reply], EventState]:
    """Every player with two losses on time withdrawn: the changes, the mails, and the
    event as it then is."""
    changes: list[Change] = []
    replies: list[Reply] = []
    for entry in state.entries:
        if entry.withdrawn_at is None and withdrawal.withdrawn_on_time(
            time_losses(state, entry.userid)
        ):
            made, told, ended = withdraw(world, state, entry.userid, "time")
            changes += made
            replies += told
            state = with_ended(state, ended, made)
    return changes, replies, state


def end_mails(world: World, state: EventState) -> list[Reply]:
    """Each player's mail at the event's end: the final standings."""
    event = state.event
    names = names_of(world, state.players)
    table = standings_text(state, names)
    winners = [
        names.get(x.player, x.player) for x in state.standings() if x.rank == 1 and not x.struck
    ]
    head = wrap(f"{title(event)} has ended. Won by {' and '.join(winners)}. Final standings:")
    body = "\n".join([*head, "", *table]) + "\n"
    people = world.accounts(state.players)
    return [
        Reply(
            to=a.email, subject=f"{title(event)} - final standings", body=body, kind=MailKind.NOTICE
        )
        for a in people.values()
    ]


def standing_bar(world: World, userid: str) -> tuple[Entry, datetime] | None:
    """The first of ``userid``'s withdrawals whose bar (``withdrawal.BAR``) still stands,
    and when it ends; None when none does."""
    for entry in entries_of(world.session, userid):
        if entry.withdrawn_at is None:
            continue
        until = withdrawal.barred_until(entry.withdrawn_at)
        if until > world.now:
            return entry, until
    return None


@dataclass(frozen=True)
class CheckEvent:
    """The timers' look at an event: start it when its date has come, withdraw a player
    with two losses on time, end it when its last game has ended."""

    event: int
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        state = read_event(world, self.event)
        event, now = state.event, world.now
        if event.status == EventStatus.OPEN:
            if event.starts_at is None or event.starts_at > now:
                return Decision()
            if len(state.entries) < MIN_PLAYERS:
                return cancel(
                    world,
                    state,
                    f"only {len(state.entries)} players joined by "
                    f"its start date, {fmt_time(event.starts_at)}",
                )
            begun, told, _ = start(world, state, world.next_board_number())
            return Decision(told, begun)
        if event.status != EventStatus.PLAYING:
            return Decision()
        changes, replies, state = withdraw_late(world, state)
        after = replace(event, checked_at=now)
        if state.over:
            after = replace(after, status=EventStatus.FINISHED, ended_at=now)
            replies += end_mails(world, state)
        return Decision(replies, [EventChange(event, after), *changes])


def cancel(world: World, state: EventState, why: str) -> Decision:
    """The event cancelled (``why``), its boards in play too; everyone in it told."""
    event, now = state.event, world.now
    active = [g.board for g in state.games if g.status == BoardStatus.ACTIVE]
    world.preload(boards=active)
    changes: list[Change] = [
        EventChange(event, replace(event, status=EventStatus.CANCELLED, ended_at=now))
    ]
    for number in active:
        board = world.board(number)
        changes.append(
            BoardChange(board, replace(board, status=BoardStatus.CANCELLED, ended_at=now))
        )
    text = f"{title(event)} is cancelled: {why}."
    if active:
        text += " Its boards still in play are cancelled too, unrated."
    people = world.accounts(state.players)
    replies = [
        Reply(
            to=a.email,
            subject=f"{title(event)} - cancelled",
            body="\n".join(wrap(text)) + "\n",
            kind=MailKind.NOTICE,
        )
        for a in people.values()
    ]
    return Decision(replies, changes)
