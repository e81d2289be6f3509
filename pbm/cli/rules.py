"""``pbm rules``: the game rules from the command line (no database, no mail)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import BinaryIO

import click

from pbm import games
from pbm.games import BadOption, GameState, IllegalMove
from pbm.record import RecordError, parse_record, replay


def parse_options(values: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` words (``--option``) as a dict; a usage error names a bad one."""
    opts: dict[str, str] = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key or not val:
            raise click.BadParameter(f"{v!r}: write KEY=VALUE, an option of the game")
        opts[key.strip()] = val.strip()
    return opts


def _start(game: str | None, variant: str | None, options: Sequence[str]) -> GameState:
    game = _game(game)
    try:
        return games.get(game).new(variant, parse_options(options))
    except KeyError:
        raise click.BadParameter(
            f"unknown game {game!r}; games: {', '.join(games.names())}", param_hint="--game"
        ) from None
    except BadOption as exc:
        raise click.UsageError(str(exc)) from None


def _seats(game: str | None) -> tuple[str, str]:
    try:
        return games.get(_game(game)).seat_names
    except KeyError:
        return ("?", "?")


def _play_all(state: GameState, moves: Sequence[str], seats: tuple[str, str]) -> GameState:
    for i, text in enumerate(moves):
        side = seats[state.to_move]
        try:
            state, _ = state.play(text)
        except IllegalMove as exc:
            click.echo(f"move {i // 2 + 1} {side} ({text}): {exc}", err=True)
            sys.exit(1)
    return state


def _option_help() -> str:
    declared = [
        f"{o.name}={'|'.join(o.values)} ({name})"
        for name in games.names()
        for o in games.get(name).options
    ]
    return "A game option: " + (", ".join(declared) or "none here") + "."


def _common(f: click.decorators.FC) -> click.decorators.FC:
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


def count_turns(state: GameState, depth: int) -> int:
    """The number of move sequences of length ``depth`` (perft), through the game protocol."""
    if depth <= 0:
        return 1
    if state.outcome is not None:
        return 0
    legal = state.legal_moves()
    if depth == 1:
        return len(legal)
    return sum(count_turns(state.play(m)[0], depth - 1) for m in legal)


@click.group()
def rules() -> None:
    """Legal moves, perft, diagrams and replays of game records."""


@rules.command()
@_common
@click.option("--count", is_flag=True, help="Print only the number of legal moves.")
@click.argument("moves", nargs=-1)
def moves(
    game: str | None,
    variant: str | None,
    options: tuple[str, ...],
    count: bool,
    moves: tuple[str, ...],
) -> None:
    """Replay MOVES from the start and list every legal move, one a line, sorted."""
    state = _play_all(_start(game, variant, options), moves, _seats(game))
    legal = state.legal_moves()
    if count:
        click.echo(len(legal))
    else:
        for m in legal:
            click.echo(m)


@rules.command()
@_common
@click.option("--depth", type=click.IntRange(min=0), required=True, help="Turns to look ahead.")
@click.argument("moves", nargs=-1)
def perft(
    game: str | None,
    variant: str | None,
    options: tuple[str, ...],
    depth: int,
    moves: tuple[str, ...],
) -> None:
    """Count the turn sequences of length DEPTH after MOVES (a finished game has none)."""
    state = _play_all(_start(game, variant, options), moves, _seats(game))
    click.echo(count_turns(state, depth))


@rules.command()
@_common
@click.argument("moves", nargs=-1)
def show(
    game: str | None, variant: str | None, options: tuple[str, ...], moves: tuple[str, ...]
) -> None:
    """Print the board diagram after MOVES."""
    state = _play_all(_start(game, variant, options), moves, _seats(game))
    click.echo(state.diagram(), nl=False)


@rules.command("replay")
@_common
@click.argument("file", type=click.File("rb"))
def replay_cmd(
    game: str | None, variant: str | None, options: tuple[str, ...], file: BinaryIO
) -> None:
    """Replay a game record (FILE, or - for standard input): final diagram and result.

    Tag lines such as [Variant "VARIANT"] or [Option "KEY=VALUE"] set the
    variant and options; --variant and --option override them. Exits 1 naming the
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
    try:
        record = parse_record(text, game)
        result = replay(record, game, variant, parse_options(options))
    except (RecordError, BadOption) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(result.state.diagram(), nl=False)
    how = f" ({result.termination})" if result.termination else ""
    if result.result:
        click.echo(f"Result: {result.result}{how} after {len(record.moves)} turns")
    else:
        click.echo(f"Result: * (game goes on) after {len(record.moves)} turns")
