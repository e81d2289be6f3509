"""``pbm outbox``: look at the replies waiting to leave, and send failed ones again."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click
import sqlalchemy as sa

from pbm import config as pbm_config
from pbm.mail.outbound import STATUSES, list_outbox, retry
from pbm.store import Database, OutboxMessage

SUBJECT_WIDTH = 40
ERROR_WIDTH = 50


@contextmanager
def _database(ctx: click.Context) -> Iterator[Database]:
    """The configured database, closed afterwards; a readable error when it is unusable."""
    obj = ctx.find_object(dict) or {}
    try:
        config = pbm_config.load(obj.get("config_file"))
    except pbm_config.ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    url = sa.engine.make_url(config.database_url)
    file = url.database if url.get_backend_name() == "sqlite" else None
    if file and file != ":memory:" and not Path(file).exists():
        # Opening would create an empty file; say what is missing instead.
        raise click.ClickException(f"no database at {url.database}; run `pbm init` first")
    db = Database.open(config)
    try:
        yield db
    except sa.exc.SQLAlchemyError as exc:
        detail = str(exc.orig) if isinstance(exc, sa.exc.DBAPIError) else str(exc)
        raise click.ClickException(
            f"database {db.engine.url.render_as_string()}: {detail.strip()}"
            " (is it initialised? see `pbm init`)"
        ) from None
    finally:
        db.close()


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


@outbox.command("list")
@click.option(
    "--status",
    type=click.Choice([*STATUSES, "all"]),
    default="pending",
    show_default=True,
    help="Which rows to show.",
)
@click.pass_context
def list_command(ctx: click.Context, status: str) -> None:
    """List outbox rows: id, status, attempts, recipient, subject, last error."""
    with _database(ctx) as db:
        rows = list_outbox(db, status)
    if not rows:
        click.echo(f"no {status} mail in the outbox" if status != "all" else "the outbox is empty")
        return
    for line in format_table(rows):
        click.echo(line)


@outbox.command("retry")
@click.argument("ids", nargs=-1, type=int)
@click.option("--all-failed", is_flag=True, help="Requeue every failed row.")
@click.pass_context
def retry_command(ctx: click.Context, ids: tuple[int, ...], all_failed: bool) -> None:
    """Send failed (or waiting) rows again now, with a fresh count of attempts."""
    if not ids and not all_failed:
        raise click.UsageError("name the rows to retry (IDs) or give --all-failed")
    with _database(ctx) as db:
        result = retry(db, ids, all_failed=all_failed)
    for row_id, why in sorted(result.skipped.items()):
        click.echo(f"outbox {row_id}: not requeued: {why}", err=True)
    if result.requeued:
        listed = ", ".join(str(i) for i in result.requeued)
        click.echo(f"requeued {len(result.requeued)}: {listed}")
    else:
        click.echo("nothing requeued")
    if result.skipped:
        ctx.exit(1)
