"""Transports: how a message leaves the house.

A ``Transport`` delivers one message or raises a ``DeliveryError``:
``SmtpTransport`` hands it to a relay (aiosmtplib), ``MaildirTransport``
drops it into a Maildir (the embedded default: a file per mail, for a local
MDA or a person to read). Whether a failure is the message's own or the
relay's (``TemporaryFailure.relay_down``) decides what the outbox sender
does with the rest of its round.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import aiosmtplib

from pbm.config import Config, ConfigError


class DeliveryError(Exception):
    """A message could not be handed over; ``str()`` says why."""


class TemporaryFailure(DeliveryError):
    """Try again later (RFC 5321 §4.2.1: 4yz replies, or no answer at all).

    ``relay_down`` marks failures that have nothing to do with this message
    (the relay unreachable): the rest of the batch waits too.
    """

    def __init__(self, message: str, *, relay_down: bool = False) -> None:
        super().__init__(message)
        self.relay_down = relay_down


class PermanentFailure(DeliveryError):
    """Do not try again (RFC 5321 §4.2.1: 5yz replies)."""


class Transport(Protocol):
    """Delivers one message to its recipients or raises a ``DeliveryError``."""

    async def send(
        self,
        data: bytes,
        sender: str,
        recipients: Sequence[str],
        *,
        key: str = "",
        again: bool = False,
    ) -> None:
        """Deliver ``data`` (a message, LF line ends) from the envelope ``sender``.

        ``key`` names the message for good (its Message-ID); ``again``: a send of
        it was begun before and may have got through (its outcome was never
        written): a transport that can tell (a Maildir) does not deliver it twice,
        one that cannot sends it again under the same Message-ID, which mail
        programs fold into one.
        """
        ...


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class MaildirTransport:
    """One file per mail in a Maildir (its ``new/``), for a local MDA or a person to read.

    Delivery follows the Maildir protocol (https://cr.yp.to/proto/maildir.html):
    write the file under ``tmp/`` and fsync it, rename it into ``new/``, fsync
    ``new/``. Readers never see half a mail, and once the file is in ``new/`` we
    never touch it again: a mail reader may move it to ``cur/`` at once.

    A mail's file is named from its Message-ID, the same on every try and every
    server instance: a mail sent again after a crash (``again``) is delivered
    only if no file of that name is in ``new/`` or ``cur/`` (where a reader
    moves it, adding ``:2,`` and its flags).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._ready = False  # tmp/, new/ and cur/ exist (made on first use)
        self._serial = itertools.count(1)

    def _name(self, key: str) -> str:
        """The file's name: the Message-ID without what a Maildir name may not hold
        ("/", ":"), or, without one, a name unique to this process and moment."""
        if key:
            return re.sub(r"[^A-Za-z0-9.@_=+-]", "_", key.strip("<>"))
        now = time.time()
        return f"{int(now)}.M{int((now % 1) * 1_000_000)}P{os.getpid()}Q{next(self._serial)}"

    def _delivered(self, name: str) -> bool:
        if (self.path / "new" / name).exists():
            return True
        with os.scandir(self.path / "cur") as found:
            return any(e.name == name or e.name.startswith(name + ":") for e in found)

    def _deliver(self, data: bytes, name: str, again: bool) -> None:
        try:
            self._write(data, name, again)
        except FileNotFoundError:
            # The folder was removed or moved under us: make it again, once.
            self._ready = False
            self._write(data, name, again)

    def _write(self, data: bytes, name: str, again: bool) -> None:
        if not self._ready:
            for sub in ("tmp", "new", "cur"):
                (self.path / sub).mkdir(parents=True, exist_ok=True)
            self._ready = True
        if again and self._delivered(name):
            return
        tmp = self.path / "tmp" / f"{name}.{os.getpid()}.{next(self._serial)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        try:
            os.rename(tmp, self.path / "new" / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        # The row is marked sent next: the new directory entry must be on disk first.
        _fsync(self.path / "new")

    async def send(
        self,
        data: bytes,
        sender: str,
        recipients: Sequence[str],
        *,
        key: str = "",
        again: bool = False,
    ) -> None:
        # Files on disk use the local line end, LF, as ``data`` has it; the
        # envelope goes where a local delivery agent puts it.
        data = f"Return-Path: <{sender}>\n".encode() + data
        try:
            await asyncio.to_thread(self._deliver, data, self._name(key), again)
        except OSError as exc:  # a full disk or a missing permission may well pass
            raise TemporaryFailure(f"maildir {self.path}: {exc}", relay_down=True) from exc


def _smtp_failure(code: int, text: str, where: str) -> DeliveryError:
    """What an SMTP refusal means for this message and for the rest (RFC 5321 4.2.1).

    421 (RFC 5321 3.8: the relay is closing the channel) and 530 (RFC 4954:
    the relay wants a login we lack) say nothing of the message: the relay
    is down for us. Otherwise 4yz is a transient, 5yz a permanent failure of
    this message alone.
    """
    message = f"{code} {text}".strip()
    if code in (421, 530):
        return TemporaryFailure(f"relay {where}: {message}", relay_down=True)
    if 500 <= code < 600:
        return PermanentFailure(message)
    return TemporaryFailure(message)


class SmtpTransport:
    """Hands each message to an SMTP relay (aiosmtplib), one connection per message."""

    def __init__(
        self,
        host: str,
        port: int,
        starttls: bool = False,
        username: str = "",
        password: str = "",
        *,
        timeout: float = 60.0,
    ) -> None:
        self.host = host
        self.port = port
        self.starttls = starttls
        self.username = username
        self.password = password
        self.timeout = timeout

    async def send(
        self,
        data: bytes,
        sender: str,
        recipients: Sequence[str],
        *,
        key: str = "",
        again: bool = False,
    ) -> None:
        # A relay cannot say whether it had the message before (``again``): it goes
        # again, its Message-ID the same, and mail programs fold the two.
        where = f"{self.host}:{self.port}"
        # RFC 6531: a non-ASCII address (or header, RFC 6532) needs SMTPUTF8.
        utf8 = not (data.isascii() and sender.isascii() and all(r.isascii() for r in recipients))
        try:
            errors, _ = await aiosmtplib.send(
                data,  # aiosmtplib makes the line ends CRLF and dot-stuffs
                sender=sender,
                recipients=list(recipients),
                mail_options=["SMTPUTF8"] if utf8 else None,
                hostname=self.host,
                port=self.port,
                start_tls=self.starttls,
                username=self.username or None,
                password=self.password or None,
                timeout=self.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            # Every recipient refused: the mildest code decides (4yz before 5yz).
            refused = min(exc.recipients, key=lambda r: r.code)
            raise _smtp_failure(refused.code, refused.message, where) from exc
        except aiosmtplib.SMTPAuthenticationError as exc:
            # Our credentials, not the mail, are at fault: keep it until they are fixed.
            raise TemporaryFailure(
                f"relay {where} refused our login: {exc.code} {exc.message}", relay_down=True
            ) from exc
        except aiosmtplib.SMTPConnectResponseError as exc:
            # A 421/554 greeting: the relay will not talk to us at all right now.
            raise TemporaryFailure(
                f"relay {where} greeted with {exc.code} {exc.message}", relay_down=True
            ) from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise _smtp_failure(exc.code, exc.message, where) from exc
        except aiosmtplib.SMTPNotSupported as exc:
            # This message needs what the relay lacks (SMTPUTF8 for a non-ASCII address):
            # it will never get through here, and the others are not concerned.
            raise PermanentFailure(f"relay {where} cannot take this message: {exc}") from exc
        except (
            aiosmtplib.SMTPServerDisconnected,
            aiosmtplib.SMTPConnectError,
            aiosmtplib.SMTPTimeoutError,
            OSError,
        ) as exc:
            # No reply at all (refused, reset, timed out): the relay, not the mail.
            raise TemporaryFailure(f"relay {where}: {exc}", relay_down=True) from exc
        except aiosmtplib.SMTPException as exc:
            raise TemporaryFailure(f"relay {where}: {exc}") from exc
        if errors:  # some recipients refused, the others accepted
            reply = min(errors.values(), key=lambda r: r.code)
            raise _smtp_failure(reply.code, reply.message, where)


def transport_from_config(config: Config) -> Transport:
    """The transport ``outbound.transport`` names."""
    out = config.outbound
    if out.transport == "maildir":
        return MaildirTransport(config.maildir_path)
    if out.transport == "smtp":
        return SmtpTransport(
            out.smtp_host,
            out.smtp_port,
            out.starttls,
            out.username,
            out.password,
        )
    raise ConfigError(f'outbound.transport must be "maildir" or "smtp", not {out.transport!r}')
