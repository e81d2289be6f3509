"""``pbm status``: the version, the database and the queues; exit 1 when something is wrong.

For monitoring: the exit status is 0 while mail is acted on and sent in time
(``status.max_wait_minutes``), no reply was given up on lately
(``status.failed_within_hours``) and the web site (``web.listen``) answers, 1
otherwise (and for a database that cannot be read). ``--json`` prints the same as
one JSON object.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import click

from pbm import version
from pbm.cli.output import dumps
from pbm.cli.startup import NOW_HELP, load_config, open_database, parse_now
from pbm.model import MailStatus
from pbm.store import health
from pbm.store.engine import head_revision, shown_url


def report(
    h: health.Health, now: datetime, found: list[str], warned: list[str] | None = None
) -> dict[str, object]:
    """What ``pbm status`` says, as data (``--json`` prints it as it is)."""
    return {
        "inbox": {
            "waiting": h.waiting,
            "oldest_waiting": h.oldest_waiting,
            "oldest_waiting_minutes": health.minutes(h.oldest_waiting, now),
            **{status: n for status, n in sorted(h.inbox.items()) if status != MailStatus.NEW},
        },
        "outbox": {
            "pending": h.outbox.get("pending", 0),
            "retrying": h.retrying,
            "failed": h.outbox.get("failed", 0),
            "sent": h.outbox.get("sent", 0),
            "oldest_pending": h.oldest_pending,
            "oldest_pending_minutes": health.minutes(h.oldest_pending, now),
        },
        "failed_recently": h.failed_recently,
        "set_aside_recently": h.set_aside_recently,
        "locked": list(h.locked),
        "held": h.held,
        "problems": found,
        "warnings": warned or [],
        "ok": not found,
    }


def _age(minutes: object) -> str:
    return "" if minutes is None else f", the oldest for {minutes} min"


def lines(data: dict[str, object], hours: int) -> list[str]:
    """The report as text lines."""
    inbox, outbox = data["inbox"], data["outbox"]
    assert isinstance(inbox, dict) and isinstance(outbox, dict)
    problems, warned = data["problems"], data.get("warnings", [])
    assert isinstance(problems, list) and isinstance(warned, list)
    return [
        f"pbm {data['version']}",
        f"database: {data['database']} (revision {data['revision']})",
        f"inbox: {inbox['waiting']} waiting{_age(inbox['oldest_waiting_minutes'])}",
        f"outbox: {outbox['pending']} pending{_age(outbox['oldest_pending_minutes'])}, "
        f"{outbox['retrying']} retrying after a failed attempt, "
        f"{outbox['failed']} failed (given up), {outbox['sent']} sent",
        f"failed deliveries: {data['failed_recently']} in the last {hours} h",
        *(f"warning: {w}" for w in warned),
        *(f"problem: {p}" for p in problems),
        "status: ok" if data["ok"] else "status: PROBLEM",
    ]


@click.command(short_help="The queues and what is wrong; exit 1 when something is.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def status(ctx: click.Context, as_json: bool, now_text: str | None) -> None:
    """The queues and what is wrong with them; exit status 1 when something is."""
    now = parse_now(now_text)
    cfg = load_config(ctx)
    hours = cfg.status.failed_within_hours
    with open_database(ctx) as db, db.read() as session:
        lockout = (
            cfg.limits.password_failures,
            timedelta(minutes=cfg.limits.password_lockout_minutes),
        )
        h = health.read(session, now - timedelta(hours=hours), now, lockout)
    found = health.problems(h, now, cfg.status.max_wait_minutes, hours)
    web = health.web_problem(cfg.web.listen)
    if web is not None:
        found.append(web)
    data = {
        "version": version(),
        "database": shown_url(cfg),
        "revision": head_revision(),
        **report(h, now, found, health.warnings(h)),
    }
    click.echo(dumps(data) if as_json else "\n".join(lines(data, hours)))
    if found:
        ctx.exit(1)
