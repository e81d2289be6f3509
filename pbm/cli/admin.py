"""The admin commands: ``pbm init``, ``db``, ``player``, ``game``, ``archive``.

A thin layer over the use cases: whatever these change is mailed to the
players like any other change (the replies go to the outbox).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import click

from pbm import config as config_mod
from pbm.cli.output import emit, json_option
from pbm.cli.rules import parse_options
from pbm.cli.startup import (
    load_config,
    located,
    open_database,
    open_site,
    parse_time,
    readable_by_others,
)
from pbm.commands.arguments import BadGuard, guarded
from pbm.mail.controls import strip_controls
from pbm.model import BoardStatus
from pbm.store.engine import head_revision, init_db, shown_url
from pbm.store.engine import upgrade as upgrade_db
from pbm.usecases import challenges, moves, proposals, queries, unit
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.boardtext import render_board_text
from pbm.usecases.boardview import BoardView
from pbm.usecases.records import archive as archive_mod
from pbm.usecases.records import formats

# ---------------------------------------------------------------- init, db


PORT = click.IntRange(1, 65535)


@click.command()
@click.option("--address", default=None, help="The server's mail address (mail.address).")
@click.option(
    "--data-dir",
    default=None,
    help="server.data_dir: the folder of the SQLite file and the outbox (default: data).",
)
@click.option(
    "--smtp-port",
    type=PORT,
    default=None,
    help="Listen for mail on 127.0.0.1:PORT (smtp.listen; default: 2525).",
)
@click.option(
    "--web-port",
    type=PORT,
    default=None,
    help="The web site on 127.0.0.1:PORT (web.listen; default: 8080).",
)
@click.pass_context
def init(
    ctx: click.Context,
    address: str | None,
    data_dir: str | None,
    smtp_port: int | None,
    web_port: int | None,
) -> None:
    """Write the config file (mode 0600) and create the database.

    The config file holds a fresh mail.secret; one that is there already is kept as it
    is, and the database is created or upgraded.
    """
    path = located(ctx).path
    if path.exists():
        click.echo(f"config: {path} (kept)")
        given = [f"--{n}" for n, v in (("smtp-port", smtp_port), ("web-port", web_port)) if v]
        if given:
            click.echo(
                f"warning: {' and '.join(given)} not written: {path} is kept as it is "
                "(edit smtp.listen and web.listen in it)",
                err=True,
            )
    else:
        text = config_mod.default_file_text(
            config_mod.new_secret(),
            address or config_mod.MailConfig.address,
            data_dir or config_mod.ServerConfig.data_dir,
            f"127.0.0.1:{smtp_port}" if smtp_port else config_mod.SmtpConfig.listen,
            f"127.0.0.1:{web_port}" if web_port else config_mod.WebConfig.listen,
        )
        config_mod.write_new_file(path, text)
        click.echo(f"config: {path} (new, with a fresh mail.secret)")
    cfg = load_config(ctx)
    init_db(cfg).close()
    click.echo(f"database: {shown_url(cfg)} (at revision {head_revision()})")
    if cfg.smtp.listen:
        click.echo(f"mail: {cfg.smtp.protocol.upper()} on {cfg.smtp.listen} (smtp.listen)")
    if cfg.web.listen:
        click.echo(f"web site: http://{cfg.web.listen}/ (web.listen); mails link to {cfg.web.base}")
    for warning in readable_by_others(cfg):
        click.echo(warning, err=True)


@click.group()
def db() -> None:
    """The database schema."""


@db.command()
@click.pass_context
def upgrade(ctx: click.Context) -> None:
    """Migrate an existing database to the newest schema."""
    cfg = load_config(ctx)
    with open_database(ctx, schema=False) as database:
        upgrade_db(database)
    click.echo(f"database: {shown_url(cfg)} (at revision {head_revision()})")


# ---------------------------------------------------------------- games


@click.group()
def game() -> None:
    """Boards: create, list, show, move, cancel."""


@game.command("create")
@click.argument("game_name", metavar="GAME")
@click.argument("white", metavar="UID1")
@click.argument("black", metavar="UID2")
@click.option("--variant", default=None, help="The game's variant (default: its first).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A game option.")
@click.option("--nag", type=click.IntRange(min=1), default=None, help="Reminder after DAYS.")
@click.option("--forfeit", type=click.IntRange(min=1), default=None, help="Forfeit after DAYS.")
@click.option(
    "--time",
    "time_control",
    default=None,
    metavar="SPEC",
    help='The time control: "classic 7/21", "days 3", "fischer 10d+36h max 10d", '
    '"ICCF 10/50d", each with an optional "weekends off [TIMEZONE]" (default: the site\'s).',
)
@click.pass_context
def game_create(
    ctx: click.Context,
    game_name: str,
    white: str,
    black: str,
    variant: str | None,
    options: tuple[str, ...],
    nag: int | None,
    forfeit: int | None,
    time_control: str | None,
) -> None:
    """Start a board; UID1 plays White and moves first. Prints the board number."""
    with open_site(ctx) as site:
        action = challenges.Challenge(
            game_name,
            white,
            black,
            admin=True,
            variant=variant,
            options=parse_options(options),
            nag_days=nag,
            forfeit_days=forfeit,
            time=time_control,
        )
        replies = unit.run(site, action)
        click.echo(replies[0].board)


@game.command("list", short_help="The boards as a table, filtered.")
@click.option(
    "--status",
    type=click.Choice([*(s.value for s in BoardStatus), "all"]),
    default=BoardStatus.ACTIVE.value,
    show_default=True,
)
@click.option("--player", "userid", default=None, help="Only boards of this player.")
@click.option("--game", "game_name", default=None, help="Only boards of this game.")
@json_option
@click.pass_context
def game_list(
    ctx: click.Context, status: str, userid: str | None, game_name: str | None, as_json: bool
) -> None:
    """Boards as a table: board, game, variant, players, to move, ply, last move."""
    with open_site(ctx) as site:
        found = queries.boards(site, status=status, userid=userid, game=game_name)
    records = [dataclasses.asdict(b) for b in found]
    headers = ("board", "game", "variant", "players", "to move", "ply", "last move")
    emit(records, as_json, headers, _board_row)


def _board_row(b: Mapping[str, object]) -> tuple[object, ...]:
    last = b["last_move_at"]
    if b["status"] == BoardStatus.WAITING:
        to_move = f"(challenge to {b['to_move']})"
    else:
        to_move = str(b["to_move"] or f"{b['status']} {b['result'] or ''}".strip())
    shown = f"{last:%Y-%m-%d %H:%M}" if isinstance(last, datetime) else "-"
    players = f"{b['white']}-{b['black']}"
    return (b["board"], b["game"], b["variant"], players, to_move, b["ply"], shown)


@game.command("show")
@click.argument("board", type=int)
@click.pass_context
def game_show(ctx: click.Context, board: int) -> None:
    """The diagram and the move list of BOARD."""
    with open_site(ctx) as site:
        subject, body = render_board_text(queries.view(site, board))
        click.echo(subject)
        click.echo()
        click.echo(body, nl=False)


@game.command("move")
@click.argument("board", type=int)
@click.argument("userid")
@click.argument("move")
@click.option("--comment", default="", help="A comment shown with the move.")
@click.pass_context
def game_move(ctx: click.Context, board: int, userid: str, move: str, comment: str) -> None:
    """Play MOVE for UID on BOARD (for repairs).

    MOVE may be `resign`, or MOVE#N to play it only as move N.
    """
    with open_site(ctx) as site:
        who = Who(userid, ADMIN)
        if move.strip().lower() == "resign":
            unit.run(site, moves.Resign(board, strip_controls(comment)), who)
            view = queries.view(site, board)
            click.echo(f"board {board}: {userid} resigned; {_state_line(view)}")
            return
        try:
            notation, expect = guarded(move.strip())
        except BadGuard as exc:
            raise click.BadParameter(str(exc), param_hint="MOVE") from None
        played = moves.Move(board, notation.strip(), expect, comment=strip_controls(comment))
        unit.run(site, played, who)
        view = queries.view(site, board)
        click.echo(f"board {board}: {view.moves[-1].notation} played; {_state_line(view)}")


def _state_line(view: BoardView) -> str:
    if view.status == BoardStatus.ACTIVE:
        return f"{view.to_move_name} to move"
    return f"{view.status} {view.result or ''} {view.termination or ''}".strip()


@game.command("cancel")
@click.argument("board", type=int)
@click.pass_context
def game_cancel(ctx: click.Context, board: int) -> None:
    """Cancel BOARD (the players are told)."""
    with open_site(ctx) as site:
        found = queries.board(site, board)
        unit.run(site, proposals.Cancel(board), Who(found.white, ADMIN))
        click.echo(f"board {board} ({found.name(found.white)}-{found.name(found.black)}) cancelled")


# ---------------------------------------------------------------- archive


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="The folder of the records (default: archive/ in server.data_dir).",
)
@click.option("--format", "fmt", type=click.Choice(formats.formats()), default="text")
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only games that ended on or after (ISO 8601, UTC unless a zone is given).",
)
@click.pass_context
def archive(ctx: click.Context, out_dir: str | None, fmt: str, since: str | None) -> None:
    """Write every finished game not yet archived as a record file.

    A game archived before is written again when DIR has no record of it in
    this format (JSON after text, say).
    """
    since_at = None if since is None else parse_time(since, "--since", "YYYY-MM-DD")
    with open_site(ctx) as site:
        out = Path(out_dir) if out_dir is not None else site.config.data_path / "archive"
        boards = archive_mod.pending_boards(site, since_at, out, fmt)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        lacking: dict[str, list[str]] = {}  # game title -> boards it has no such records of
        # The bar is drawn on a terminal only; elsewhere click prints just the label.
        with click.progressbar(boards, label="archiving", file=sys.stderr) as bar:
            for board in bar:
                try:
                    arch = archive_mod.archive_board(site, board, out, fmt)
                except formats.NoRecordFormat as exc:  # left for another format
                    lacking.setdefault(exc.title, []).append(str(board))
                    continue
                except OSError as exc:  # the game stays unarchived: the next run retries it
                    raise click.ClickException(
                        f"board {board}: cannot write its record in {out}: {exc}"
                    ) from None
                written.append(arch)
        for a in written:
            click.echo(str(a.path))
        unfit = "; ".join(
            f"{title} has no {fmt} records (board{'s' if len(numbers) > 1 else ''} "
            f"{', '.join(numbers)})"
            for title, numbers in lacking.items()
        )
        if lacking and not written:  # the format fits none of them: a mistake, said so
            raise click.ClickException(
                f"no game archived as {fmt}: {unfit}; formats: {formats.formats_words()}"
            )
        if lacking:
            click.echo(f"not archived as {fmt}: {unfit}", err=True)
        if not boards:
            after = f" since {since}" if since else ""
            click.echo(
                f"0 games archived: every game that ended{after} has its {fmt} record in "
                f"{out} already",
                err=True,
            )
        else:
            click.echo(f"{len(written)} game(s) archived in {out}", err=True)


def register(main: click.Group) -> None:
    """Add the admin commands to the ``pbm`` group."""
    for cmd in (init, db, game, archive):
        main.add_command(cmd)
