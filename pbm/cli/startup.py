"""What every command of the command line starts from: the config, the database, the site.

``load_config`` finds and reads the config once per run (``config.locate``: a
file named by ``--config`` or ``$PBM_CONFIG`` must exist). ``open_database``
is the one way a command opens the database: it never creates one (only
``pbm init`` does) and checks that it has pbm's schema at the newest
revision. ``open_site`` adds the clock. What goes wrong is not handled here
but raised: ``pbm.cli.faults`` turns it into one line on stderr.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import click

from pbm import config as config_mod
from pbm.store.engine import Database, current_revision, head_revision, shown_url
from pbm.usecases.site import TIME_RANGE, Site, in_range, utc_now

NOW_HELP = "Act as if it were this time (ISO 8601, UTC unless a zone is given)."


def readable_by_others(cfg: config_mod.Config) -> list[str]:
    """Warnings for the files that hold secrets (the config: ``mail.secret``; the SQLite
    file and its -wal and -shm: received mail with passwords) and that others can read."""
    files = [cfg.path] if cfg.path is not None else []
    url = cfg.database_url
    if url.startswith("sqlite:///"):
        db_file = Path(url.removeprefix("sqlite:///").partition("?")[0])
        files += [db_file, Path(f"{db_file}-wal"), Path(f"{db_file}-shm")]
    found = []
    for path in files:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if mode & 0o077:
            found.append(
                f"warning: {path} is readable by others (mode {mode & 0o777:o}) and holds "
                f"secrets: chmod 600 {path}"
            )
    return found


def located(ctx: click.Context) -> config_mod.Located:
    """Where the config file of this run is (``--config``, ``$PBM_CONFIG``, the search path)."""
    return config_mod.locate(ctx.find_root().ensure_object(dict).get("config_file"))


def load_config(ctx: click.Context) -> config_mod.Config:
    """The config of this run, read once; kept for the error path (it shows the database)."""
    obj = ctx.find_root().ensure_object(dict)
    if "config" not in obj:
        obj["config"] = config_mod.load_located(located(ctx))
    cfg: config_mod.Config = obj["config"]
    return cfg


class BadTime(click.ClickException):
    """A time option that is no time pbm takes: one line on stderr, exit status 2 (click's
    status for a bad parameter)."""

    exit_code = 2


def parse_time(value: str, option: str, example: str = "2025-03-08T12:00") -> datetime:
    """An ISO 8601 time or date given on the command line, in UTC (UTC when it has no zone),
    within the years pbm takes (``usecases.site.TIME_RANGE``)."""
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise BadTime(f"{option} {value!r}: write a time as {example} (ISO 8601)") from None
    try:
        t = t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first year in UTC
        raise BadTime(f"{option} {value!r}: {TIME_RANGE}") from None
    if not in_range(t):
        raise BadTime(f"{option} {value!r}: {TIME_RANGE}")
    return t


def parse_now(value: str | None) -> datetime:
    """``--now``: an ISO time (UTC when it has no zone), or the current time."""
    return datetime.now(UTC) if value is None else parse_time(value, "--now")


def no_config_found(cfg: config_mod.Config) -> str | None:
    """Where the config was looked for, in words, when none was found (none named: a named
    one that is missing is an error of its own); None when there is one."""
    if cfg.path is not None and cfg.path.exists():
        return None
    looked = " and ".join(str(p.absolute()) for p in config_mod.SEARCH_PATH)
    return f"no pbm.toml found (looked for {looked}; --config FILE or $PBM_CONFIG names one)"


def not_initialised(cfg: config_mod.Config, what: str) -> click.ClickException:
    """``what`` is missing (the database, ``mail.secret``): run ``pbm init``; first of all,
    when no config file was found, where it was looked for (pbm run in another folder
    than the site's, say)."""
    missing = no_config_found(cfg)
    if missing is None:
        return click.ClickException(f"{what}: run `pbm init` first")
    return click.ClickException(
        f"{missing}, and {what}: run pbm in the folder of its pbm.toml, or `pbm init` to "
        "make one here"
    )


def check_revision(db: Database, cfg: config_mod.Config) -> None:
    """A database without pbm's schema, or at another revision, is a clear error."""
    revision = current_revision(db)
    if revision is None:
        raise not_initialised(cfg, f"no pbm database at {shown_url(cfg)}")
    if revision != head_revision():
        raise click.ClickException(
            f"the database at {shown_url(cfg)} is at revision {revision}, this pbm needs "
            f"{head_revision()}: run `pbm db upgrade` first"
        )


@contextmanager
def open_database(ctx: click.Context, *, schema: bool = True) -> Iterator[Database]:
    """The configured database, which must exist; ``schema``: at the newest revision too."""
    cfg = load_config(ctx)
    try:
        db = Database.open(cfg, create=False)
    except FileNotFoundError:
        raise not_initialised(cfg, f"no pbm database at {shown_url(cfg)}") from None
    try:
        if schema:
            check_revision(db, cfg)
        yield db
    finally:
        db.close()


@contextmanager
def open_site(ctx: click.Context, now: datetime | None = None) -> Iterator[Site]:
    """The site over the configured database, its clock at ``now`` if given.

    Mail is sent at once even when ``now`` is ahead of real time.
    """
    with open_database(ctx) as db:
        cfg = load_config(ctx)
        if now is None:
            yield Site(db, cfg)
        else:
            yield Site(db, cfg, lambda: now, lambda: min(now, utc_now()))
