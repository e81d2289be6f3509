"""``pbm rules``: the game rules from the command line (no database, no mail)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import BinaryIO

import click

from pbm import games
from pbm.games import BadOption, GameState, IllegalMove, Option
from pbm.usecases.records.replay import RecordError, parse_record, replay


def parse_options(values: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` words (``--option``) as a dict; a usage error names a bad one."""
    opts: dict[str, str] = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key or not val:
            raise click.BadParameter(f"{v!r}: write KEY=VALUE, an option of the game")
        opts[key.strip()] = val.strip()
    return opts


def _given(options: Sequence[str], flags: Mapping[str, str | None]) -> dict[str, str]:
    """The game options of ``--option KEY=VALUE`` and of the flags named after options
    (``--size 13``); a flag wins over an ``--option`` of the same name."""
    given = parse_options(options)
    given.update({name: value for name, value in flags.items() if value is not None})
    return given


def _start(game: str | None, variant: str | None, options: dict[str, str]) -> GameState:
    game = _game(game)
    try:
        return games.get(game).new(variant, options)
    except KeyError:
        raise click.BadParameter(
            f"unknown game {game!r}; games: {', '.join(games.names())}", param_hint="--game"
        ) from None
    except BadOption as exc:
        raise click.UsageError(str(exc)) from None


def _play_all(state: GameState, moves: Sequence[str], game: str | None) -> GameState:
    """``state`` after ``moves``; exit 1 naming the move (as the game numbers it), its
    side and why at the first that is refused."""
    rules = games.get(_game(game))
    for text in moves:
        side = rules.seat_names[state.to_move]
        number = games.move_number(rules, state.ply + 1)
        try:
            state, _ = state.play(text)
        except IllegalMove as exc:
            click.echo(f"move {number} {side} ({text}): {exc}", err=True)
            sys.exit(1)
    return state


def _option_help() -> str:
    declared = [
        f"{o.name}={'|'.join(o.values)} ({name})"
        for name in games.names()
        for o in games.get(name).options
    ]
    return "A game option: " + (", ".join(declared) or "none here") + "."


# The parameters of the commands: a game option of the same name has no flag of its own.
_PARAMETERS = frozenset({"game", "variant", "option", "options", "count", "depth", "moves"})


def _flags() -> dict[str, list[tuple[str, Option]]]:
    """Every game's declared options by name, each with the games that have it."""
    found: dict[str, list[tuple[str, Option]]] = {}
    for name in games.names():
        for option in games.get(name).options:
            if option.name not in _PARAMETERS:
                found.setdefault(option.name, []).append((name, option))
    return found


def _common(f: click.decorators.FC) -> click.decorators.FC:
    for name, owners in sorted(_flags().items(), reverse=True):
        told = "; ".join(f"{game}: {option.help}" for game, option in owners)
        flag = "--" + name.replace("_", "-")
        f = click.option(flag, name, default=None, metavar="VALUE", help=f"{told}.")(f)
    f = click.option(
        "--option", "options", multiple=True, metavar="KEY=VALUE", help=_option_help()
    )(f)
    f = click.option("--variant", default=None, help="The variant (default: the game's first).")(f)
    f = click.option(
        "--game", default=None, help=f"The game: {', '.join(games.names())} (default: the first)."
    )(f)
    return f


def _game(name: str | None) -> str:
    return name or games.names()[0]


@click.group()
def rules() -> None:
    """Legal moves, perft, diagrams and replays of game records."""


@rules.command(short_help="Every legal move after MOVES, one a line.")
@_common
@click.option("--count", is_flag=True, help="Print only the number of legal moves.")
@click.argument("moves", nargs=-1)
def moves(
    game: str | None,
    variant: str | None,
    options: tuple[str, ...],
    count: bool,
    moves: tuple[str, ...],
    **flags: str | None,
) -> None:
    """Replay MOVES from the start and list every legal move, one a line, sorted."""
    state = _play_all(_start(game, variant, _given(options, flags)), moves, game)
    legal = state.legal_moves()
    if count:
        click.echo(len(legal))
    else:
        for m in legal:
            click.echo(m)


@rules.command(short_help="Count the turn sequences of length DEPTH.")
@_common
@click.option("--depth", type=click.IntRange(min=0), required=True, help="Turns to look ahead.")
@click.argument("moves", nargs=-1)
def perft(
    game: str | None,
    variant: str | None,
    options: tuple[str, ...],
    depth: int,
    moves: tuple[str, ...],
    **flags: str | None,
) -> None:
    """Count the turn sequences of length DEPTH after MOVES (a finished game has none),
    with the game's own move generator where it has one."""
    state = _play_all(_start(game, variant, _given(options, flags)), moves, game)
    click.echo(games.perft(state, depth))


@rules.command()
@_common
@click.argument("moves", nargs=-1)
def show(
    game: str | None,
    variant: str | None,
    options: tuple[str, ...],
    moves: tuple[str, ...],
    **flags: str | None,
) -> None:
    """Print the board diagram after MOVES."""
    state = _play_all(_start(game, variant, _given(options, flags)), moves, game)
    click.echo(state.diagram(), nl=False)


@rules.command("replay", short_help="Replay a game record: final diagram and result.")
@_common
@click.argument("file", type=click.File("rb"))
def replay_cmd(
    game: str | None,
    variant: str | None,
    options: tuple[str, ...],
    file: BinaryIO,
    **flags: str | None,
) -> None:
    """Replay a game record (FILE, or - for standard input): final diagram and result.

    Tag lines such as [Variant "VARIANT"] or [Option "KEY=VALUE"] set the
    variant and options; --variant, --option and the options' own flags (--size 13)
    override them. Exits 1 naming the
    move number, the side and the reason at the first illegal move.
    """
    data = file.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        click.echo(
            f"error: {file.name} is not UTF-8 text (byte {exc.start + 1} is not UTF-8): "
            "a game record is UTF-8; convert it first (iconv -t UTF-8)",
            err=True,
        )
        sys.exit(1)
    given = _given(options, flags)
    try:
        record = parse_record(text, game, given)
        result = replay(record, game, variant, given)
    except (RecordError, BadOption) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(result.state.diagram(), nl=False)
    how = f" ({result.termination})" if result.termination else ""
    if result.result:
        click.echo(f"Result: {result.result}{how} after {len(record.moves)} turns")
    else:
        click.echo(f"Result: * (game goes on) after {len(record.moves)} turns")
