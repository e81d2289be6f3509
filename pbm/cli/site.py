"""What every command of the command line starts from: the config, the site, one error path.

``open_site`` loads the configuration, opens the database (a missing one is
an error, never created by a command that only reads), and turns what goes
wrong into one line on stderr and exit status 1: a config fault, a database
fault (its URL shown without the password), a refused command.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import click
from sqlalchemy import exc as sa_exc

from pbm import config as config_mod
from pbm.store.engine import Database, current_revision, head_revision, shown_url
from pbm.usecases.refusals import Refused
from pbm.usecases.site import Site, utc_now

NOW_HELP = "Act as if it were this time (ISO 8601, UTC unless a zone is given)."


def load_config(ctx: click.Context) -> config_mod.Config:
    """The config named by ``--config``/``$PBM_CONFIG``, with a clear error if unusable."""
    try:
        return config_mod.load((ctx.obj or {}).get("config_file"))
    except config_mod.ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def parse_now(value: str | None) -> datetime:
    """``--now``: an ISO time (UTC when it has no zone), or the current time."""
    if value is None:
        return datetime.now(UTC)
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: write a time as 2025-03-08T12:00 (ISO 8601)", param_hint="--now"
        ) from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


@contextmanager
def database_errors(cfg: config_mod.Config) -> Iterator[None]:
    """A database that cannot be reached is a one-line error, not a traceback."""
    try:
        yield
    except sa_exc.DBAPIError as exc:  # unreachable, refused, or not the schema we expect
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise click.ClickException(f"database {shown_url(cfg)}: {reason}") from None


def check_revision(db: Database, cfg: config_mod.Config) -> None:
    """A database without pbm's schema, or at an older revision, is a clear error."""
    revision = current_revision(db)
    if revision is None:
        raise click.ClickException(f"no pbm database at {shown_url(cfg)}: run `pbm init` first")
    if revision != head_revision():
        raise click.ClickException(
            f"the database at {shown_url(cfg)} is at revision {revision}, this pbm needs "
            f"{head_revision()}: run `pbm db upgrade` first"
        )


@contextmanager
def open_site(ctx: click.Context, now: datetime | None = None) -> Iterator[Site]:
    """The site over the configured database, its clock at ``now`` if given.

    Mail is sent at once even when ``now`` is ahead of real time.
    """
    cfg = load_config(ctx)
    try:
        db = Database.open(cfg, create=False)
    except FileNotFoundError:
        raise click.ClickException(
            f"no pbm database at {shown_url(cfg)}: run `pbm init` first"
        ) from None
    try:
        with database_errors(cfg):
            check_revision(db, cfg)
            site = Site(db, cfg)
            if now is not None:
                site = Site(db, cfg, lambda: now, lambda: min(now, utc_now()))
            try:
                yield site
            except Refused as exc:
                raise click.ClickException(exc.message) from None
    finally:
        db.close()
