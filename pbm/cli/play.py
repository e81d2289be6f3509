"""The clock and rating commands: ``pbm tick``, ``pbm clock pause|resume|status``,
``pbm ratings`` and ``pbm player vacation``.

``--now ISO-TIME`` makes the time settable (for cron catch-up and for tests):
a time without a zone is taken as UTC. ``register(main)`` adds the commands
to the ``pbm`` group (``vacation`` under the existing ``player`` group).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import click

from pbm.cli.output import emit, json_option
from pbm.cli.startup import NOW_HELP, open_site, parse_now
from pbm.runners.timer_runner import tick as run_tick
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.text import fmt_time
from pbm.usecases.timers import PauseClocks, ResumeClocks
from pbm.usecases.vacations import GrantVacation, Vacation


@click.command(short_help="Run the clocks once: reminders, losses on time.")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def tick(ctx: click.Context, now_text: str | None) -> None:
    """Run the clocks once: send due reminders, forfeit boards out of time."""
    now = parse_now(now_text)
    with open_site(ctx) as site:
        n = run_tick(site.db, site.config, now)
    click.echo(f"{n} board(s) acted on at {fmt_time(now)}")


@click.group("clock")
def clock_group() -> None:
    """Stop and restart every clock (a site outage)."""


@clock_group.command("pause", short_help="Stop every clock until `pbm clock resume`.")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def clock_pause(ctx: click.Context, now_text: str | None) -> None:
    """Stop every clock until `pbm clock resume`; the time in between is not counted."""
    with open_site(ctx, parse_now(now_text)) as site:
        unit.run(site, PauseClocks())
        click.echo(f"clocks stopped at {fmt_time(queries.clocks_paused_since(site))}")


@clock_group.command("resume")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def clock_resume(ctx: click.Context, now_text: str | None) -> None:
    """Start the clocks again."""
    with open_site(ctx, parse_now(now_text)) as site:
        since = queries.clocks_paused_since(site)
        unit.run(site, ResumeClocks())
        assert since is not None  # resuming refuses when the clocks run
        click.echo(f"clocks running again; {max(site.clock(), since) - since} not counted")


@clock_group.command("status")
@click.pass_context
def clock_status(ctx: click.Context) -> None:
    """Whether the clocks run."""
    with open_site(ctx) as site:
        since = queries.clocks_paused_since(site)
        click.echo("clocks running" if since is None else f"clocks stopped since {fmt_time(since)}")


@click.command(short_help="The rating lists, best first.")
@click.option("--game", "game_name", default=None, help="Only this game.")
@click.option("--variant", default=None, help="Only this variant.")
@json_option
@click.pass_context
def ratings(ctx: click.Context, game_name: str | None, variant: str | None, as_json: bool) -> None:
    """The rating lists, best first (provisional: fewer than 20 rated games): Elo, and
    Glicko-2 with its deviation (rated at the end of each day, UTC)."""
    with open_site(ctx) as site:
        records = [dataclasses.asdict(r) for r in queries.standings(site, game_name, variant)]
    headers = ("game", "variant", "rank", "player", "rating", "games", "provisional", "glicko-2")
    emit(records, as_json, headers, _rating_row, empty="no rated games")


def _rating_row(r: Mapping[str, object]) -> tuple[object, ...]:
    keys = ("game", "variant", "rank", "player", "rating", "games")
    glicko = f"{r['glicko']} (RD {r['deviation']})" if r["glicko"] is not None else "-"
    return (*(r[k] for k in keys), "yes" if r["provisional"] else "", glicko)


@click.command("vacation", short_help="Send UID on vacation, bring him back, grant days.")
@click.argument("userid", metavar="UID")
@click.argument("days", metavar="DAYS|off", required=False)
@click.option(
    "--grant",
    type=click.IntRange(min=1),
    default=None,
    metavar="D",
    help="Give UID D vacation days more for this year instead.",
)
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def vacation(
    ctx: click.Context, userid: str, days: str | None, grant: int | None, now_text: str | None
) -> None:
    """Send UID on vacation for DAYS days (his clocks stop), bring him back (off), or
    give him more vacation days this year (--grant D)."""
    if grant is not None:
        if days is not None:
            raise click.UsageError("give DAYS or --grant, not both")
        with open_site(ctx, parse_now(now_text)) as site:
            replies = unit.run(site, GrantVacation(userid, grant), Who(userid, ADMIN))
        click.echo(replies[0].body, nl=False)
        return
    if days is None:
        raise click.UsageError("DAYS|off (or --grant D) is missing")
    if days.lower() == "off":
        count = None
    elif days.isdigit() and int(days) >= 1:
        count = int(days)
    else:
        raise click.BadParameter(f"{days!r}: a number of days (at least 1) or off")
    with open_site(ctx, parse_now(now_text)) as site:
        replies = unit.run(site, Vacation(count), Who(userid, ADMIN))
    click.echo(replies[0].body, nl=False)


def register(main: click.Group) -> None:
    """Add ``tick``, ``clock``, ``ratings`` to ``main`` and ``vacation`` to ``player``."""
    main.add_command(tick)
    main.add_command(clock_group)
    main.add_command(ratings)
    player = main.commands["player"]
    assert isinstance(player, click.Group)
    player.add_command(vacation)
