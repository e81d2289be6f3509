"""``pbm inbox``: the received mail, and the mails set aside after failed attempts."""

from __future__ import annotations

import click

from pbm.cli.output import dumps, json_option
from pbm.cli.startup import open_site
from pbm.store import inbox as queue

NOTE_WIDTH = 60


@click.group()
def inbox() -> None:
    """Received mail: waiting, done, ignored, or set aside (failed)."""


@inbox.command("list", short_help="Received mails: when, who sent them, their status.")
@click.option(
    "--status",
    type=click.Choice([*queue.STATUSES, "all"]),
    default="failed",
    show_default=True,
    help="Which rows to show (newest first, at most --limit).",
)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@json_option
@click.pass_context
def list_command(ctx: click.Context, status: str, limit: int, as_json: bool) -> None:
    """List received mails: id, when, envelope sender, status, attempts, note."""
    with open_site(ctx) as site, site.db.read() as session:
        rows = queue.listed(session, None if status == "all" else status, limit)
    if as_json:
        click.echo(dumps([row._asdict() for row in rows]))
        return
    if not rows:
        click.echo(f"no {status} mail in the inbox" if status != "all" else "the inbox is empty")
        return
    for row in rows:
        note = " ".join((row.note or "").split())
        note = note if len(note) <= NOTE_WIDTH else note[: NOTE_WIDTH - 3] + "..."
        when = row.received_at.strftime("%Y-%m-%d %H:%M")
        sender = row.mail_from or "<>"
        click.echo(f"{row.id:>6}  {when}  {row.status:<7} {row.attempts}  {sender}  {note}")


@inbox.command("retry", short_help="Work mails set aside (failed) out again.")
@click.argument("ids", nargs=-1, type=int, required=True)
@click.pass_context
def retry_command(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Work mails set aside (failed) out again, with a fresh count of attempts."""
    with open_site(ctx) as site, site.db.transaction() as session:
        done = queue.retry(session, ids)
    click.echo(
        f"{done} mail(s) waiting again" if done else "nothing to retry (no failed mail kept)"
    )
    if done < len(set(ids)):
        ctx.exit(1)
