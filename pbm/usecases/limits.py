"""The site's limits on automatic mail: who may be sent how much, and who pays for it.

Anyone can write any From address. Without limits, a forged mail of many
commands (or many mails naming many victims) would make the server a spam
cannon, and a stranger could bury a player in challenges or reset mails.
So one mail in gets at most one mail out to its sender (``answers``), and
every mail the server writes is screened here by its kind (``Reply.kind``):

- **answers** (help, errors, ``show``, account mail) and a followed board's
  mails count against their reader's address, per clock hour over the last
  hour (a sliding window: the previous clock hour's count weighs as much of
  it as is still within the last hour): past
  ``limits.answers_per_address_per_hour`` (errors also past
  ``limits.error_replies_per_hour``) the server stays silent and logs it.
  The address of a confirmed account has ``limits.player_answers_per_hour``
  and ``limits.player_error_replies_per_hour``; any other address (it never
  answered one of our mails) at most ``limits.stranger_answers_per_day`` a
  day. The same refusal again within the hour counts once as an error. The
  last answer before a limit says so, and when answers resume;
- **confirmations** (a signup, an address change) go to an address at most
  ``limits.confirmations_per_day`` a day, whoever asks;
- **challenges** reach a player at most ``limits.challenge_mails_per_hour`` (1)
  times an hour: those that come within the hour after are gathered into one
  mail, sent when the hour is up. They never spend his own answer allowance;
- a board's mails to its players, notices of one's own account (told once),
  and password resets (limited by their account, ``accounts.AskReset``) are
  never held back; but a board's news that can wait (``MailKind.MOVED``: the
  opponent moved) is not sent to a player who chose a digest: his digest lists
  the board (``usecases.digests``).

Only the answer is held back, never the command: what a mail asks for is
carried out all the same.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pbm.config import LimitsConfig
from pbm.replies import MailKind, Reply
from pbm.store import Session, outbox
from pbm.store.answer_counts import (
    answers_in,
    answers_since,
    count_answer,
    count_notice,
    first_error,
    is_player_address,
    uncount_answer,
)
from pbm.store.digests import digest_readers
from pbm.usecases.text import fmt_time, wrap

log = logging.getLogger("pbm.limits")
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)


def screen(
    session: Session, replies: Sequence[Reply], now: datetime, limits: LimitsConfig
) -> list[Reply]:
    """The replies the limits let through (the last one before a limit with a warning,
    a challenge held back for the hour); the others are logged."""
    kept = []
    for reply in replies:
        if reply.kind.counted:
            answered = _answer(session, reply, now, limits)
        elif reply.kind is MailKind.CONFIRM:
            answered = _confirmation(session, reply, now, limits)
        elif reply.kind is MailKind.CHALLENGE:
            answered = _challenge(session, reply, now, limits.challenge_mails_per_hour)
        elif reply.kind is MailKind.MOVED and digest_readers(session, [reply.reply_as or ""]):
            log.info("%s reads a digest: the board mail waits for it", reply.to)
            answered = None
        else:
            answered = reply
        if answered is not None:
            kept.append(answered)
    return kept


def _confirmation(
    session: Session, reply: Reply, now: datetime, limits: LimitsConfig
) -> Reply | None:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if count_notice(session, f"confirm:{reply.to.lower()}", day) > limits.confirmations_per_day:
        log.warning("not sending %s another confirmation mail today", reply.to)
        return None
    return reply


def _challenge(session: Session, reply: Reply, now: datetime, per_hour: int) -> Reply | None:
    """A challenge past ``per_hour`` in the hour to its reader: gathered into the one that
    waits for the hour to pass (None: it went there), or made to wait itself."""
    last = outbox.last_of_kind(session, reply.to, MailKind.CHALLENGE, now - HOUR)
    if last is None or (last.recent < per_hour and not last.waiting):
        return reply
    if last.waiting:
        outbox.gather_challenge(session, last.id, reply.subject, reply.body)
        log.info("a challenge to %s joins the one that waits for the hour", reply.to)
        return None
    return replace(reply, not_before=last.due_at + HOUR)


def _answer(session: Session, reply: Reply, now: datetime, limits: LimitsConfig) -> Reply | None:
    hour = now.replace(minute=0, second=0, microsecond=0)
    elapsed = (now - hour) / HOUR
    player = is_player_address(session, reply.to)
    if (
        not player
        and answers_since(session, reply.to, now - DAY) >= limits.stranger_answers_per_day
    ):
        log.warning("not answering %s: a stranger's answers for today are spent", reply.to)
        return None
    answer_limit = limits.player_answers_per_hour if player else limits.answers_per_address_per_hour
    error_limit = limits.player_error_replies_per_hour if player else limits.error_replies_per_hour
    # The same refusal again this hour (or the last) is the same mistake: one error.
    error = reply.is_error and first_error(session, reply.to, hour, _digest(reply))
    prev_answers, prev_errors = answers_in(session, reply.to, hour - HOUR)
    answers, errors = count_answer(session, reply.to, hour, error)
    windows = [Window(answer_limit, prev_answers, answers)]
    if error:
        windows.append(Window(error_limit, prev_errors, errors))
    if any(w.load(elapsed) > w.limit for w in windows):
        uncount_answer(session, reply.to, hour, error)
        log.warning("not answering %s: its limit for this hour is reached", reply.to)
        return None
    full = [w for w in windows if w.load(elapsed) + 1 > w.limit]
    if (
        not player
        and answers_since(session, reply.to, now - DAY) >= limits.stranger_answers_per_day
    ):
        return replace(reply, body=reply.body + _stranger(now, limits.stranger_answers_per_day))
    if full:
        resume = _resume(hour, elapsed, full)
        shown_error_limit = windows[1].limit if len(windows) > 1 else None
        reply = replace(reply, body=reply.body + _last(resume, answer_limit, shown_error_limit))
    return reply


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
        "out, but not answered. Mail about the boards you play still comes."
    )
    return "\n" + "\n".join(wrap(text)) + "\n"


def _stranger(now: datetime, per_day: int) -> str:
    answers = "one answer" if per_day == 1 else f"{per_day} answers"
    text = (
        f"This address has no confirmed account here, so it gets {answers} a day: mail "
        f"from it is carried out until {fmt_time(now + DAY)}, but not answered. A "
        "confirmed account gets more (signup USERID PASSWORD, then reply to the mail "
        "that asks you to confirm it)."
    )
    return "\n" + "\n".join(wrap(text)) + "\n"
