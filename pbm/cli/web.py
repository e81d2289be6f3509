"""``pbm web``: the read-only web site alone (``pbm serve`` runs it beside the mail)."""

from __future__ import annotations

import click
import uvicorn

from pbm.cli.site import load_config, open_site
from pbm.runners.logs import configure_logging
from pbm.web.app import create_app


@click.command()
@click.pass_context
def web(ctx: click.Context) -> None:
    """Serve the read-only web site on web.listen (boards, players, ratings, archive)."""
    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    host, _, port = cfg.web.listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException(f"web.listen must be HOST:PORT, not {cfg.web.listen!r}")
    with open_site(ctx) as site:
        app = create_app(site)
        uvicorn.run(
            app,
            host=host.strip("[]"),
            port=int(port),
            log_level=cfg.server.log_level.lower(),
            access_log=False,
            server_header=False,
            # Slow and idle clients cost a socket each, not the mail: they are cut off.
            timeout_keep_alive=5,
            limit_concurrency=1000,
            h11_max_incomplete_event_size=16 * 1024,
        )
