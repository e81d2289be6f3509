"""Vacations: a player's clocks stand still on every board, within a yearly allowance.

The allowance is in days (``clock.vacation_days_per_year``, plus what an admin grants),
and a vacation costs the time it lasted, each hour begun counting whole (an hour is
1/24 of a day): three days asked for and called off a minute later cost an hour, and
leave "29 days 23 hours" of 30. A vacation under way holds all its days until it ends
or is called off.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pbm.model import Away
from pbm.refusals import BadRequest, NotConfirmed, NoVacationLeft, WrongPassword
from pbm.timecontrol import duration_words
from pbm.usecases.auth import Actor
from pbm.usecases.changes import Change, GrantChange, VacationChange
from pbm.usecases.moves import acting
from pbm.usecases.text import fmt_time, note
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
SPENT = "spent"  # a day spent by itself when a player's time bank ran out (``timers``)


def vacation_time(v: Away) -> timedelta:
    """What a vacation costs: the time it lasts, each hour begun counting whole (a
    vacation ended at once: nothing)."""
    return HOUR * -(-(v.ends_at - v.starts_at) // HOUR)


def days_words(amount: timedelta) -> str:
    """An amount of vacation as players read it: ``27`` (whole days), else ``29 days 23
    hours``."""
    return str(amount // DAY) if amount % DAY == timedelta(0) else duration_words(amount)


def cost_at(v: Away, now: datetime) -> timedelta:
    """What ``v`` costs at ``now``: a vacation or a day spent, all its time; a bouncing
    address's stop, as far as it went (it ends when he writes again)."""
    return vacation_time(replace(v, ends_at=min(v.ends_at, now)) if v.kind == "bounce" else v)


def time_left(world: World, userid: str, year: int, but: Away | None = None) -> timedelta:
    """What is left of ``userid``'s yearly allowance in ``year``: vacations and the stops
    of a bouncing address count alike (``but``: one not to count, being replaced)."""
    allowance = (world.config.clock.vacation_days_per_year + world.granted(userid, year)) * DAY
    mine = [v for v in world.vacations(userid) if v.starts_at.year == year and v != but]
    used = sum((cost_at(v, world.now) for v in mine), timedelta(0))
    return max(allowance - used, timedelta(0))


@dataclass(frozen=True)
class Vacation:
    """Go on vacation for ``days`` days from now (None: come back now).

    Each vacation costs the time it lasts, each hour begun counting whole, from the
    allowance (``clock.vacation_days_per_year``) of the calendar year (UTC) it starts
    in; coming back early gives the rest back. A new vacation while away replaces the
    current one.
    """

    days: int | None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        if not me.has_password:
            raise WrongPassword("A vacation needs your password.")
        if self.days is not None and self.days < 1:
            raise BadRequest("A vacation is at least 1 day (or off).")
        allowance = world.config.clock.vacation_days_per_year
        now = world.now
        taken = [v for v in world.vacations(me.userid) if v.kind == "vacation"]
        changes: list[Change] = []
        current = next((v for v in taken if v.starts_at <= now < v.ends_at), None)
        if current is not None:
            changes.append(VacationChange(current, replace(current, ends_at=now)))
        elif self.days is None:
            raise BadRequest(f"{me.display} is not on vacation.")
        left = time_left(world, me.userid, now.year, but=current)
        cost = timedelta(0)
        if current is not None:
            cost = vacation_time(replace(current, ends_at=now))
            left = max(left - cost, timedelta(0))
        if self.days is None:
            text = (
                f"Welcome back, {me.display}: your vacation is over and your clocks "
                f"run again. It took {duration_words(cost) if cost else 'none'} of your "
                f"vacation days (each hour begun counts). Vacation days left in {now.year}: "
                f"{days_words(left)} of {allowance}."
            )
        else:
            if self.days * DAY > left:
                most = left // DAY
                more = f" Ask for at most {most}." if most else ""
                raise NoVacationLeft(
                    f"You asked for {self.days} days of vacation, but only {days_words(left)} "
                    f"of your {allowance} vacation days for {now.year} are left.{more}"
                )
            until = now + self.days * DAY
            changes.append(VacationChange(None, Away(me.userid, now, until)))
            text = (
                f"{me.display} is on vacation until {fmt_time(until)}: your clocks stand "
                f"still on every board until then, and your opponents' board mails say so. "
                f"Vacation days left in {now.year}: {days_words(left - self.days * DAY)} of "
                f"{allowance}. Back earlier: vacation {me.display} PASSWORD off (only the "
                "hours away count)"
            )
        return Decision((note(me.account.email, "pbm - vacation", text),), tuple(changes))


@dataclass(frozen=True)
class VacationStatus:
    """How many of his vacation days a player has left this year, and where the others
    went (``vacation UID PW status``)."""

    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        if not me.has_password:
            raise WrongPassword("Your vacation days need your password.")
        now = world.now
        year = now.year
        mine = [v for v in world.vacations(me.userid) if v.starts_at.year == year]

        def cost(kind: str) -> timedelta:
            return sum((cost_at(v, now) for v in mine if v.kind == kind), timedelta(0))

        granted = world.granted(me.userid, year)
        site_days = world.config.clock.vacation_days_per_year
        left = time_left(world, me.userid, year)
        away = next(
            (v for v in mine if v.starts_at <= now < v.ends_at and v.kind != "bounce"), None
        )
        text = (
            f"{me.display}: {days_words(left)} of your {site_days + granted} vacation days "
            f"for {year} are left."
        )
        if granted:
            text += f" The site gives {site_days} a year; {granted} more were granted to you."
        gone = [
            f"{duration_words(spent)} {why}"
            for spent, why in (
                (cost("vacation"), "on vacation"),
                (cost(SPENT), "spent for you when your time ran out on a board"),
                (cost("bounce"), "while mail to you bounced"),
            )
            if spent
        ]
        text += f" Taken so far: {'; '.join(gone)}." if gone else " None taken so far."
        if away is not None:
            text += f" Your clocks stand still until {fmt_time(away.ends_at)}."
        text += " A vacation costs the hours it lasts, each hour begun counting whole."
        if world.config.clock.spend_vacation:
            text += (
                " When a time bank of yours runs out, a day of those left is spent by itself, "
                "and the board mail says so."
            )
        return Decision((note(me.account.email, "pbm - vacation", text),))


@dataclass(frozen=True)
class GrantVacation:
    """Give ``userid`` ``days`` more vacation days this year (``pbm player vacation UID
    --grant D``), told to him."""

    userid: str
    days: int
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        if self.days < 1:
            raise BadRequest("A grant is at least 1 day.")
        player = world.account(self.userid)
        if not player.active:
            raise NotConfirmed(f"{player.display} has not confirmed the account yet.")
        now = world.now
        left = time_left(world, player.userid, now.year) + self.days * DAY
        text = (
            f"{player.display}: {self.days} vacation days more for {now.year} were given to "
            f"you. Vacation days left in {now.year}: {days_words(left)}."
        )
        change = GrantChange(player.userid, now.year, self.days, now)
        return Decision((note(player.email, "pbm - vacation", text),), (change,))
