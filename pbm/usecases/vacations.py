"""Vacations: a player's clocks stand still on every board, within a yearly allowance."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

from pbm.usecases.auth import Actor
from pbm.usecases.changes import Change, GrantChange, VacationChange
from pbm.usecases.moves import acting
from pbm.usecases.refusals import BadRequest, NotConfirmed, NoVacationLeft, WrongPassword
from pbm.usecases.text import fmt_time, note
from pbm.usecases.unit import Decision
from pbm.usecases.world import Away, World

DAY = timedelta(days=1)
SPENT = "spent"  # a day spent by itself when a player's time bank ran out (``timers``)


def vacation_days(v: Away) -> int:
    """The days a vacation counts: every day begun (a vacation ended at once: 0)."""
    return -(-(v.ends_at - v.starts_at) // DAY)


def days_left(world: World, userid: str, year: int, but: Away | None = None) -> int:
    """What is left of ``userid``'s yearly allowance in ``year``: vacations and the stops
    of a bouncing address count alike (``but``: one not to count, being replaced)."""
    allowance = world.config.clock.vacation_days_per_year + world.granted(userid, year)
    used = sum(
        # A bounce's stop counts as far as it went: it ends when he writes again.
        vacation_days(replace(v, ends_at=min(v.ends_at, world.now)) if v.kind == "bounce" else v)
        for v in world.vacations(userid)
        if v.starts_at.year == year and v != but
    )
    return max(allowance - used, 0)


@dataclass(frozen=True)
class Vacation:
    """Go on vacation for ``days`` days from now (None: come back now).

    Each vacation counts, in whole days begun, against the allowance
    (``clock.vacation_days_per_year``) of the calendar year (UTC) it starts
    in; coming back early gives the days not begun back. A new vacation while
    away replaces the current one.
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
        left = days_left(world, me.userid, now.year, but=current)
        if current is not None:
            left = max(left - vacation_days(replace(current, ends_at=now)), 0)
        if self.days is None:
            text = (
                f"Welcome back, {me.display}: your vacation is over and your clocks "
                f"run again. Vacation days left in {now.year}: {left} of {allowance}."
            )
        else:
            if self.days > left:
                more = f" Ask for at most {left}." if left else ""
                raise NoVacationLeft(
                    f"You asked for {self.days} days of vacation, but only {left} of your "
                    f"{allowance} vacation days for {now.year} are left.{more}"
                )
            until = now + self.days * DAY
            changes.append(VacationChange(None, Away(me.userid, now, until)))
            text = (
                f"{me.display} is on vacation until {fmt_time(until)}: your clocks stand "
                f"still on every board until then, and your opponents' board mails say so. "
                f"Vacation days left in {now.year}: {left - self.days} of {allowance}. "
                f"Back earlier: vacation {me.display} PASSWORD off"
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
        taken = sum(vacation_days(v) for v in mine if v.kind == "vacation")
        spent = sum(vacation_days(v) for v in mine if v.kind == SPENT)
        granted = world.granted(me.userid, year)
        allowance = world.config.clock.vacation_days_per_year + granted
        left = days_left(world, me.userid, year)
        away = next(
            (v for v in mine if v.starts_at <= now < v.ends_at and v.kind != "bounce"), None
        )
        text = f"{me.display}: {left} of your {allowance} vacation days for {year} are left."
        details = [f"{taken} taken by the vacation command"]
        details.append(f"{spent} spent by themselves when your time ran out")
        if granted:
            details.append(f"{granted} granted to you beside the site's {allowance - granted}")
        text += " Of the others: " + "; ".join(details) + "."
        if away is not None:
            text += f" Your clocks stand still until {fmt_time(away.ends_at)}."
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
        left = days_left(world, player.userid, now.year) + self.days
        text = (
            f"{player.display}: {self.days} vacation days more for {now.year} were given to "
            f"you. Vacation days left in {now.year}: {left}."
        )
        change = GrantChange(player.userid, now.year, self.days, now)
        return Decision((note(player.email, "pbm - vacation", text),), (change,))
