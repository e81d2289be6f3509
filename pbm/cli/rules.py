"""``pbm rules``: the game rules from the command line (no database, no mail)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

import click

from pbm import games
from pbm.games import BadOption, GameState, IllegalMove
from pbm.games.accasta import AccastaState
from pbm.games.accasta.position import perft as accasta_perft
from pbm.record import RecordError, parse_record, replay


def parse_options(values: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` words (``--option``) as a dict; a usage error names a bad one."""
    opts: dict[str, str] = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key or not val:
            raise click.BadParameter(f"{v!r}: write KEY=VALUE, e.g. castle_win=next_turn")
        opts[key.strip()] = val.strip()
    return opts


def _start(game: str, variant: str | None, options: Sequence[str]) -> GameState:
    try:
        return games.get(game).new(variant, parse_options(options))
    except KeyError:
        raise click.BadParameter(
            f"unknown game {game!r}; games: {', '.join(games.names())}", param_hint="--game"
        ) from None
    except BadOption as exc:
        raise click.UsageError(str(exc)) from None


def _play_all(state: GameState, moves: Sequence[str], seats: tuple[str, str]) -> GameState:
    for i, text in enumerate(moves):
        side = seats[state.to_move]
        try:
            state, _ = state.play(text)
        except IllegalMove as exc:
            click.echo(f"move {i // 2 + 1} {side} ({text}): {exc}", err=True)
            sys.exit(1)
    return state


def _common(f: click.decorators.FC) -> click.decorators.FC:
    f = click.option(
        "--option",
        "options",
        multiple=True,
        metavar="KEY=VALUE",
        help="A game option: castle_win=immediate|next_turn, d4_opening=allowed|banned.",
    )(f)
    f = click.option(
        "--variant",
        type=click.Choice(["standard", "pari"], case_sensitive=False),
        default=None,
        help="The variant (default: standard).",
    )(f)
    f = click.option("--game", default="accasta", show_default=True, help="The game.")(f)
    return f


@click.group()
def rules() -> None:
    """Legal moves, perft, diagrams and replays of game records."""


@rules.command()
@_common
@click.option("--count", is_flag=True, help="Print only the number of legal moves.")
@click.argument("moves", nargs=-1)
def moves(
    game: str, variant: str | None, options: tuple[str, ...], count: bool, moves: tuple[str, ...]
) -> None:
    """Replay MOVES from the start and list every legal move, one a line, sorted."""
    g = games.get(game) if game in games.names() else None
    state = _play_all(_start(game, variant, options), moves, g.seat_names if g else ("?", "?"))
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
    game: str, variant: str | None, options: tuple[str, ...], depth: int, moves: tuple[str, ...]
) -> None:
    """Count the turn sequences of length DEPTH after MOVES (a finished game has none)."""
    state = _play_all(_start(game, variant, options), moves, games.get(game).seat_names)
    if not isinstance(state, AccastaState):
        raise click.UsageError(f"perft is not available for {game}")
    click.echo(accasta_perft(state.position, depth))


@rules.command()
@_common
@click.argument("moves", nargs=-1)
def show(game: str, variant: str | None, options: tuple[str, ...], moves: tuple[str, ...]) -> None:
    """Print the board diagram after MOVES."""
    state = _play_all(_start(game, variant, options), moves, games.get(game).seat_names)
    click.echo(state.diagram(), nl=False)


@rules.command("replay")
@_common
@click.argument("file", type=click.File("r", encoding="utf-8"))
def replay_cmd(game: str, variant: str | None, options: tuple[str, ...], file: TextIO) -> None:
    """Replay a game record (FILE, or - for standard input): final diagram and result.

    Tag lines such as [Variant "pari"] or [Option "castle_win=next_turn"] set the
    variant and options; --variant and --option override them. Exits 1 naming the
    move number, the side and the reason at the first illegal move.
    """
    text = file.read()
    try:
        record = parse_record(text)
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
