"""New boards: a challenge between two players (or the admin's ``pbm game create``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pbm.games import BadOption
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import board_mails
from pbm.usecases.changes import BoardChange
from pbm.usecases.refusals import BadRequest, NotAPlayer
from pbm.usecases.unit import Decision
from pbm.usecases.world import Board, World, rules_of


@dataclass(frozen=True)
class Challenge:
    """A new board of ``game``, ``white`` moving first; both players get the board mail.

    Unless ``admin``, ``sender`` must be the address of one of the two.
    ``options`` are the game's own (``Game.options``); the days default to
    the site's ``clock`` settings.
    """

    game: str
    white: str
    black: str
    sender: str | None = None
    admin: bool = False
    variant: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    nag_days: int | None = None
    forfeit_days: int | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        rules = rules_of(self.game)
        try:
            chosen = rules.check_options(self.variant or rules.variants[0], dict(self.options))
        except BadOption as exc:
            raise BadRequest(str(exc)) from None
        clock = world.config.clock
        nag = clock.nag_days if self.nag_days is None else self.nag_days
        forfeit = clock.forfeit_days if self.forfeit_days is None else self.forfeit_days
        if nag < 1 or forfeit < 1:
            raise BadRequest("Reminder and forfeit times are whole numbers of days, at least 1.")
        if self.white.lower() == self.black.lower():
            raise BadRequest("A board needs two different players.")
        white, black = world.account(self.white), world.account(self.black)
        if not self.admin:
            addresses = {white.email.lower(), black.email.lower()}
            if self.sender is None or self.sender.lower() not in addresses:
                raise NotAPlayer(
                    f"Only {white.display} or {black.display} can start a board for them; "
                    "send the challenge from your registered address."
                )
        state = rules.new(self.variant or rules.variants[0], chosen)
        now = world.now
        board = Board(
            number=world.next_board_number(),
            game=rules.name,
            variant=state.variant,
            options=dict(state.options),
            white=white.userid,
            black=black.userid,
            status="active",
            result=None,
            termination=None,
            position=state.dump(),
            ply=state.ply,
            version=0,
            nag_days=nag,
            forfeit_days=forfeit,
            created_at=now,
            last_move_at=None,
            last_nag_at=None,
            archived_at=None,
            ended_at=None,
            undo_request_by=None,
            cancel_request_by=None,
            clock_since=now,
            white_rating_before=None,
            white_rating_after=None,
            black_rating_before=None,
            black_rating_after=None,
            draw_offer_by=None,
            people={white.userid: white, black.userid: black},
            vacations=(*world.vacations(white.userid), *world.vacations(black.userid)),
            pauses=world.pauses(),
        )
        replies = board_mails(board, now, f"New board {board.number} started.")
        return Decision(replies, (BoardChange(None, board),))
