"""The log of ``pbm serve`` and ``pbm web``: stderr, for the journal."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable


def configure_logging(level: str) -> None:
    """Log lines on stderr (systemd's journal keeps them; so does a terminal)."""
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # alembic's start-up chatter, and aiosmtpd's line-by-line SMTP trace ("mail.log"),
    # only when asked for with log_level = "DEBUG".
    if level.upper() != "DEBUG":
        for chatty in ("alembic", "mail.log"):
            logging.getLogger(chatty).setLevel(logging.WARNING)


class Throttled:
    """A fault that repeats (a full disk, a database that is down) logged once a minute.

    The first time, and whenever the fault's kind changes, with the traceback;
    then one line a ``period`` saying how often it happened meanwhile. A loop
    that retries every second would fill the disk it is waiting for otherwise.
    """

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        period: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = log
        self.what = what
        self.period = period
        self.clock = clock
        self._kind: str | None = None
        self._last = 0.0
        self._since = 0  # faults not logged since the last line

    def fault(self, exc: BaseException) -> None:
        """Log ``exc`` unless a line about the same kind of fault was logged lately."""
        kind = type(exc).__name__
        now = self.clock()
        if kind != self._kind:
            self._kind, self._last, self._since = kind, now, 0
            self.log.error("%s", self.what, exc_info=exc)
            return
        self._since += 1
        if now - self._last >= self.period:
            self.log.error(
                "%s (%d times in the last %d s): %s: %s",
                self.what,
                self._since,
                int(now - self._last),
                kind,
                str(exc).splitlines()[0] if str(exc) else "",
            )
            self._last, self._since = now, 0

    def cleared(self) -> None:
        """It works again: the next fault is logged at once."""
        if self._kind is not None:
            self.log.info("%s: working again", self.what)
        self._kind = None
