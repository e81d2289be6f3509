"""How the list commands print: an aligned table, or with ``--json`` a JSON array of objects."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An aligned plain-text table."""
    cells = [[str(h) for h in headers], *[[str(v) for v in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def json_option(f: F) -> F:
    """The ``--json`` flag of a list command."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON, not a table.")(f)


def _plain(value: object) -> object:
    """A value JSON can hold: times as ISO 8601 text."""
    return value.isoformat() if isinstance(value, datetime) else value


def dumps(data: object) -> str:
    """``data`` as indented JSON (times as ISO 8601)."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=_plain)


def emit(
    records: Sequence[Mapping[str, object]],
    as_json: bool,
    headers: Sequence[str],
    row: Callable[[Mapping[str, object]], Sequence[object]],
    empty: str | None = None,
) -> None:
    """Print ``records`` as JSON objects, or as a table of ``row(record)`` under ``headers``."""
    if as_json:
        click.echo(dumps([dict(r) for r in records]))
    elif not records and empty is not None:
        click.echo(empty)
    else:
        click.echo(table(headers, [row(r) for r in records]))
