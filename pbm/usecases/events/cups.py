"""A knockout cup in play (``cup`` is its arithmetic): started with its first round, each
next round made when the last match of a round is decided, a third game made for a
tied match, the champion told to everyone. The timers run ``CheckCup``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pbm.model import Account
from pbm.refusals import BadRequest
from pbm.replies import MailKind, Reply
from pbm.store.events import EventStatus
from pbm.usecases.auth import Actor
from pbm.usecases.changes import Change
from pbm.usecases.events import withdrawal
from pbm.usecases.events.bracket import MIN_PLAYERS, Match, Progress, bracket, progress
from pbm.usecases.events.event_changes import EntryChange, EventBoards, EventChange, NewBoards
from pbm.usecases.events.new_boards import boards_mail, make_boards, seeding, title
from pbm.usecases.events.running import (
    EventState,
    cancel,
    game_of,
    names_of,
    read_event,
    withdraw_late,
)
from pbm.usecases.text import fmt_time, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

CUP_RULE = (
    "A cup is played in matches of two games, colours swapped; a match tied after them "
    "is decided by a third game, in which the higher seed has White and must win (a "
    "draw sends Black through). Leaving (tournament leave T UID PASSWORD), or losing "
    "two games on time, withdraws a player: his unfinished games are resigned and his "
    f"opponent goes through. A player withdrawn may join no new event for "
    f"{withdrawal.BAR.days} days."
)


def seeds_of(state: EventState) -> list[str]:
    """The players by draw number."""
    return [e.userid for e in sorted(state.entries, key=lambda e: e.seed or 0)]


def where(state: EventState) -> Progress:
    """Where the cup stands, from its games."""
    games = [(g.round, game_of(g)) for g in sorted(state.games, key=lambda g: g.board)]
    return progress(seeds_of(state), games)


def _match_games(
    pairs: Sequence[tuple[str, str | None]], rnd: int, people: Mapping[str, Account]
) -> list[tuple[int, Account, Account]]:
    """Two games a match, the higher seed White in the first."""
    out = []
    for a, b in pairs:
        if b is not None:
            out += [(rnd, people[a], people[b]), (rnd, people[b], people[a])]
    return out


def start_cup(
    world: World, state: EventState, first_number: int
) -> tuple[list[Change], list[Reply], int]:
    """The changes and mails that start a cup: its first round's boards."""
    event, now = state.event, world.now
    if len(state.entries) < MIN_PLAYERS:
        raise BadRequest(
            f"{title(event)} has {len(state.entries)} players; a cup needs {MIN_PLAYERS}."
        )
    order, seeded = seeding(world, event, state.entries)
    uids = [e.userid for e in seeded]
    people = world.accounts(uids)
    pairs = [(uids[a - 1], uids[b - 1] if b else None) for a, b in bracket(len(uids))]
    boards = make_boards(world, event, _match_games(pairs, 1, people), first_number)
    changes: list[Change] = [
        EventChange(event, replace(event, status=EventStatus.PLAYING, started_at=now)),
        *(EntryChange(b, a) for b, a in zip(order, seeded, strict=True)),
        NewBoards([b for b, _ in boards]),
        EventBoards(event.number, [(b.number, r) for b, r in boards]),
    ]
    head = f"{title(event)} has started: a knockout cup of {len(uids)} players."
    mails = []
    for a, b in pairs:
        if b is None:
            text = f"{head} You have a bye in round 1: you are through to round 2."
            mails.append(_note(people[a], f"{title(event)} - started: a bye", [text, CUP_RULE]))
            continue
        for uid in (a, b):
            mails.append(boards_mail(event, people[uid], boards, people, head, "started", CUP_RULE))
    return changes, mails, first_number + len(boards)


def _note(to: Account, subject: str, text: Sequence[str]) -> Reply:
    body = "\n\n".join("\n".join(wrap(t)) for t in text) + "\n"
    return Reply(to=to.email, subject=subject, body=body, kind=MailKind.NOTICE)


def _line(m: Match, names: Mapping[str, str]) -> str:
    a = names.get(m.a, m.a)
    if m.b is None:
        return f"  {a:<14} bye"
    b = names.get(m.b, m.b)
    score = f"{m.points[0]:g}-{m.points[1]:g}"
    boards = ",".join(str(g.board) for g in m.games)
    state = f"-> {names.get(m.winner, m.winner)}" if m.winner else "being played"
    return f"  {a:<14} - {b:<14} {score:<7} {state}  (boards {boards})"


def cup_lines(state: EventState, names: Mapping[str, str]) -> list[str]:
    """The cup round by round: each match, its score and who went through."""
    found = where(state)
    lines: list[str] = []
    for i, matches in enumerate(found.rounds, 1):
        if lines:
            lines.append("")
        lines.append("Final" if len(matches) == 1 else f"Round {i}")
        lines += [_line(m, names) for m in matches]
    if found.champion is not None:
        lines += ["", f"Cup won by {names.get(found.champion, found.champion)}."]
    return lines


@dataclass(frozen=True)
class CheckCup:
    """The timers' look at a cup: start it at its date, withdraw a player with two
    losses on time, make third games and the next round, crown the champion."""

    event: int
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        state = read_event(world, self.event)
        event, now = state.event, world.now
        if event.status == EventStatus.OPEN:
            if event.starts_at is None or event.starts_at > now:
                return Decision()
            if len(state.entries) < MIN_PLAYERS:
                why = f"only {len(state.entries)} players joined by {fmt_time(event.starts_at)}"
                return cancel(world, state, why)
            begun, told, _ = start_cup(world, state, world.next_board_number())
            return Decision(told, begun)
        if event.status != EventStatus.PLAYING:
            return Decision()
        changes, replies, state = withdraw_late(world, state)
        found = where(state)
        rnd = len(found.rounds)
        people = world.accounts(seeds_of(state))
        games = [(rnd, people[w], people[b]) for w, b in found.thirds]
        games += _match_games(found.next_round, rnd + 1, people)
        after = replace(event, checked_at=now)
        if games:
            boards = make_boards(world, event, games, world.next_board_number())
            changes += [
                NewBoards([b for b, _ in boards]),
                EventBoards(event.number, [(b.number, r) for b, r in boards]),
            ]
            named = {u for b, _ in boards for u in b.players}
            head = (
                f"{title(event)}: round {rnd + 1}."
                if found.next_round
                else f"{title(event)}: your match of round {rnd} is tied; a third game decides."
            )
            replies += [
                boards_mail(event, people[u], boards, people, head, "new boards", CUP_RULE)
                for u in sorted(named)
            ]
        if found.champion is not None:
            after = replace(after, status=EventStatus.FINISHED, ended_at=now)
            names = names_of(world, seeds_of(state))
            text = "\n".join(
                [
                    *wrap(f"{title(event)} has ended: {names[found.champion]} won the cup."),
                    "",
                    *cup_lines(state, names),
                ]
            )
            replies += [
                Reply(
                    to=a.email,
                    subject=f"{title(event)} - final",
                    body=text + "\n",
                    kind=MailKind.NOTICE,
                )
                for a in people.values()
            ]
        return Decision(replies, [EventChange(event, after), *changes])
