"""Listening for mail where ``smtp.listen`` says, TCP or a unix socket, and stopping."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from pbm.config import CannotListen, Config
from pbm.smtp.handler import InboxHandler
from pbm.smtp.protocol import smtp_factory

log = logging.getLogger("pbm.listener")


# The unix socket: read and written by its owner and its group (a mail server's
# user in that group hands mail over), by nobody else.
UNIX_SOCKET_MODE = 0o660


@dataclass
class Listener:
    """A bound listener: its protocol, where it listens, and how it stops."""

    server: asyncio.Server
    protocol: str  # "SMTP" or "LMTP"
    unix_path: Path | None = None
    _unix_id: tuple[int, int] | None = None  # (device, inode) of the socket we made

    @property
    def address(self) -> tuple[str, int]:
        """The TCP host and port (the real port when 0 was configured)."""
        if self.unix_path is not None:
            raise ValueError(f"listening on unix:{self.unix_path}, not on TCP")
        sock = self.server.sockets[0].getsockname()
        return sock[0], sock[1]

    @property
    def where(self) -> str:
        """``HOST:PORT`` (``[HOST]:PORT`` for IPv6) or ``unix:/PATH``."""
        if self.unix_path is not None:
            return f"unix:{self.unix_path}"
        host, port = self.address
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def __str__(self) -> str:
        return f"{self.protocol} on {self.where}"

    async def close(self) -> None:
        """Stop listening; a unix socket file is removed (if it is still ours)."""
        self.server.close()
        await self.server.wait_closed()
        if self.unix_path is not None and self._unix_id is not None:
            try:
                st = os.stat(self.unix_path)
            except FileNotFoundError:
                return
            if (st.st_dev, st.st_ino) == self._unix_id:
                self.unix_path.unlink(missing_ok=True)


async def listen(config: Config, handler: InboxHandler) -> Listener:
    """Start listening where ``smtp.listen`` says: ``HOST:PORT`` or ``unix:/PATH``.

    ``CannotListen`` when that is not possible (the port taken, another server on the
    socket, a folder missing); ``ConfigError`` for a listen value of neither form.
    """
    try:
        return await _listen(config, handler)
    except OSError as exc:
        raise CannotListen("smtp.listen", config.smtp.listen, exc) from exc


async def _listen(config: Config, handler: InboxHandler) -> Listener:
    loop = asyncio.get_running_loop()
    factory = smtp_factory(handler, config)
    protocol = "LMTP" if handler.lmtp else "SMTP"
    path = config.listen_unix_path
    if path is None:
        host, port = config.listen_host_port
        return Listener(await loop.create_server(factory, host, port), protocol)
    sock = unix_socket(path)
    st = os.stat(path)
    try:
        server = await loop.create_unix_server(factory, sock=sock)
    except BaseException:
        sock.close()
        path.unlink(missing_ok=True)
        raise
    return Listener(server, protocol, path, (st.st_dev, st.st_ino))


def unix_socket(path: Path) -> socket.socket:
    """A unix socket bound at ``path``, group-writable, not yet listening.

    A socket file left by a server that is gone is removed first; one that a
    running server still answers on is not (EADDRINUSE), nor is anything else
    found at ``path`` (EEXIST). The mode is set before ``listen``: nobody can
    connect before it is right.
    """
    remove_stale_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        os.chmod(path, UNIX_SOCKET_MODE)
    except BaseException:
        sock.close()
        raise
    return sock


def remove_stale_socket(path: Path) -> None:
    """Remove the socket file at ``path`` if no server listens on it any more."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise OSError(errno.EEXIST, f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # nobody listens: left by a server that is gone
        log.info("removed the stale socket %s", path)
        return
    except OSError:
        pass  # it exists and is not refusing: treat it as taken
    finally:
        probe.close()
    raise OSError(errno.EADDRINUSE, f"another server listens on {path}")
