"""The site: what every use case works with (database, configuration, clock, passwords)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pbm.config import Config
from pbm.store.engine import Database
from pbm.usecases.auth import PasswordCheck


def utc_now() -> datetime:
    return datetime.now(UTC)


# The times pbm takes from outside (``--now``, ``--since``, the archive's dates): years 2000
# to 2200. Further out, date arithmetic overflows (a day after 9999-12-31) and the timers
# would catch up on thousands of years of clocks (``pbm tick --now 9999-12-20``: 76 s).
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
AFTER_LATEST = datetime(2201, 1, 1, tzinfo=UTC)
TIME_RANGE = "pbm takes dates from 2000-01-01 to 2200-12-31"


def in_range(moment: datetime) -> bool:
    """Whether ``moment`` (aware, or naive in UTC) is within ``TIME_RANGE``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return EARLIEST <= moment < AFTER_LATEST


@dataclass
class Site:
    """One pbm installation at work.

    ``clock`` is the time decisions are made at (settable: ``pbm tick --now``,
    tests). ``send_clock`` says when replies become due for sending (default:
    ``clock``), so that a simulated time ahead of real time still has its
    mail sent at once.
    """

    db: Database
    config: Config
    clock: Callable[[], datetime] = utc_now
    send_clock: Callable[[], datetime] | None = None
    passwords: PasswordCheck = field(default_factory=PasswordCheck)

    @property
    def mail_domain(self) -> str:
        """The domain of the server's address: our Message-IDs end in it."""
        return self.config.mail.address.rpartition("@")[2] or "localhost"

    def due(self, now: datetime) -> datetime:
        """When a reply written at ``now`` may be sent."""
        return self.send_clock() if self.send_clock is not None else now
