"""``pbm outbox``: look at the replies waiting to leave, and send failed ones again."""

from __future__ import annotations

from collections.abc import Sequence

import click

from pbm.cli.output import dumps, json_option
from pbm.cli.startup import open_site
from pbm.store import outbox as queue
from pbm.store.tables import OutboxMessage

SUBJECT_WIDTH = 40
ERROR_WIDTH = 50
JSON_FIELDS = (
    "id",
    "status",
    "attempts",
    "to_addr",
    "subject",
    "board",
    "created_at",
    "next_attempt_at",
    "sent_at",
    "last_error",
)


def _clip(text: str | None, width: int) -> str:
    """One line of at most ``width`` characters."""
    line = " ".join((text or "").split())
    return line if len(line) <= width else line[: width - 3] + "..."


def format_table(rows: Sequence[OutboxMessage]) -> list[str]:
    """The rows as aligned text lines, a header first."""
    table = [("ID", "STATUS", "ATTEMPTS", "TO", "SUBJECT", "LAST ERROR")]
    for row in rows:
        table.append(
            (
                str(row.id),
                row.status,
                str(row.attempts),
                row.to_addr,
                _clip(row.subject, SUBJECT_WIDTH),
                _clip(row.last_error, ERROR_WIDTH),
            )
        )
    widths = [max(len(cells[i]) for cells in table) for i in range(len(table[0]))]
    lines = []
    for cells in table:
        padded = [
            cell.rjust(width) if i in (0, 2) else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        lines.append("  ".join(padded).rstrip())
    return lines


@click.group()
def outbox() -> None:
    """The replies waiting to be sent, sent, or failed."""


@outbox.command("list", short_help="The replies: status, attempts, recipient, subject.")
@click.option(
    "--status",
    type=click.Choice([*queue.STATUSES, "all"]),
    default="pending",
    show_default=True,
    help="Which rows to show.",
)
@json_option
@click.pass_context
def list_command(ctx: click.Context, status: str, as_json: bool) -> None:
    """List outbox rows: id, status, attempts, recipient, subject, last error."""
    with open_site(ctx) as site, site.db.read() as session:
        rows = queue.listing(session, status)
    if as_json:
        click.echo(dumps([{k: getattr(r, k) for k in JSON_FIELDS} for r in rows]))
        return
    if not rows:
        click.echo(f"no {status} mail in the outbox" if status != "all" else "the outbox is empty")
        return
    for line in format_table(rows):
        click.echo(line)


@outbox.command("retry", short_help="Send failed (or waiting) replies again now.")
@click.argument("ids", nargs=-1, type=int)
@click.option("--all-failed", is_flag=True, help="Requeue every failed row.")
@click.pass_context
def retry_command(ctx: click.Context, ids: tuple[int, ...], all_failed: bool) -> None:
    """Send failed (or waiting) rows again now, with a fresh count of attempts."""
    if not ids and not all_failed:
        raise click.UsageError("name the rows to retry (IDs) or give --all-failed")
    with open_site(ctx) as site, site.db.transaction() as session:
        result = queue.retry(session, ids, all_failed=all_failed, now=site.clock())
    for row_id, why in sorted(result.skipped.items()):
        click.echo(f"outbox {row_id}: not requeued: {why}", err=True)
    if result.requeued:
        listed = ", ".join(str(i) for i in result.requeued)
        click.echo(f"requeued {len(result.requeued)}: {listed}")
    else:
        click.echo("nothing requeued")
    if result.skipped:
        ctx.exit(1)
