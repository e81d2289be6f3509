"""``pbm prune``: erase received mail and sent bodies past ``server.keep_raw_days``, now.

``pbm serve`` does the same once a day; this is for a site run without it, for
cron, and for tests (``--now ISO-TIME``: act as if it were then).
"""

from __future__ import annotations

import click

from pbm.cli.startup import NOW_HELP, open_site, parse_now
from pbm.store import prune as store_prune


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def describe(pruned: store_prune.Pruned) -> str:
    """What one prune erased, as one line."""
    return "erased " + ", ".join(
        (
            _count(pruned.raw_mails, "raw mail", "raw mails"),
            _count(pruned.sent_bodies, "sent reply body", "sent reply bodies"),
            _count(pruned.message_ids, "Message-ID", "Message-IDs"),
            _count(pruned.password_failures, "password failure", "password failures"),
            _count(pruned.answer_counts, "answer count", "answer counts"),
        )
    )


@click.command(short_help="Erase old received mail and sent reply bodies.")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def prune(ctx: click.Context, now_text: str | None) -> None:
    """Erase received mail (passwords in it) and sent reply bodies past server.keep_raw_days."""
    now = parse_now(now_text)
    with open_site(ctx) as site:
        with site.db.transaction() as session:
            pruned = store_prune.prune(session, now, site.config.server.keep_raw_days)
        click.echo(describe(pruned))
        if not store_prune.compact(site.db):
            click.echo(
                "warning: the database's -wal file could not be emptied now (readers busy); "
                "run pbm prune again",
                err=True,
            )
