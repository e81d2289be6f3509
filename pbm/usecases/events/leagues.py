"""Leagues: one a game and variant, divisions of round robins by rating, renewed each
season by themselves (Little Golem's way). The arithmetic of a season change is
``seasons``; here it is read, decided and told.

``league join GAME`` enters a player (the league is made on its first entry);
he is placed at the next season change, in the lowest division with room.
``league leave GAME`` takes him out at the season's end; his games go on.
When a season's last game ends the timers run ``SeasonChange``; the admin's
``pbm league season GAME`` runs it by hand (the first season too). A player
withdrawn from an event within ``withdrawal.BAR`` sits a season change out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbm.model import rules_of
from pbm.refusals import BadRequest
from pbm.replies import MailKind, Reply
from pbm.store.events import (
    Entry,
    Event,
    EventStatus,
    Kind,
    League,
    Member,
    event_games,
    load_entries,
    load_events,
    load_league,
    load_leagues,
    load_members,
    next_event_number,
    next_league_number,
    ratings_of,
)
from pbm.usecases.auth import Actor
from pbm.usecases.changes import Change
from pbm.usecases.events import withdrawal
from pbm.usecases.events.event_changes import LeagueChange, MemberChange, league_key
from pbm.usecases.events.new_boards import control_of
from pbm.usecases.events.running import (
    LEAVING_RULE,
    EventState,
    standing_bar,
    start,
    time_losses,
)
from pbm.usecases.events.seasons import (
    DEFAULT_SIZE,
    MAX_DIVISION,
    MIN_DIVISION,
    first_season,
    next_season,
)
from pbm.usecases.moves import acting
from pbm.usecases.site import Site
from pbm.usecases.text import wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World


def league_name(league: League) -> str:
    return f"{rules_of(league.game).title} league ({league.variant})"


def variant_of(game: str, variant: str | None) -> str:
    """The variant a league is of: the one named (refused if the game has none such),
    else the game's first."""
    rules = rules_of(game)
    if variant is None:
        return rules.variants[0]
    if variant not in rules.variants:
        raise BadRequest(
            f"{rules.title} has no variant {variant!r}; variants: {', '.join(rules.variants)}."
        )
    return variant


def find_league(world: World, game: str, variant: str | None = None) -> League | None:
    """The league of ``game`` and ``variant`` (its first by default), if there is one."""
    rules = rules_of(game)
    world.reads.add(("leagues", rules.name))
    return load_league(world.session, rules.name, variant_of(game, variant))


def _mail(to: str, subject: str, text: list[str]) -> Reply:
    body = "\n\n".join("\n".join(wrap(t)) for t in text) + "\n"
    return Reply(to=to, subject=subject, body=body, kind=MailKind.NOTICE)


@dataclass(frozen=True)
class CreateLeague:
    """``pbm league create GAME``: a league with its own time control and division size."""

    game: str
    time: str | None = None
    size: int = DEFAULT_SIZE
    vacation_days: int | None = None
    variant: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        rules = rules_of(self.game)
        if not MIN_DIVISION <= self.size <= MAX_DIVISION - 2:
            raise BadRequest(
                f"A league's divisions have {MIN_DIVISION} to {MAX_DIVISION - 2} players, "
                f"not {self.size}."
            )
        variant = variant_of(self.game, self.variant)
        world.reads.add(("leagues", rules.name))
        if load_league(world.session, rules.name, variant) is not None:
            raise BadRequest(f"{rules.title} has a league for {variant} already.")
        spec = control_of(self.time)[0] if self.time else world.config.clock.default_control().spec
        league = League(
            next_league_number(world.session),
            rules.name,
            variant,
            spec,
            self.size,
            self.vacation_days,
            0,
            0,
            world.now,
        )
        return Decision(changes=(LeagueChange(None, league),))


def _new_league(world: World, game: str, variant: str | None) -> League:
    rules = rules_of(game)
    return League(
        next_league_number(world.session),
        rules.name,
        variant_of(game, variant),
        world.config.clock.default_control().spec,
        DEFAULT_SIZE,
        None,
        0,
        0,
        world.now,
    )


@dataclass(frozen=True)
class JoinLeague:
    """``league join GAME[/VARIANT] UID PW``: entered from the next season on, season after
    season."""

    game: str
    sender: str
    variant: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor).account
        league = find_league(world, self.game, self.variant)
        changes: list[Change] = []
        if league is None:
            league = _new_league(world, self.game, self.variant)
            changes.append(LeagueChange(None, league))
        world.reads.add(league_key(league.id))
        name = league_name(league)
        members = load_members(world.session, league.id) if changes == [] else []
        mine = next((m for m in members if m.userid == me.userid), None)
        if mine is not None and mine.leaving:
            changes.append(MemberChange(mine, replace(mine, leaving=False)))
            reply = _mail(self.sender, f"{name} - staying", [f"You stay in the {name}."])
            return Decision((reply,), changes)
        if mine is not None:
            raise BadRequest(f"You are in the {name} already (since {mine.joined_at:%Y-%m-%d}).")
        if standing_bar(world, me.userid) is not None:
            raise BadRequest(
                f"You were withdrawn from an event less than {withdrawal.BAR.days} days ago: "
                "you may join the league when that time is over."
            )
        changes.append(MemberChange(None, Member(league.id, me.userid, world.now)))
        text = [
            f"You joined the {name}: {len(members) + 1} players, time control "
            f"{league.time_control}, divisions of {league.division_size}.",
            "You are placed at the next season change, in the lowest division with room. "
            "Each season the top 2 of a division move up and the bottom 2 move down; you are "
            "entered again every season until you send league leave "
            f"{league.game} {me.display} PASSWORD. Losing more than half of a season's "
            "games on time drops you out.",
            LEAVING_RULE,
        ]
        return Decision((_mail(self.sender, f"{name} - joined", text),), changes)


@dataclass(frozen=True)
class LeaveLeague:
    """``league leave GAME[/VARIANT] UID PW``: out of the league when the season ends."""

    game: str
    sender: str
    variant: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor).account
        league = find_league(world, self.game, self.variant)
        if league is None:
            raise BadRequest(f"There is no league of {rules_of(self.game).title} here yet.")
        world.reads.add(league_key(league.id))
        name = league_name(league)
        mine = next(
            (m for m in load_members(world.session, league.id) if m.userid == me.userid), None
        )
        if mine is None:
            raise BadRequest(f"You are not in the {name}.")
        if mine.leaving:
            raise BadRequest(f"You leave the {name} at the end of this season already.")
        playing = load_events(
            world.session, (EventStatus.PLAYING,), league=league.id, season=league.season
        )
        entered = load_entries(world.session, [e.number for e in playing])
        in_play = [e for e in playing if any(x.userid == me.userid for x in entered[e.number])]
        if not in_play:
            reply = _mail(self.sender, f"{name} - left", [f"You left the {name}."])
            return Decision((reply,), (MemberChange(mine, None),))
        text = [
            f"You leave the {name} when this season ends: you are not entered in the next. "
            f"Your games of this season are played on (to leave them too: tournament leave "
            f"{in_play[0].number} {me.display} PASSWORD, under the rule below).",
            LEAVING_RULE,
        ]
        reply = _mail(self.sender, f"{name} - leaving", text)
        return Decision((reply,), (MemberChange(mine, replace(mine, leaving=True)),))


def season_over(world: World, league: League) -> bool:
    """Whether ``league`` has a season whose every division has ended."""
    if league.season == 0:
        return False
    found = load_events(world.session, None, league=league.id, season=league.season)
    return bool(found) and all(
        e.status in (EventStatus.FINISHED, EventStatus.CANCELLED) for e in found
    )


def leagues_due(world: World) -> list[SeasonChange]:
    """The season changes due: of the leagues whose season has ended."""
    return [
        SeasonChange(x.game, x.variant)
        for x in load_leagues(world.session)
        if season_over(world, x)
    ]


@dataclass(frozen=True)
class SeasonChange:
    """The next season of a league (``seasons``): its divisions made and started, the
    players told; those who leave or drop out taken out."""

    game: str
    variant: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        rules = rules_of(self.game)
        league = find_league(world, self.game, self.variant)
        if league is None:
            raise BadRequest(f"There is no league of {rules.title} here.")
        world.reads.add(league_key(league.id))
        name = league_name(league)
        members = {m.userid: m for m in load_members(world.session, league.id)}
        last = load_events(world.session, None, league=league.id, season=league.season)
        last = [e for e in last if league.season > 0]
        going = [e for e in last if e.status in (EventStatus.OPEN, EventStatus.PLAYING)]
        if going:
            raise BadRequest(
                f"Season {league.season} of the {name} is still played (tournament "
                f"{going[0].number}); a season changes when its last game ends."
            )
        numbers = [e.number for e in last]
        entries, games = load_entries(world.session, numbers), event_games(world.session, numbers)
        states = [
            EventState(e, entries[e.number], games[e.number])
            for e in sorted(last, key=lambda e: e.division or 0)
        ]
        finals = [[x.player for x in s.standings()] for s in states]
        dropped: dict[str, tuple[int, int]] = {}
        for s in states:
            for uid in s.players:
                lost = time_losses(s, uid)
                mine = [g for g in s.games if uid in (g.white, g.black) and g.status != "cancelled"]
                if withdrawal.drops_out(lost, len(mine)):
                    dropped[uid] = (lost, len(mine))
        leaving = {u for u, m in members.items() if m.leaving} | set(dropped)
        leaving |= {p for d in finals for p in d if p not in members}
        barred = {u for u in members if u not in leaving and standing_bar(world, u) is not None}
        placed = {p for d in finals for p in d}
        rated = ratings_of(world.session, league.game, league.variant, members)
        fresh = sorted(
            (u for u in members if u not in placed and u not in leaving and u not in barred),
            key=lambda u: (-rated.get(u, 1500.0), members[u].joined_at),
        )
        size = league.division_size
        if league.season == 0:
            divisions = first_season(fresh, size)
        else:
            divisions = next_season(finals, leaving | barred, fresh, size)
        if sum(map(len, divisions)) < MIN_DIVISION:
            raise BadRequest(
                f"The {name} has {sum(map(len, divisions))} players to place; a season "
                f"needs {MIN_DIVISION}."
            )
        season = league.season + 1
        changes: list[Change] = [LeagueChange(league, replace(league, season=season))]
        replies: list[Reply] = []
        first_event = next_event_number(world.session)
        board = world.next_board_number()
        for i, players in enumerate(divisions):
            event = Event(
                number=first_event + i,
                name=f"{rules.title} league, season {season}, division {i + 1}",
                kind=Kind.DIVISION,
                game=league.game,
                variant=league.variant,
                options={},
                time_control=league.time_control,
                double=False,
                players=len(players),
                vacation_days=league.vacation_days,
                status=EventStatus.OPEN,
                version=0,
                created_at=world.now,
                league=league.id,
                season=season,
                division=i + 1,
            )
            state = EventState(event, [Entry(event.number, u, world.now) for u in players], [])
            made, told, board = start(world, state, board, new=True)
            changes += made
            replies += told
        people = world.accounts(sorted(leaving & set(members)))
        for uid, account in people.items():
            if uid in dropped:
                lost, of = dropped[uid]
                text = (
                    f"You lost {lost} of your {of} games of season {season - 1} on time, "
                    f"more than half: you drop out of the {name}. league join "
                    f"{league.game} enters you again."
                )
            else:
                text = (
                    f"You have left the {name}, as you asked: season {season} starts without you."
                )
            replies.append(_mail(account.email, f"{name} - left", [text]))
            changes.append(MemberChange(members[uid], None))
        return Decision(replies, changes)


@dataclass(frozen=True)
class LeagueLine:
    """A league and its season's divisions, for the command line and the web site."""

    league: League
    name: str
    members: int
    divisions: list[Event]


def league_lines(world: World) -> list[LeagueLine]:
    """Every league, its members counted, its current season's divisions."""
    world.reads.add(("leagues", "all"))
    out = []
    for league in load_leagues(world.session):
        found = load_events(world.session, None, league=league.id, season=league.season)
        members = load_members(world.session, league.id)
        found = found if league.season else []
        out.append(LeagueLine(league, league_name(league), len(members), found))
    return out


def listed(site: Site) -> list[LeagueLine]:
    """``league_lines`` on a snapshot (the command line's list)."""
    with site.db.read() as session:
        return league_lines(World(session, site.config, site.clock()))
