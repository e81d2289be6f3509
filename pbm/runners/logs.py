"""The log of ``pbm serve`` and its worker processes: stderr, for the journal."""

from __future__ import annotations

import logging
import sys


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
