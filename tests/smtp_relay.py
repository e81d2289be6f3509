"""A real SMTP relay on loopback (aiosmtpd) that tests script: what it accepts, what it refuses.

``Relay`` is the handler: it keeps every message it accepts and answers RCPT
and DATA from scripts, either in order (``rcpt_script``, ``data_script``) or
for one recipient (``refuse_rcpt``, ``refuse_data``). ``relay`` serves it on
127.0.0.1 for a block (in the test's own event loop). ``greeter`` serves a
``Greeter``: a relay that greets with a refusal and hangs up. Nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import socket
import subprocess
import warnings
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any, TypeVar

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbm.config import Config, from_mapping

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    """Run ``coro`` to its end in an event loop of its own (as a test's relay needs)."""

    async def main() -> T:
        return await coro

    return asyncio.run(main())


def outbound_config(**outbound: Any) -> Config:
    """A config of the server ``pbm@example.org`` with these ``[outbound]`` settings."""
    return from_mapping(
        {
            "mail": {"address": "pbm@example.org", "from_name": "PBM Server", "secret": "s"},
            "outbound": outbound,
        },
        env={},
    )


@dataclass
class Relay:
    """An aiosmtpd handler that keeps what it accepts and answers from scripts.

    ``data_script``/``rcpt_script``: the answers to the next DATA/RCPT commands,
    whoever they are for, then acceptance. ``refuse_rcpt``/``refuse_data``: per
    recipient, the answers to its next RCPTs/DATAs, then acceptance.
    """

    data_script: list[str] = field(default_factory=list)
    rcpt_script: list[str] = field(default_factory=list)
    refuse_rcpt: dict[str, list[str]] = field(default_factory=dict)
    refuse_data: dict[str, list[str]] = field(default_factory=dict)
    received: list[tuple[str, list[str], bytes]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # every RCPT address, in order

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        self.asked.append(address)
        if self.rcpt_script:
            return self.rcpt_script.pop(0)
        if self.refuse_rcpt.get(address):
            return self.refuse_rcpt[address].pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.data_script:
            return self.data_script.pop(0)
        for rcpt in envelope.rcpt_tos:
            if self.refuse_data.get(rcpt):
                return self.refuse_data[rcpt].pop(0)
        content = envelope.content
        assert isinstance(content, bytes)
        self.received.append((str(envelope.mail_from), list(envelope.rcpt_tos), content))
        return "250 OK"

    def recipients(self) -> list[str]:
        """The recipient of every message accepted, in order (one each)."""
        return [rcpt for _, rcpts, _ in self.received for rcpt in rcpts]

    def messages(self) -> list[EmailMessage]:
        out = []
        for _, _, data in self.received:
            msg = email.message_from_bytes(data, policy=email.policy.default)
            assert isinstance(msg, EmailMessage)
            out.append(msg)
        return out


def self_signed_cert(folder: Path) -> tuple[Path, Path]:
    """A certificate and key for ``pbm.test``, made with openssl, for STARTTLS tests."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=pbm.test", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def free_port() -> int:
    """A loopback port that nothing listens on (just now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@asynccontextmanager
async def relay(
    handler: Relay, port: int = 0, *, smtputf8: bool = False, login_required: bool = False
) -> AsyncIterator[int]:
    """A real aiosmtpd server on 127.0.0.1 for the block; yields its port.

    ``smtputf8``: whether it offers SMTPUTF8 (RFC 6531), for non-ASCII addresses.
    ``login_required``: it answers MAIL with 530 (RFC 4954) until the client logs in.
    """

    def protocol() -> SMTP:
        with warnings.catch_warnings():  # AUTH without TLS: fine on loopback
            warnings.simplefilter("ignore")
            return SMTP(
                handler,
                hostname="relay.test",
                enable_SMTPUTF8=smtputf8,
                auth_required=login_required,
                auth_require_tls=False,
            )

    loop = asyncio.get_running_loop()
    server = await loop.create_server(protocol, "127.0.0.1", port, reuse_address=True)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


@dataclass
class Greeter:
    """A relay that answers every connection with ``greeting`` (a 421 or 554) and hangs up.

    An empty ``greeting``: it hangs up without a word.
    """

    greeting: str
    connections: int = 0

    async def _greet(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.greeting:
            writer.write(self.greeting.encode() + b"\r\n")
            await writer.drain()
        writer.close()


@asynccontextmanager
async def greeter(handler: Greeter) -> AsyncIterator[int]:
    """``handler`` on 127.0.0.1 for the block; yields its port."""
    server = await asyncio.start_server(handler._greet, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()
