"""The computer player: an account anyone can challenge, and what it has to do.

It is an ordinary account (``computer.userid``, ``computer`` by default)
whose mail goes nowhere: it reads none and is sent none. It never starts a
game. Its runner (``pbm.runners.computer``) finds, with ``work``, the
challenges to it (it accepts them), the undo requests of its opponents (it
grants them) and the boards where it is to move, and acts through the same
use cases as a player's mail (``Accept``, ``Move``): a unit of work decided
and written like any other. A game has a computer player when its state can
choose a move (``GameState.computer_move``, the optional method of the game
protocol), with the external program it needs, if any (``Game.computer_program``),
installed.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping
from dataclasses import dataclass

from pbm.config import Config
from pbm.games import Game, registry
from pbm.model import Account, Board, rules_of
from pbm.refusals import BadRequest
from pbm.replies import Reply
from pbm.store import Session
from pbm.store.lists import open_games_between, requests_to, turns_of
from pbm.usecases.auth import Actor, hash_password
from pbm.usecases.changes import AccountChange, Change
from pbm.usecases.text import wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

DEFAULT_LEVEL = 3


def levels(game: Game) -> Mapping[int, str]:
    """The computer's levels in ``game`` and what each means (none: no computer player)."""
    found: Mapping[int, str] = getattr(game, "computer_levels", {})
    return found


def program(game: Game) -> str | None:
    """The program the computer needs to play ``game`` (chess: ``stockfish``), if any."""
    name: str | None = getattr(game, "computer_program", None)
    return name


def find_program(name: str) -> str | None:
    """Where the program ``name`` is installed (Debian puts games in /usr/games)."""
    return shutil.which(name, path=os.pathsep.join((os.environ.get("PATH", ""), "/usr/games")))


def account_for(world: World, name: str) -> tuple[Account, tuple[Change, ...]]:
    """The account ``name`` names (``UnknownPlayer`` if none), and the change that makes
    it: the computer's account is made the first time it is challenged."""
    uid = world.config.computer.account
    if uid is None or name.lower() != uid:
        return world.account(name), ()
    found = world.find_account(uid)
    if found is not None:
        return found, ()
    made = Account(
        userid=uid,
        display=world.config.computer.userid.strip(),
        email=world.config.computer.address,
        full_name="The computer",
        # A secret nobody knows: nobody acts as the computer by mail.
        password_hash=hash_password(secrets.token_urlsafe(24)),
        created_at=world.now,
    )
    return made, (AccountChange(None, made),)


def plays(config: Config, board: Board) -> bool:
    """Whether the computer player is one of ``board``'s players."""
    uid = config.computer.account
    return uid is not None and uid in board.players


def check_challenge(
    world: World, game: Game, players: tuple[str, str], level: str | None
) -> int | None:
    """The computer's level on a new board of ``players`` (None: it does not play);
    refused when ``game`` has no computer player, the level is not one of them, or the
    person has as many games against it as the site allows."""
    uid = world.config.computer.account
    if uid is None or uid not in players:
        if level is not None:
            raise BadRequest("--level is for a game against the computer.")
        return None
    offered = levels(game)
    if not offered:
        raise BadRequest(f"{game.title} has no computer player here: challenge a person.")
    needed = program(game)
    if needed is not None and find_program(needed) is None:
        raise BadRequest(
            f"No engine for {game.title} is installed here ({needed}): the computer cannot "
            f"play {game.title}; challenge a person."
        )
    chosen = DEFAULT_LEVEL if level is None else int(level) if level.isdigit() else -1
    if chosen not in offered:
        raise BadRequest(
            f"The computer plays at level {min(offered)} to {max(offered)}, not {level}."
        )
    person = next(p for p in players if p != uid)
    limit = world.config.computer.games_per_player
    if open_games_between(world.session, uid, person) >= limit:
        raise BadRequest(
            f"{person} plays {limit} games against the computer already, the most this site "
            "allows at once: finish one first."
        )
    return chosen


@dataclass(frozen=True, slots=True)
class Work:
    """What the computer has to do on one board: ``accept`` a challenge or an undo, or
    ``move`` (as move ``ply + 1``)."""

    board: int
    kind: str  # accept | move
    game: str = ""
    position: str = ""
    level: int = DEFAULT_LEVEL
    ply: int = 0
    person: str = ""  # whom it plays there: its time is shared out by person


def work(session: Session, config: Config) -> list[Work]:
    """Everything the computer has to do now: the requests to answer (oldest board first),
    then the moves to make (the board that has waited longest first)."""
    uid = config.computer.account
    if uid is None:
        return []
    out = [Work(n, "accept") for n in requests_to(session, uid)]
    # The board that has waited longest first: the computer plays one move at a time.
    for row in turns_of(session, uid):
        out.append(
            Work(
                int(row.board),
                "move",
                row.game,
                row.position,
                int(row.computer_level or DEFAULT_LEVEL),
                int(row.ply),
                row.black if row.white == uid else row.white,
            )
        )
    return out


@dataclass(frozen=True)
class ComputerHelp:
    """The answer to ``help computer``: who the computer player is and its levels."""

    to: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        uid = world.config.computer.userid.strip()
        if not uid:
            text = "This site has no computer player: challenge a person."
            return Decision((Reply(to=self.to, subject="pbm - the computer player", body=text),))
        playing = games_with_levels()
        example = playing[0] if playing else "GAME"
        lines = wrap(
            f"The computer player is the account {uid}: challenge it like a person, "
            f"for example: {example} challenge YOURID {uid} --level=3 (or {uid} YOURID to "
            "let it move first). It accepts at once and answers each move by itself, "
            f"after at most {world.config.computer.seconds_per_move:.0f} seconds of thought, "
            "sooner at low levels; it thinks about one board at a time. It grants an undo, "
            "never offers or accepts a draw, and is rated like anyone. You may have "
            f"{world.config.computer.games_per_player} games against it at once."
        )
        for name in playing:
            game = rules_of(name)
            lines += ["", f"{game.title}, --level=N (default {DEFAULT_LEVEL}):"]
            for number, words in sorted(levels(game).items()):
                lines += wrap(f"{number}: {words}", indent="  ")
        body = "\n".join(lines) + "\n"
        return Decision((Reply(to=self.to, subject="pbm - the computer player", body=body),))


def games_with_levels() -> list[str]:
    """The games the computer plays."""
    return [name for name in registry() if levels(rules_of(name))]
