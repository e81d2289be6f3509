"""The command line's one error path: whatever stops a command is one line on stderr.

``describe`` says in one line what an exception means for the admin: a config
fault, a database fault (its URL shown without the password), a refused
command, a file that cannot be written; anything else is named with a hint
to ``--debug``. ``Main`` is the ``pbm`` group that catches and says it (exit
status 1, no traceback unless ``pbm --debug``).
"""

from __future__ import annotations

import sqlite3
from typing import Any

import click
from sqlalchemy import exc as sa_exc

from pbm.config import Config, ConfigError
from pbm.refusals import Refused, UnknownPlayer
from pbm.store.engine import shown_url, url_of

POSTGRES_DRIVER = "psycopg"


def _database(cfg: Config | None) -> str:
    """``database URL`` without its password, or the config key when the URL is no URL."""
    if cfg is None:
        return "database"
    try:
        return f"database {shown_url(cfg)}"
    except sa_exc.ArgumentError:
        return "database.url"


def _masked(text: str, cfg: Config | None) -> str:
    """``text`` without the database password in it, on one line."""
    line = " ".join(text.strip().splitlines()[:1]) if text.strip() else text
    if cfg is not None:
        try:
            password = url_of(cfg).password
        except sa_exc.ArgumentError:
            password = None
        if password:
            line = line.replace(str(password), "***")
    return line


def describe(exc: BaseException, cfg: Config | None) -> str | None:
    """One line for ``exc``, or None for what click says itself (usage errors, exits)."""
    if isinstance(exc, click.exceptions.ClickException | click.exceptions.Exit):
        return None
    if isinstance(exc, click.exceptions.Abort):
        return None
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, UnknownPlayer) and exc.userid:  # a player's words are for mail
        return f"There is no player {exc.userid!r}; add one with: pbm player add {exc.userid} EMAIL"
    if isinstance(exc, Refused):
        return exc.message
    if isinstance(exc, sa_exc.DBAPIError):
        reason = str(exc.orig) if exc.orig is not None else str(exc)
        return f"{_database(cfg)}: {_masked(reason, cfg)}"
    if isinstance(exc, sa_exc.ArgumentError):  # no URL, or a dialect that is not installed
        return f"{_database(cfg)}: {_masked(str(exc), cfg)}"
    if isinstance(exc, sa_exc.SQLAlchemyError | sqlite3.Error):
        return f"{_database(cfg)}: {_masked(str(exc), cfg)}"
    if isinstance(exc, ModuleNotFoundError):
        if (exc.name or "").startswith(POSTGRES_DRIVER):
            return f"{_database(cfg)}: PostgreSQL needs its driver: pip install 'pbm[postgres]'"
        return f"a Python module is missing: {exc.name} (for {_database(cfg)}?)"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    text = _masked(str(exc), cfg)
    return f"unexpected {type(exc).__name__}: {text} (pbm --debug ... shows the traceback)"


class Main(click.Group):
    """The ``pbm`` group: every fault of a command ends as one line, unless ``--debug``."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            obj = ctx.ensure_object(dict)
            line = describe(exc, obj.get("config"))
            if line is None or obj.get("debug"):
                raise
            raise click.ClickException(line) from None
