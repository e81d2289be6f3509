"""The site's limits on automatic mail: how much one address may be sent, and the warning.

Anyone can write any From address: without a limit, a forged mail of
thousands of ``help`` lines would make the server a spam cannon against
that address. Every counted reply (``Reply.counted``: help, errors, answers,
account mail; not a board's mails to its own players and followers) is
counted per address and clock hour, and the limits hold over the last hour
(a sliding window: the previous clock hour's count weighs as much of it as
is still within the last hour, so no burst at the turn of an hour doubles
a limit): past ``limits.answers_per_address_per_hour`` (errors also past
``limits.error_replies_per_hour``) the server stays silent and logs it; what
it does not send is not counted. The last answer before the limit says so,
and when answers resume.

Players are forgiven more than strangers: the address of a confirmed
account has ``limits.player_answers_per_hour`` and
``limits.player_error_replies_per_hour``. The same refusal again within the
hour (the same mistake repeated) is counted as an answer but not again as
an error. Only the answer is held back, never the command: what a mail asks
for is carried out all the same. A reply someone else asked for
(``Reply.waits``: a challenge) is not dropped past the limit but held, and
sent when answers resume.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlmodel import Session

from pbm.config import LimitsConfig
from pbm.replies import Reply
from pbm.store.limits import (
    answers_in,
    count_answer,
    first_error,
    is_player_address,
    uncount_answer,
)
from pbm.usecases.text import fmt_time, wrap

log = logging.getLogger("pbm.limits")
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)


def screen(
    session: Session, replies: Sequence[Reply], now: datetime, limits: LimitsConfig
) -> list[Reply]:
    """The replies the limits let through, the last one before a limit with a warning."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    elapsed = (now - hour) / HOUR
    kept = []
    for reply in replies:
        if not reply.counted:
            kept.append(reply)
            continue
        player = is_player_address(session, reply.to)
        answer_limit = (
            limits.player_answers_per_hour if player else limits.answers_per_address_per_hour
        )
        error_limit = (
            limits.player_error_replies_per_hour if player else limits.error_replies_per_hour
        )
        # The same refusal again this hour (or the last) is the same mistake: one error.
        error = reply.is_error and first_error(session, reply.to, hour, _digest(reply))
        prev_answers, prev_errors = answers_in(session, reply.to, hour - HOUR)
        answers, errors = count_answer(session, reply.to, hour, error)
        windows = [Window(answer_limit, prev_answers, answers)]
        if error:
            windows.append(Window(error_limit, prev_errors, errors))
        if any(w.load(elapsed) > w.limit for w in windows):
            uncount_answer(session, reply.to, hour, error)
            if reply.waits:  # asked for by someone else: sent when answers resume
                kept.append(replace(reply, not_before=_resume(hour, elapsed, windows)))
                log.info("holding a mail to %s until its answers resume", reply.to)
                continue
            log.warning("not answering %s: its limit for this hour is reached", reply.to)
            continue
        full = [w for w in windows if w.load(elapsed) + 1 > w.limit]
        if full:
            resume = _resume(hour, elapsed, full)
            shown_error_limit = windows[1].limit if len(windows) > 1 else None
            reply = replace(reply, body=reply.body + _last(resume, answer_limit, shown_error_limit))
        kept.append(reply)
    return kept


def _resume(hour: datetime, elapsed: float, windows: Sequence[Window]) -> datetime:
    """When one more mail passes all of ``windows`` again, to the minute after."""
    opens = max(hour + w.opens_after(elapsed) * HOUR for w in windows)
    resume = opens.replace(second=0, microsecond=0)
    return resume + (MINUTE if resume < opens else timedelta(0))


def _digest(reply: Reply) -> str:
    """What a refusal said, as a short digest (the same mistake says the same)."""
    return hashlib.sha256(f"{reply.subject}\n{reply.body}".encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class Window:
    """One limit over the last hour: ``previous`` mails in the clock hour before, ``current``
    (this one included) in this one."""

    limit: int
    previous: int
    current: int

    def load(self, elapsed: float) -> float:
        """The mails of the last hour, ``elapsed`` (0-1) into this clock hour."""
        return self.previous * (1 - elapsed) + self.current

    def opens_after(self, elapsed: float) -> float:
        """When (in hours from this clock hour's start) one more mail passes again,
        if nothing else is sent meanwhile."""
        room = self.limit - 1 - self.current  # what the previous hour may still weigh
        if room >= 0 and self.previous > 0:
            return max(elapsed, 1 - room / self.previous)
        # Next clock hour, when this hour's weight has fallen enough.
        return 1 + max(0.0, 1 - (self.limit - 1) / self.current)


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
