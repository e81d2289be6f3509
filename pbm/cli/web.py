"""``pbm web``: the read-only web site alone (``pbm serve`` runs it beside the mail)."""

from __future__ import annotations

import asyncio
import os

import click
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from pbm.cli.site import load_config, open_site
from pbm.runners.logs import configure_logging

IDLE_SECONDS = 5
# Below the mail (nice 0), above the computer player (19): on a machine the two
# share, a crowd of visitors waits for the CPU a move by mail needs, never the
# other way round. Alone on a machine of its own, it changes nothing.
NICENESS = 10


class QuietCutOff(H11Protocol):
    """uvicorn's HTTP/1.1, except that a connection that never asks anything is closed
    after the keep-alive time, as one is that asks nothing more (uvicorn waits forever)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )


@click.command()
@click.pass_context
def web(ctx: click.Context) -> None:
    """Serve the read-only web site on web.listen (boards, players, ratings, archive)."""
    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    host, _, port = cfg.web.listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException(f"web.listen must be HOST:PORT, not {cfg.web.listen!r}")
    with open_site(ctx):
        pass  # there, and at the newest revision: each worker opens its own connections
    if cfg.path is not None:
        os.environ["PBM_CONFIG"] = str(cfg.path)  # what from_environment reads
    os.nice(NICENESS)  # before uvicorn starts its workers: they inherit it
    uvicorn.run(
        "pbm.web.app:from_environment",
        factory=True,
        workers=cfg.web.workers,
        host=host.strip("[]"),
        port=int(port),
        log_level=cfg.server.log_level.lower(),
        access_log=False,
        server_header=False,
        # Slow and idle clients cost a socket each, never the mail (another process);
        # one that says nothing is cut off after IDLE_SECONDS.
        http=QuietCutOff,
        timeout_keep_alive=IDLE_SECONDS,
        limit_concurrency=4096,
        h11_max_incomplete_event_size=16 * 1024,
    )
