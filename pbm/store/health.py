"""How the site is doing, for ``pbm status``: the queues read in one snapshot, judged purely.

``read`` takes the numbers (waiting mail, replies to send, failed deliveries);
``problems`` says, as a pure function of them, the time and the limits,
what is wrong: mail that waited too long to be acted on or to be sent, or
replies given up on lately. ``web_problem`` is the one look elsewhere: whether the
web site answers where it listens.
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import MailStatus
from pbm.store import inbox, outbox
from pbm.store.tables import PasswordFailure, table

OUTBOX = outbox.OUTBOX
FAILURES = table(PasswordFailure)


@dataclass(frozen=True)
class Health:
    """The queues at one moment."""

    inbox: dict[str, int]  # rows by status: new (waiting), done, ignored, failed
    oldest_waiting: datetime | None  # the oldest received mail not yet acted on
    outbox: dict[str, int]  # rows by status: pending, sent, failed (given up)
    retrying: int  # pending replies whose last delivery attempt failed
    oldest_pending: datetime | None  # the oldest reply not yet sent
    failed_recently: int  # replies given up on since the ``since`` of ``read``
    set_aside_recently: int = 0  # received mails set aside (failed) since then
    locked: tuple[str, ...] = ()  # accounts whose password commands are locked now
    held: int = 0  # counted answers held back by the limits, to be sent when they resume

    @property
    def waiting(self) -> int:
        return self.inbox.get(MailStatus.NEW, 0)


def read(
    session: Session,
    since: datetime,
    now: datetime | None = None,
    lockout: tuple[int, timedelta] | None = None,
) -> Health:
    """The queues at ``now``; ``failed_recently`` counts the replies given up on since
    ``since``; ``lockout`` (failures, window): which accounts are locked out now."""
    pending = OUTBOX.c.status == "pending"
    # A given-up row keeps when its last attempt was due: it failed then or a little later.
    last_try = sa.func.coalesce(OUTBOX.c.next_attempt_at, OUTBOX.c.created_at)
    retrying = sa.select(sa.func.count()).where(pending, OUTBOX.c.attempts > 0)
    oldest: datetime | None = session.execute(
        sa.select(sa.func.min(OUTBOX.c.created_at)).where(pending)
    ).scalar()
    failed = sa.select(sa.func.count()).where(OUTBOX.c.status == "failed", last_try >= since)
    return Health(
        inbox=inbox.counts(session),
        oldest_waiting=inbox.oldest_waiting(session),
        outbox=outbox.counts(session),
        retrying=int(session.execute(retrying).scalar_one()),
        oldest_pending=oldest,
        failed_recently=int(session.execute(failed).scalar_one()),
        set_aside_recently=inbox.failed_since(session, since),
        locked=locked_accounts(session, now, lockout) if now and lockout else (),
        held=outbox.held(session, now) if now else 0,
    )


def locked_accounts(
    session: Session, now: datetime, lockout: tuple[int, timedelta]
) -> tuple[str, ...]:
    """The userids with ``lockout[0]`` wrong passwords or more within ``lockout[1]``."""
    failures, window = lockout
    stmt = (
        sa.select(FAILURES.c.userid)
        .where(FAILURES.c.failed_at >= now - window)
        .group_by(FAILURES.c.userid)
        .having(sa.func.count() >= failures)
        .order_by(FAILURES.c.userid)
    )
    return tuple(str(u) for u in session.execute(stmt).scalars())


def minutes(since: datetime | None, now: datetime) -> int | None:
    """Whole minutes from ``since`` to ``now`` (None for None; never below 0)."""
    if since is None:
        return None
    return max(0, int((now - since) / timedelta(minutes=1)))


def problems(health: Health, now: datetime, max_wait_minutes: int, hours: int) -> list[str]:
    """What is wrong, one sentence each; empty when all is well."""
    found = []
    waited = minutes(health.oldest_waiting, now)
    if waited is not None and waited > max_wait_minutes:
        found.append(
            f"a received mail has waited {waited} min to be acted on "
            f"(status.max_wait_minutes = {max_wait_minutes})"
        )
    unsent = minutes(health.oldest_pending, now)
    if unsent is not None and unsent > max_wait_minutes:
        found.append(
            f"a reply has waited {unsent} min to be sent "
            f"(status.max_wait_minutes = {max_wait_minutes})"
        )
    if health.failed_recently:
        found.append(
            f"{health.failed_recently} reply(s) given up on in the last {hours} h "
            "(pbm outbox list --status failed)"
        )
    if health.set_aside_recently:
        found.append(
            f"{health.set_aside_recently} received mail(s) set aside in the last {hours} h "
            "after failed attempts (pbm inbox list --status failed; pbm inbox retry ID)"
        )
    return found


def warnings(health: Health) -> list[str]:
    """What an admin should know that is no fault of the site's: locks and held answers."""
    found = []
    if health.locked:
        found.append(
            f"password commands locked for {', '.join(health.locked)} after wrong passwords "
            "(pbm player show UID; pbm player unlock UID)"
        )
    if health.held:
        found.append(
            f"{health.held} answer(s) held back by the answer limits, sent when they resume "
            "(pbm outbox list; pbm player unlock UID sends a player's now)"
        )
    return found


WEB_TIMEOUT_SECONDS = 5.0  # what pbm status waits for the web site's answer


def web_address(listen: str) -> str:
    """The address ``pbm status`` asks the web site at: its ``web.listen``, on this
    machine's loopback when it listens on every address."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def web_problem(listen: str, timeout: float = WEB_TIMEOUT_SECONDS) -> str | None:
    """What is wrong with the web site listening on ``listen`` (``web.listen``; empty: no
    site, nothing to look at): a GET of its front page that gets no answer within
    ``timeout``, or an answer of 500 or more. None when it answers."""
    if not listen:
        return None
    url = web_address(listen)
    host, _, port = url.removeprefix("http://").rstrip("/").rpartition(":")
    try:
        conn = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout)
        try:
            conn.request("GET", "/")
            status = conn.getresponse().status
        finally:
            conn.close()
    except (OSError, ValueError, http.client.HTTPException) as exc:
        why = str(exc) or type(exc).__name__
        return f"the web site does not answer at {url} ({why})"
    if status >= 500:
        return f"the web site answers {url} with {status}"
    return None
