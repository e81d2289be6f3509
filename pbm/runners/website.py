"""The web site beside the mail: ``pbm web`` in a process of its own, started and
stopped by ``pbm serve``. Its own process, so that a crowd of visitors (or slow and
idle connections) takes none of the mail's event loop, at a lower CPU priority
(``pbm.cli.web.NICENESS``), so that it takes only the CPU the mail leaves.

``pbm serve`` binds the site's port itself (``bind``) before it starts anything, as it
does the mail's: a port another program holds stops it with one line, rather than a
site that never starts while mail and logs point to whatever else answers there. The
process is handed the socket and serves on it; ``pbm serve`` keeps it open as long as
it runs, so no other program can take the port while the site is started again, and a
visitor who comes meanwhile waits in its backlog.

When it ends without being asked to (killed, crashed), it is logged and started again
at once; when it ends again within ``QUICK_SECONDS`` of its start, after a wait that
doubles from 1 s up to ``MAX_BACKOFF_SECONDS``: a site that cannot start is retried,
not spun.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import time
from collections.abc import Callable

from pbm.config import CannotListen, Config, WebConfig

log = logging.getLogger("pbm.web")

QUICK_SECONDS = 30.0  # a process that ends sooner than this after its start ends "quickly"
MAX_BACKOFF_SECONDS = 60.0
STOP_SECONDS = 10.0  # what SIGTERM is given before SIGKILL
BACKLOG = 2048  # connections waiting to be accepted (uvicorn's own default)


def bind(web: WebConfig) -> socket.socket:
    """A TCP socket listening at ``web.listen`` (``CannotListen`` when it cannot be had),
    as uvicorn binds one: ``SO_REUSEADDR``, so that a site stopped a moment ago does not
    keep its port."""
    host, port = web.host_port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise CannotListen("web.listen", web.listen, exc) from exc
    return sock


def ended_how(returncode: int) -> str:
    """``status 1``, or ``signal 9 (SIGKILL)`` for a process a signal ended."""
    if returncode >= 0:
        return f"status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
    return f"signal {-returncode} ({name})"


class WebProcess:
    """``pbm web`` for ``config`` (its file and the environment's overrides) on
    ``sock`` (``bind``), kept running by ``run_forever`` until its ``stopping`` is set."""

    def __init__(
        self, config: Config, sock: socket.socket, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.command = [sys.executable, "-m", "pbm"]
        if config.path is not None:
            self.command += ["--config", str(config.path)]
        self.command += ["web", "--fd", str(sock.fileno())]
        self.sock = sock
        self.listen = config.web.listen
        self.clock = clock
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Start it, on the socket."""
        self.process = await asyncio.create_subprocess_exec(
            *self.command, pass_fds=(self.sock.fileno(),)
        )
        log.info("web site on http://%s/ (pid %s)", self.listen, self.process.pid)

    async def run_forever(self, stopping: asyncio.Event) -> None:
        """Keep it running until ``stopping`` is set; then end it (``stop``)."""
        quick_ends = 0  # the times in a row it ended within QUICK_SECONDS of its start
        try:
            while not stopping.is_set():
                started = self.clock()
                try:
                    await self.start()
                except OSError as exc:  # no process at all (out of memory, say)
                    quick_ends += 1
                    backoff = min(MAX_BACKOFF_SECONDS, 2.0 ** max(0, quick_ends - 2))
                    log.error("could not start the web site (%s); trying in %g s", exc, backoff)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stopping.wait(), backoff)
                    continue
                assert self.process is not None
                ended = asyncio.ensure_future(self.process.wait())
                stop = asyncio.ensure_future(stopping.wait())
                await asyncio.wait((ended, stop), return_when=asyncio.FIRST_COMPLETED)
                stop.cancel()
                if not ended.done():
                    ended.cancel()
                    break
                # Started again at once; after a wait only if it ends quickly again.
                quick = self.clock() - started < QUICK_SECONDS
                quick_ends = quick_ends + 1 if quick else 0
                backoff = min(MAX_BACKOFF_SECONDS, 2.0 ** (quick_ends - 2)) if quick_ends > 1 else 0
                log.error(
                    "the web site (pid %s) ended with %s; starting it again%s",
                    self.process.pid,
                    ended_how(ended.result()),
                    f" in {backoff:g} s" if backoff else "",
                )
                if backoff:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stopping.wait(), backoff)
        finally:
            await self.stop()

    async def stop(self) -> None:
        """End it (SIGTERM: uvicorn finishes what it is answering), killed after
        ``STOP_SECONDS``."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), STOP_SECONDS)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
            if process.returncode not in (0, -signal.SIGTERM):
                log.warning("the web site ended with %s", ended_how(process.returncode or 0))
