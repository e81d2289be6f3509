"""``pbm serve``: run the mail server."""

from __future__ import annotations

import asyncio
import logging

import click

from pbm.cli.site import load_config, open_database, readable_by_others
from pbm.runners.logs import configure_logging
from pbm.runners.serve import serve as run_server


@click.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Listen for command mail and answer it (stop with Ctrl-C or SIGTERM); logs go to stderr."""
    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    if not cfg.mail.secret:
        raise click.ClickException(
            "mail.secret is empty: run `pbm init` first (it writes a config with a fresh secret)"
        )
    with open_database(ctx):
        pass  # there, and at the newest revision: the server opens its own connections
    for warning in readable_by_others(cfg):
        logging.getLogger("pbm.serve").warning("%s", warning.removeprefix("warning: "))
    try:
        asyncio.run(run_server(cfg))
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {cfg.smtp.listen}: {exc}") from None
