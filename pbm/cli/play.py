"""The clock and rating commands: ``pbm tick``, ``pbm clock pause|resume|status``,
``pbm ratings`` and ``pbm player vacation``.

``--now ISO-TIME`` makes the time settable (for cron catch-up and for tests):
a time without a zone is taken as UTC. ``register(main)`` adds the commands
to the ``pbm`` group (``vacation`` under the existing ``player`` group).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import click

from pbm import clock as clock_mod
from pbm import service as svc
from pbm import store
from pbm.boardmail import fmt_time
from pbm.cli.admin import table
from pbm.cli.serve import load_config

NOW_HELP = "Act as if it were this time (ISO 8601, UTC unless a zone is given)."


def parse_now(value: str | None) -> datetime:
    """``--now``: an ISO time (UTC when it has no zone), or the current time."""
    if value is None:
        return datetime.now(UTC)
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: write a time as 2025-03-08T12:00 (ISO 8601)", param_hint="--now"
        ) from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


@contextmanager
def open_db(ctx: click.Context) -> Iterator[store.Database]:
    """The configured database; a clear error if there is none yet."""
    cfg = load_config(ctx)
    db = store.Database.open(cfg)
    try:
        if store.current_revision(db) is None:
            raise click.ClickException(
                f"no pbm database at {cfg.database_url}: run `pbm init` first"
            )
        yield db
    finally:
        db.close()


@contextmanager
def open_service(ctx: click.Context, now: datetime | None = None) -> Iterator[svc.Service]:
    """The service, with its clock fixed at ``now`` if given; refusals become CLI errors."""
    with open_db(ctx) as db:
        try:
            if now is None:
                yield svc.Service(db, load_config(ctx))
            else:
                # Mail is sent at once, even when --now is ahead of real time.
                yield svc.Service(
                    db, load_config(ctx), lambda: now, lambda: min(now, svc.utc_now())
                )
        except svc.ServiceError as exc:
            raise click.ClickException(exc.message) from None


@click.command()
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def tick(ctx: click.Context, now_text: str | None) -> None:
    """Run the clocks once: send due reminders, forfeit boards out of time."""
    now = parse_now(now_text)
    with open_db(ctx) as db:
        n = clock_mod.tick(db, load_config(ctx), now)
    click.echo(f"{n} board(s) acted on at {fmt_time(now)}")


@click.group("clock")
def clock_group() -> None:
    """Stop and restart every clock (a site outage)."""


@clock_group.command("pause")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def clock_pause(ctx: click.Context, now_text: str | None) -> None:
    """Stop every clock until `pbm clock resume`; the time in between is not counted."""
    with open_service(ctx, parse_now(now_text)) as service:
        since = service.pause_clocks()
        click.echo(f"clocks stopped at {fmt_time(since)}")


@clock_group.command("resume")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def clock_resume(ctx: click.Context, now_text: str | None) -> None:
    """Start the clocks again."""
    with open_service(ctx, parse_now(now_text)) as service:
        span = service.resume_clocks()
        click.echo(f"clocks running again; {span} not counted")


@clock_group.command("status")
@click.pass_context
def clock_status(ctx: click.Context) -> None:
    """Whether the clocks run."""
    with open_service(ctx) as service:
        since = service.clocks_paused_since()
        click.echo("clocks running" if since is None else f"clocks stopped since {fmt_time(since)}")


@click.command()
@click.option("--game", "game_name", default=None, help="Only this game.")
@click.option("--variant", default=None, help="Only this variant.")
@click.pass_context
def ratings(ctx: click.Context, game_name: str | None, variant: str | None) -> None:
    """The rating lists, best first (? = provisional: fewer than 20 rated games)."""
    with open_service(ctx) as service:
        rows = [
            (
                r.game,
                r.variant,
                r.rank,
                r.player,
                r.rating,
                r.games,
                "?" if r.provisional else "",
            )
            for r in service.standings(game_name, variant)
        ]
    if not rows:
        click.echo("no rated games")
        return
    click.echo(table(("game", "variant", "rank", "player", "rating", "games", ""), rows))


@click.command("vacation")
@click.argument("userid", metavar="UID")
@click.argument("days", metavar="DAYS|off")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def vacation(ctx: click.Context, userid: str, days: str, now_text: str | None) -> None:
    """Send UID on vacation for DAYS days (his clocks stop), or bring him back (off)."""
    if days.lower() == "off":
        count = None
    elif days.isdigit() and int(days) >= 1:
        count = int(days)
    else:
        raise click.BadParameter(f"{days!r}: a number of days (at least 1) or off")
    with open_service(ctx, parse_now(now_text)) as service:
        replies = service.vacation(userid, svc.ADMIN, count)
    click.echo(replies[0].body, nl=False)


def register(main: click.Group) -> None:
    """Add ``tick``, ``clock``, ``ratings`` to ``main`` and ``vacation`` to ``player``."""
    main.add_command(tick)
    main.add_command(clock_group)
    main.add_command(ratings)
    player = main.commands["player"]
    assert isinstance(player, click.Group)
    player.add_command(vacation)
