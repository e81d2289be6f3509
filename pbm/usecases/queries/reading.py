"""Answers that change nothing: the board, its history, the legal moves, lists, help."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbm import ratings as elo
from pbm.games import legal_moves_text, move_number
from pbm.model import Board, BoardStatus, rules_of
from pbm.refusals import BadRequest
from pbm.replies import Attachment, MailKind, Reply
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import plays
from pbm.usecases.boardtext import board_subject, render_board_mail
from pbm.usecases.boardview import board_view
from pbm.usecases.queries import rating_lines, summaries
from pbm.usecases.readers import reader_on
from pbm.usecases.records.formats import formats_of, media_type, record_in
from pbm.usecases.text import wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World
from pbm.verbs import MOVE, listed, reader_of, sendable


def _answer(board: Board, to: str, subject: str, body: str) -> Reply:
    """An answer about a board: the board's mail to its players, else an answer."""
    kind = MailKind.BOARD if plays(board, to) else MailKind.ANSWER
    return Reply(to, subject, body, board=board.number, kind=kind)


@dataclass(frozen=True)
class Show:
    """The current board mail, to ``to``."""

    board: int
    to: str

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        reader = reader_on(board, self.to)
        name = board.name(reader[0]) if reader is not None and reader[1] is None else None
        subject, body = render_board_mail(board_view(board, world.now), name)
        return Decision((_answer(board, self.to, subject, body),))


@dataclass(frozen=True)
class NoCommand:
    """A reply to a board mail with no command or move in it: refused, saying what was
    found, what a reply may hold, and a move that is legal now for its player to move."""

    board: int
    userid: str
    first_line: str = ""
    meant: str = ""  # the verb it was nearest to, misspelled ("resgin": resign)

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        meant = f"; did you mean {self.meant}?" if self.meant else ""
        found = f" (it began: {self.first_line[:60]!r}{meant})" if self.first_line else ""
        may = sendable(reader_of(board, self.userid), draws=board.rules.draw_offers)
        example = board.state.example_move() if MOVE in may else None
        what = listed(v for v in may if v is not MOVE)
        if example is not None:
            what = f"your move on a line of its own, such as {example} (legal now), or {what}"
        unread = BadRequest(
            f"Your reply about board {board.number} had no command or move{found}; a reply "
            f"may hold {what}."
        )
        unread.mistake = False  # the server could not tell what he meant: no error of his
        raise unread


@dataclass(frozen=True)
class History:
    """Every move with its player, time and comment."""

    board: int
    to: str

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        view = board_view(board, world.now)
        lines = [f"{view.title} Board {view.board}: {view.white} vs {view.black}", ""]
        if not view.moves:
            lines.append("No moves yet.")
        per_turn = board.move_number(2) == 2
        for m in view.moves:
            notation = m.notation + (" (queued)" if m.queued else "")
            # Numbered as the board mail and #N number it: every turn, or pairs (chess:
            # "1." for White, "1..." for Black).
            mark = "." if per_turn or m.ply % 2 else "..."
            number = f"{board.move_number(m.ply)}{mark}".rjust(7)
            line = f"{number} {m.userid:<20} {notation:<24} {m.at:%Y-%m-%d %H:%M}"
            if len(line) > 78:  # a long turn: the time goes on its own line
                line = f"{number} {m.userid:<20} {notation}\n        {m.at:%Y-%m-%d %H:%M}"
            lines.append(line)
            if m.comment.strip():
                lines.extend(wrap(m.comment.strip(), indent="        > "))
        if board.result is not None:
            how = f" ({board.termination})" if board.termination else ""
            lines += ["", f"Result: {board.result}{how}"]
        body = "\n".join(line.rstrip() for line in lines) + "\n"
        subject = board_subject(view, "history")
        return Decision((_answer(board, self.to, subject, body),))


@dataclass(frozen=True)
class LegalMoves:
    """Every legal move for the player to move."""

    board: int
    to: str

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        view = board_view(board, world.now)
        legal = view.state.legal_moves() if board.status == BoardStatus.ACTIVE else []
        if legal:
            number = board.move_number(board.ply + 1)
            said = legal_moves_text(view.state)
            if said is not None:  # the game's own words: Hex's empty cells by row
                head = f"Legal moves for {view.to_move_name} (move {number}):"
                lines = [head, "", *said.rstrip("\n").splitlines()]
            else:
                head = f"{len(legal)} legal moves for {view.to_move_name} (move {number}):"
                lines = [head, "", *wrap("  ".join(legal))]
            if (reader := reader_on(board, self.to)) is not None and reader[1] is None:
                lines += ["", "To play one of them, reply to this mail with it."]
        else:
            lines = ["No legal moves: the game is over."]
        body = "\n".join(lines) + "\n"
        subject = board_subject(view, "legal moves")
        return Decision((_answer(board, self.to, subject, body),))


@dataclass(frozen=True)
class Records:
    """The board's record in every format its game has, attached to a mail to ``to``."""

    board: int
    to: str

    def decide(self, world: World, actor: Actor | None) -> Decision:
        board = world.board(self.board)
        files = []
        for fmt in formats_of(board):
            text, suffix = record_in(board, fmt, world.config.mail.address)
            name = f"{board.game}-board-{board.number}.{suffix}"
            files.append(Attachment(name, media_type(board.game, suffix), text))
        view = board_view(board, world.now)
        state = f"result {board.result}" if board.result else f"{len(view.moves)} turns so far"
        body = "\n".join(
            wrap(
                f"The record of board {board.number} ({state}) is attached as "
                f"{', '.join(f.filename for f in files)}. The text record replays with: pbm "
                "rules replay FILE."
            )
        )
        reply = _answer(board, self.to, board_subject(view, "record"), body + "\n")
        return Decision((replace(reply, attachments=tuple(files)),))


@dataclass(frozen=True)
class ActiveBoards:
    """Active boards: of ``userid`` (``games UID``), of ``game`` (``G games [UID]``)."""

    to: str
    userid: str | None = None
    game: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        if self.game is not None:
            rules_of(self.game)
        who = f" of {world.account(self.userid).display}" if self.userid else ""
        boards = summaries(world.session, "open", self.userid, self.game)
        lines = [
            f"Board {b.board:>5}  {b.game} {b.variant:<8}  {b.white} - {b.black}  "
            + (
                f"move {move_number(rules_of(b.game), b.ply + 1)}, {b.to_move} to move"
                if b.status == BoardStatus.ACTIVE
                else f"waiting for {b.to_move} to accept"
            )
            for b in boards
        ] or ["No active boards."]
        body = "\n".join(line[:78] for line in lines) + "\n"
        return Decision((Reply(to=self.to, subject=f"pbm - active boards{who}", body=body),))


@dataclass(frozen=True)
class Ratings:
    """The rating list of ``game`` (every variant, or one)."""

    to: str
    game: str
    variant: str | None = None
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        rules = rules_of(self.game)
        rows = rating_lines(world.session, rules.name, self.variant)
        lines = [
            f"{rules.title} ratings (Elo; ? = provisional, fewer than "
            f"{elo.PROVISIONAL_GAMES} rated games; Glicko-2 with its deviation, RD, "
            "rated at the end of each day, UTC)"
        ]
        if not rows:
            lines += ["", "No rated games yet."]
        for v in dict.fromkeys(r.variant for r in rows):
            lines += ["", f"Variant {v}:"]
            for r in rows:
                if r.variant == v:
                    mark = " ?" if r.provisional else ""
                    word = "game" if r.games == 1 else "games"
                    row = f"{r.rank:>4}. {r.player:<20} {r.rating:>5}  {r.games:>4} {word}"
                    glicko = (
                        f"  Glicko-2 {r.glicko} (RD {r.deviation})" if r.glicko is not None else ""
                    )
                    lines.append(f"  {row}{mark}{glicko}")
        body = "\n".join(lines) + "\n"
        return Decision((Reply(to=self.to, subject=f"{rules.title} - ratings", body=body),))


@dataclass(frozen=True)
class Answer:
    """A fixed answer (the help texts): ``subject`` and ``body`` to ``to``."""

    to: str
    subject: str
    body: str
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        return Decision((Reply(to=self.to, subject=self.subject, body=self.body),))
