"""``pbm serve``: run the mail server."""

from __future__ import annotations

import asyncio
import logging

import click

from pbm.cli.startup import load_config, not_initialised, open_database, readable_by_others
from pbm.config import CannotListen, Config
from pbm.logs import configure_logging
from pbm.runners.server import serve as run_server


@click.command(short_help="Run the server: mail, timers, web site.")
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Listen for command mail and answer it (stop with Ctrl-C or SIGTERM); logs go to stderr."""
    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    if not cfg.mail.secret:  # pbm init writes a config with a fresh secret
        raise not_initialised(cfg, "mail.secret is empty")
    with open_database(ctx):
        pass  # there, and at the newest revision: the server opens its own connections
    for warning in readable_by_others(cfg):
        logging.getLogger("pbm.serve").warning("%s", warning.removeprefix("warning: "))
    try:
        asyncio.run(run_server(cfg))
    except CannotListen as exc:  # the mail's port or the web site's: nothing was started
        raise click.ClickException(taken_hint(exc, cfg)) from None


def taken_hint(exc: CannotListen, cfg: Config) -> str:
    """``exc`` in one line; for a port another program holds, where to choose another."""
    if not exc.taken:
        return str(exc)
    where = f" in {cfg.path}" if cfg.path is not None and cfg.path.exists() else ""
    return f"{exc}: another program listens there; choose another {exc.key}{where}"
