"""``pbm serve``: run the mail server."""

from __future__ import annotations

import asyncio

import click

from pbm.cli.site import check_revision, database_errors, load_config
from pbm.config import ConfigError
from pbm.runners.logs import configure_logging
from pbm.runners.serve import serve as run_server
from pbm.store.engine import Database


@click.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Listen for command mail and answer it (stop with Ctrl-C or SIGTERM)."""
    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    if not cfg.mail.secret:
        raise click.ClickException(
            "mail.secret is empty: run `pbm init` first (it writes a config with a fresh secret)"
        )
    db = Database.open(cfg)
    try:
        with database_errors(cfg):
            check_revision(db, cfg)
    finally:
        db.close()
    try:
        asyncio.run(run_server(cfg))
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {cfg.smtp.listen}: {exc}") from None
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
