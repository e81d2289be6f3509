"""``pbm player``: accounts for the admin: add, password, list, how his mail comes
(``format``, ``notify``), and what holds one back (``show``: a password lockout, answers
held by the limits; ``unlock`` lifts them)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import click

from pbm.cli.output import emit, json_option
from pbm.cli.startup import NOW_HELP, open_site, parse_now
from pbm.mail.controls import one_line
from pbm.usecases import queries, unit
from pbm.usecases.accounts import ChangePassword, SetFormat, Signup
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.digests import SetNotify
from pbm.usecases.locks import Unlock


@click.group()
def player() -> None:
    """Player accounts."""


@player.command("add")
@click.argument("userid")
@click.argument("email")
@click.option("--name", default="", help="The player's full name.")
@click.option(
    "--password",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="The password (asked for if not given).",
)
@click.pass_context
def player_add(ctx: click.Context, userid: str, email: str, name: str, password: str) -> None:
    """Add a player; the welcome mail goes to EMAIL."""
    with open_site(ctx) as site:
        # Text from the command line is cleaned as mail's is (pbm.mail.controls).
        signup = Signup(userid, password, email, full_name=one_line(name), confirmed=True)
        unit.run(site, signup)
        click.echo(f"player {userid} added")


@player.command("password", short_help="Set UID's password; he is told by mail.")
@click.argument("userid")
@click.option(
    "--password",
    prompt="New password",
    hide_input=True,
    confirmation_prompt=True,
    help="The new password (asked for if not given).",
)
@click.pass_context
def player_password(ctx: click.Context, userid: str, password: str) -> None:
    """Set UID's password (a player who lost his address too); he is told by mail."""
    with open_site(ctx) as site:
        unit.run(site, ChangePassword(password), Who(userid, ADMIN))
        click.echo(f"password of {userid} set")


@player.command("show", short_help="UID's account, password lockout and held answers.")
@click.argument("userid")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def player_show(ctx: click.Context, userid: str, now_text: str | None) -> None:
    """UID's account, password lockout, what the answer limits counted and held for him."""
    with open_site(ctx, parse_now(now_text) if now_text else None) as site:
        for line in queries.locks(site, userid).lines():
            click.echo(line)


@player.command("unlock", short_help="Lift UID's lockout; send the answers held for him.")
@click.argument("userid")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def player_unlock(ctx: click.Context, userid: str, now_text: str | None) -> None:
    """Lift UID's password lockout and answer limits; answers held for him go out now."""
    with open_site(ctx, parse_now(now_text) if now_text else None) as site:
        unit.run(site, Unlock(userid), Who(userid, ADMIN))
        click.echo(f"player {userid} unlocked")


@player.command("format", short_help="Mail to UID with a board picture, or text only.")
@click.argument("userid")
@click.argument("fmt", metavar="html|text", type=click.Choice(["html", "text"]))
@click.pass_context
def player_format(ctx: click.Context, userid: str, fmt: str) -> None:
    """How UID's mail comes: with a picture of the board (html) or plain text only."""
    with open_site(ctx) as site:
        unit.run(site, SetFormat(fmt), Who(userid, ADMIN))
        click.echo(f"player {userid}: {fmt}")


@player.command("notify")
@click.argument("userid")
@click.argument("how", metavar="each|digest HH:MM[,HH:MM] [TIMEZONE]", nargs=-1, required=True)
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def player_notify(
    ctx: click.Context, userid: str, how: tuple[str, ...], now_text: str | None
) -> None:
    """UID's board mails: one a move, or a digest at set times."""
    with open_site(ctx, parse_now(now_text) if now_text else None) as site:
        unit.run(site, SetNotify(" ".join(how)), Who(userid, ADMIN))
        click.echo(f"player {userid}: {' '.join(how)}")


@player.command("list")
@json_option
@click.pass_context
def player_list(ctx: click.Context, as_json: bool) -> None:
    """Every player."""
    with open_site(ctx) as site:
        records = [
            {"userid": p.display, "email": p.email, "name": p.full_name, "since": p.created_at}
            for p in queries.players(site)
        ]
    emit(records, as_json, ("userid", "email", "name", "since"), _player_row)


def _player_row(r: Mapping[str, object]) -> tuple[object, ...]:
    since = r["since"]
    assert isinstance(since, datetime)
    return (r["userid"], r["email"], r["name"], f"{since:%Y-%m-%d}")
