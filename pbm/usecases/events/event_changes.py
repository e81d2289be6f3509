"""Saving what an event's decision made: its row, its entries, its boards' links, a
league and its members; each guarded as the board changes are (``changes``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pbm.model import Board, Key, board_key
from pbm.store import Session
from pbm.store.boards import insert_boards
from pbm.store.events import (
    Entry,
    Event,
    League,
    Member,
    add_event_boards,
    save_entry,
    save_event,
    save_league,
    save_member,
)
from pbm.usecases.clocks import next_timer


def event_key(number: int) -> Key:
    return ("event", number)


def league_key(number: int) -> Key:
    return ("league", number)


@dataclass(frozen=True)
class EventChange:
    """An event as it was (None: new) and as it is to be."""

    before: Event | None
    after: Event

    @property
    def keys(self) -> frozenset[Key]:
        new = {("events", "new")} if self.before is None else set()
        return frozenset({event_key(self.after.number), *new})

    def save(self, session: Session) -> None:
        save_event(session, self.before, self.after)


@dataclass(frozen=True)
class EntryChange:
    """A player's entry in an event: new (``before`` None), changed, or gone (``after``
    None: he left before it started)."""

    before: Entry | None
    after: Entry | None

    @property
    def keys(self) -> frozenset[Key]:
        entry = self.after or self.before
        assert entry is not None
        return frozenset({event_key(entry.event), ("entries", entry.userid)})

    def save(self, session: Session) -> None:
        save_entry(session, self.before, self.after)


@dataclass(frozen=True)
class EventBoards:
    """The boards of an event, by round, linked to it (made in the same decision)."""

    event: int
    boards: Sequence[tuple[int, int]]

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({event_key(self.event)})

    def save(self, session: Session) -> None:
        add_event_boards(session, self.event, self.boards)


@dataclass(frozen=True)
class NewBoards:
    """An event's boards, made at once: inserted together (a board's own ``BoardChange``
    compiles a statement a board)."""

    boards: Sequence[Board]

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("boards", "new"), *(board_key(b.number) for b in self.boards)})

    def save(self, session: Session) -> None:
        insert_boards(session, [replace(b, timer_at=next_timer(b)) for b in self.boards])


@dataclass(frozen=True)
class LeagueChange:
    before: League | None
    after: League

    @property
    def keys(self) -> frozenset[Key]:
        new = {("leagues", "new")} if self.before is None else set()
        return frozenset({league_key(self.after.id), *new})

    def save(self, session: Session) -> None:
        save_league(session, self.before, self.after)


@dataclass(frozen=True)
class MemberChange:
    before: Member | None
    after: Member | None

    @property
    def keys(self) -> frozenset[Key]:
        member = self.after or self.before
        assert member is not None
        return frozenset({league_key(member.league)})

    def save(self, session: Session) -> None:
        save_member(session, self.before, self.after)
