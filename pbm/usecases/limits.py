"""The site's limits on automatic mail: how much one address may be sent, and the warning.

Anyone can write any From address: without a limit, a forged mail of
thousands of ``help`` lines would make the server a spam cannon against
that address. Every counted reply (``Reply.counted``: help, errors, answers,
account mail; not a board's mails to its own players and followers) is
counted per address and clock hour: past ``limits.answers_per_address_per_hour``
(errors also past ``limits.error_replies_per_hour``) the server stays silent
and logs it. The last answer before the limit says so, and when answers
resume.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from sqlmodel import Session

from pbm.config import LimitsConfig
from pbm.replies import Reply
from pbm.store.limits import count_answer
from pbm.usecases.text import fmt_time, wrap

log = logging.getLogger("pbm.limits")
HOUR = timedelta(hours=1)


def screen(
    session: Session, replies: Sequence[Reply], now: datetime, limits: LimitsConfig
) -> list[Reply]:
    """The replies the limits let through, the last one before a limit with a warning."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    kept = []
    for reply in replies:
        if not reply.counted:
            kept.append(reply)
            continue
        answers, errors = count_answer(session, reply.to, hour, reply.is_error)
        limit = limits.answers_per_address_per_hour
        error_limit = limits.error_replies_per_hour if reply.is_error else None
        if answers > limit or (error_limit is not None and errors > error_limit):
            log.warning("not answering %s: its limit for this hour is reached", reply.to)
            continue
        if answers == limit or errors == error_limit:
            reply = replace(reply, body=reply.body + _last(hour + HOUR, limit, error_limit))
        kept.append(reply)
    return kept


def _last(resume: datetime, limit: int, error_limit: int | None) -> str:
    which = (
        f"{error_limit} error replies or {limit} answers an hour"
        if error_limit is not None
        else f"{limit} answers an hour"
    )
    text = (
        f"This is the last answer this server sends to your address until "
        f"{fmt_time(resume)} (at most {which}); mail you send before then is carried "
        "out, but not answered. Mail about the boards you play or follow still comes."
    )
    return "\n" + "\n".join(wrap(text)) + "\n"
