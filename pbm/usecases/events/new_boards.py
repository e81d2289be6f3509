"""An event's boards made at once, its players seeded, and the mail that lists a player's
boards: shared by the round robins (``running``) and the cups (``cups``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta

from pbm.model import Account, Board, rules_of
from pbm.refusals import BadRequest
from pbm.replies import MailKind, Reply
from pbm.store.events import Entry, Event, ratings_of
from pbm.timecontrol import BadTimeControl, Kind
from pbm.timecontrol import parse as parse_time_control
from pbm.usecases.text import wrap
from pbm.usecases.world import World

DAY = timedelta(days=1)


def title(event: Event) -> str:
    return f"Tournament {event.number} ({event.name})"


def control_of(spec: str) -> tuple[str, int, int]:
    """A time control's spec, and its reminder and forfeit days (a classic one's)."""
    try:
        control = parse_time_control(spec)
    except BadTimeControl as exc:
        raise BadRequest(str(exc)) from None
    if control.kind is Kind.CLASSIC:
        return control.spec, control.nag // DAY, control.start // DAY
    return control.spec, 7, 21


def seeding(
    world: World, event: Event, entries: Sequence[Entry]
) -> tuple[list[Entry], list[Entry]]:
    """The entries by rating (then as they joined), and the same with their draw numbers."""
    uids = [e.userid for e in entries]
    rated = ratings_of(world.session, event.game, event.variant, uids)
    order = sorted(entries, key=lambda e: (-rated.get(e.userid, 1500.0), e.joined_at))
    return order, [replace(e, seed=i) for i, e in enumerate(order, 1)]


def make_boards(
    world: World,
    event: Event,
    games: Sequence[tuple[int, Account, Account]],
    first_number: int,
) -> list[tuple[Board, int]]:
    """A new board for each (round, White, Black) of ``games``, numbered on from
    ``first_number``, started now; with its round."""
    rules = rules_of(event.game)
    spec, nag, forfeit = control_of(event.time_control)
    now = world.now
    out: list[tuple[Board, int]] = []
    for i, (rnd, white, black) in enumerate(games):
        start = rules.new(event.variant, dict(event.options))
        board = Board.new(
            first_number + i,
            rules.name,
            start,
            white,
            black,
            time_control=spec,
            nag_days=nag,
            forfeit_days=forfeit,
            now=now,
            reminders=world.config.clock.reminders,
        )
        out.append((board, rnd))
    return out


def boards_mail(
    event: Event,
    me: Account,
    boards: Sequence[tuple[Board, int]],
    people: Mapping[str, Account],
    head: str,
    what: str,
    rule: str,
) -> Reply:
    """One mail to ``me`` listing all his boards among ``boards`` (``what``: the subject's
    word, "started"), how to move on them, and the leaving ``rule``."""
    mine = [(b, r) for b, r in boards if me.userid in b.players]
    lines = [*wrap(f"{head} Your {len(mine)} boards:"), ""]
    for board, rnd in mine:
        seat = board.seat_of(me.userid) or 0
        other = people[board.player_at(1 - seat)].display
        colour = board.rules.seat_names[seat]
        turn = "your move" if seat == 0 else f"{other} to move"
        lines.append(f"  Board {board.number:<6} round {rnd:<3} {colour:<6} vs {other}: {turn}")
    lines += [
        "",
        *wrap(
            f"To move, send: {event.game} move BOARD {me.display} PASSWORD MOVE, or have a "
            f"board's mail sent to you to answer by reply: {event.game} show BOARD. "
            "You get each board's mail whenever your opponent moves."
        ),
        "",
        *wrap(rule),
    ]
    return Reply(
        to=me.email,
        subject=f"{title(event)} - {what}: your {len(mine)} boards",
        body="\n".join(lines) + "\n",
        kind=MailKind.NOTICE,
    )
