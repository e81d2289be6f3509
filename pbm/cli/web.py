"""``pbm web``: the read-only web site alone (``pbm serve`` runs it beside the mail)."""

from __future__ import annotations

import os

import click
import uvicorn

from pbm.cli.serve import taken_hint
from pbm.cli.startup import load_config, open_site
from pbm.config import CannotListen
from pbm.logs import configure_logging
from pbm.runners import website
from pbm.web.connections import GuardedH11

IDLE_SECONDS = 5
# Below the mail (nice 0), above the computer player (19): on a machine the two
# share, a crowd of visitors waits for the CPU a move by mail needs, never the
# other way round. Alone on a machine of its own, it changes nothing.
NICENESS = 10


@click.command()
@click.option(
    "--fd",
    type=click.IntRange(min=0),
    default=None,
    hidden=True,
    help="Serve on this listening socket, inherited (pbm serve binds web.listen itself).",
)
@click.pass_context
def web(ctx: click.Context, fd: int | None) -> None:
    """Serve the read-only web site on web.listen."""
    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    if fd is None:
        try:
            sock = website.bind(cfg.web)  # a port another program holds: one line, status 1
        except CannotListen as exc:
            raise click.ClickException(taken_hint(exc, cfg)) from None
        fd = sock.fileno()
    with open_site(ctx):
        pass  # there, and at the newest revision: each worker opens its own connections
    if cfg.path is not None:
        os.environ["PBM_CONFIG"] = str(cfg.path)  # what from_environment reads
    os.nice(NICENESS)  # before uvicorn starts its workers: they inherit it
    uvicorn.run(
        "pbm.web.app:from_environment",
        factory=True,
        workers=cfg.web.workers,
        # The socket bound at web.listen, by this process or by pbm serve (which keeps
        # it while the site is started again): uvicorn serves on it, binds nothing.
        fd=fd,
        log_level=cfg.server.log_level.lower(),
        access_log=False,
        server_header=False,
        # Slow and idle clients cost a socket each, never the mail (another process);
        # one that says nothing is cut off after IDLE_SECONDS, one whose headers take
        # longer than web.header_timeout_seconds then, and one address holds at most
        # web.connections_per_address (pbm.web.connections).
        http=GuardedH11,
        timeout_keep_alive=IDLE_SECONDS,
        limit_concurrency=4096,
        h11_max_incomplete_event_size=16 * 1024,
    )
