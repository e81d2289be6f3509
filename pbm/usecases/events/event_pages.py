"""What the web site shows of events: the list (with the leagues), an event's page
(standings with every figure, the crosstable with each result a link to its game, the
boards) and a league's divisions; and their Atom feeds. Read on one snapshot each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pbm.games import Result
from pbm.model import BoardStatus, rules_of
from pbm.refusals import Refused
from pbm.store.events import Event, EventGame, EventStatus, Kind, event_games, load_league
from pbm.usecases.events.cups import cup_lines
from pbm.usecases.events.leagues import LeagueLine, league_lines, league_name, variant_of
from pbm.usecases.events.running import EventState, game_of, names_of, read_event
from pbm.usecases.events.standings import Line
from pbm.usecases.events.tournaments import EventLine, event_lines
from pbm.usecases.queries.pages import MAX_NUMBER, NotShown
from pbm.usecases.site import Site
from pbm.usecases.world import World

RESULTS = {Result.FIRST_SEAT_WINS: "1-0", Result.SECOND_SEAT_WINS: "0-1", Result.DRAW: "½-½"}


@dataclass(frozen=True)
class Cell:
    """One result of a crosstable's cell, from the row's player's side, and its game."""

    mark: str  # 1, ½, 0, · (being played), - (struck)
    board: int


@dataclass(frozen=True)
class Row:
    line: Line
    name: str
    cells: Sequence[Sequence[Cell]]  # one list a column (the games between the two)
    index: int  # his own column


@dataclass(frozen=True)
class BoardLine:
    board: int
    round: int
    white: str
    black: str
    result: str  # 1-0, 0-1, ½-½, "in play", "cancelled"


@dataclass(frozen=True)
class EventPage:
    event: Event
    rows: Sequence[Row]
    boards: Sequence[BoardLine]
    withdrawn: Sequence[tuple[str, datetime, bool]]  # name, when, struck
    entrants: Sequence[str]
    cup: Sequence[str] = ()  # a cup's rounds, as text


@dataclass(frozen=True)
class EventsPage:
    lines: Sequence[EventLine]
    leagues: Sequence[LeagueLine]


@dataclass(frozen=True)
class FeedItem:
    id: str
    title: str
    path: str
    at: datetime
    summary: str


def _mark(state: EventState, me: str, g: EventGame) -> str:
    result = game_of(g)
    if result.score is None:
        return "·"
    if state.struck & {g.white, g.black}:
        return "-"
    mine = result.score if g.white == me else 1 - result.score
    return {1.0: "1", 0.5: "½", 0.0: "0"}[mine]


def page_of(world: World, state: EventState) -> EventPage:
    """An event's page from its state."""
    names = names_of(world, state.players)
    lines = state.standings()
    order = [x.player for x in lines]
    between: dict[frozenset[str], list[EventGame]] = {}
    for g in state.games:
        between.setdefault(frozenset((g.white, g.black)), []).append(g)
    rows: list[Row] = []
    for line in lines:
        me = line.player
        cells = [
            [
                Cell(_mark(state, me, g), g.board)
                for g in (between.get(frozenset((me, them)), []) if me != them else [])
            ]
            for them in order
        ]
        rows.append(Row(line, names.get(me, me), cells, len(rows)))
    boards = [
        BoardLine(
            g.board,
            g.round,
            names.get(g.white, g.white),
            names.get(g.black, g.black),
            RESULTS[g.result]
            if g.result is not None and g.status == BoardStatus.FINISHED
            else ("in play" if g.status == BoardStatus.ACTIVE else g.status.value),
        )
        for g in state.games
    ]
    gone = [
        (names.get(e.userid, e.userid), e.withdrawn_at, e.struck)
        for e in state.entries
        if e.withdrawn_at is not None
    ]
    entrants = [names.get(p, p) for p in state.players]
    cup = cup_lines(state, names) if state.event.kind == Kind.CUP and state.games else []
    return EventPage(state.event, rows, boards, gone, entrants, cup)


def event(site: Site, number: int) -> EventPage:
    """The page of event ``number``; ``NotShown`` if there is none."""
    if not 0 < number <= MAX_NUMBER:
        raise NotShown(number)
    with site.db.read() as session:
        world = World(session, site.config, site.clock())
        try:
            state = read_event(world, number)
        except Refused as exc:  # no such event: a 404
            raise NotShown(number) from exc
        return page_of(world, state)


def events(site: Site) -> EventsPage:
    """Every event by number, newest first, and the leagues."""
    with site.db.read() as session:
        world = World(session, site.config, site.clock())
        lines = event_lines(world, tuple(EventStatus))
        return EventsPage(lines[::-1], league_lines(world))


def league(site: Site, game: str, variant: str | None = None) -> tuple[str, list[EventPage]]:
    """A league's name and its season's divisions, top first; ``NotShown`` if none."""
    with site.db.read() as session:
        world = World(session, site.config, site.clock())
        try:
            found = load_league(session, rules_of(game).name, variant_of(game, variant))
        except Refused as exc:
            raise NotShown(game) from exc
        if found is None:
            raise NotShown(game)
        divisions = [
            x for line in league_lines(world) if line.league.id == found.id for x in line.divisions
        ]
        pages = [page_of(world, read_event(world, e.number)) for e in divisions]
        return league_name(found), pages


def feed_of(page: EventPage) -> list[FeedItem]:
    """An event's feed: its start, each game's result, its end; newest first."""
    e = page.event
    items = []
    if e.started_at is not None:
        items.append(
            FeedItem(
                f"/tournaments/{e.number}/started",
                f"{e.name} started",
                f"/tournaments/{e.number}",
                e.started_at,
                f"{len(page.entrants)} players: {', '.join(page.entrants)}.",
            )
        )
    if e.ended_at is not None:
        top = [r.name for r in page.rows if r.line.rank == 1 and not r.line.struck]
        items.append(
            FeedItem(
                f"/tournaments/{e.number}/ended",
                f"{e.name} {e.status.value}",
                f"/tournaments/{e.number}",
                e.ended_at,
                f"Won by {' and '.join(top)}." if e.status == "finished" else "Cancelled.",
            )
        )
    return sorted(items, key=lambda i: i.at, reverse=True)


def event_feed(site: Site, number: int) -> tuple[EventPage, list[FeedItem]]:
    """An event's page and its feed's entries: its start and end, and each game ended."""
    page = event(site, number)
    items = feed_of(page)
    with site.db.read() as session:
        ended = {g.board: g.ended_at for g in event_games(session, [number])[number]}
    for b in page.boards:
        at = ended.get(b.board)
        if at is not None and b.result in RESULTS.values():
            items.append(
                FeedItem(
                    f"/boards/{b.board}/result",
                    f"{b.white} - {b.black} {b.result}",
                    f"/boards/{b.board}",
                    at,
                    f"Board {b.board}, round {b.round}: {b.result}.",
                )
            )
    return page, sorted(items, key=lambda i: i.at, reverse=True)


def events_feed(site: Site) -> list[FeedItem]:
    """The events' feed: each event opened, started and ended; newest first."""
    listed = events(site)
    items = []
    for line in listed.lines:
        e = line.event
        path = f"/tournaments/{e.number}"
        items.append(
            FeedItem(
                f"{path}/opened",
                f"{e.name} opened",
                path,
                e.created_at,
                f"{e.game} {e.variant}, {e.players} players, {e.time_control}.",
            )
        )
        if e.started_at is not None:
            items.append(
                FeedItem(
                    f"{path}/started",
                    f"{e.name} started",
                    path,
                    e.started_at,
                    f"{line.entries} players.",
                )
            )
        if e.ended_at is not None:
            items.append(
                FeedItem(
                    f"{path}/ended",
                    f"{e.name} {e.status.value}",
                    path,
                    e.ended_at,
                    f"{e.name} is {e.status.value}.",
                )
            )
    return sorted(items, key=lambda i: i.at, reverse=True)[:100]


def league_feed(site: Site, game: str, variant: str | None = None) -> tuple[str, list[FeedItem]]:
    """A league's name and its feed: its season's divisions started and ended."""
    name, pages = league(site, game, variant)
    items = [i for p in pages for i in feed_of(p)]
    return name, sorted(items, key=lambda i: i.at, reverse=True)
