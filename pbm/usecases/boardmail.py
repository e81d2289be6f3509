"""The text of board mails: a pure function of a board, no database.

``board_view`` says what a board mail shows (names, clock dates, notes);
``render_board_mails`` writes the mails; ``board_mails`` makes the replies
for everyone on a board, each player's copy answerable by reply.

Layout: subject ``<Game> Board 12 - bob to move``;
body with the players and variant, the last move and its comment, whose
turn, the move list in numbered columns, the diagram, how to reply, and
the timing (the next reminder and the forfeit date as the service computed
them, with vacations and site pauses taken into account) and, on a rated
final board, each player's rating change. Every line fits in 78 characters
(the diagram is the game's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from pbm.games import GameState, winner_of
from pbm.replies import Reply
from pbm.timecontrol import Kind, duration_words
from pbm.usecases.clocks import ClockState, clock_of, clock_state, control_meaning
from pbm.usecases.text import WIDTH, fmt_time, wrap
from pbm.usecases.world import Board, rules_of


@dataclass(frozen=True, slots=True)
class MoveLine:
    """One played turn as the board mail shows it; ``ply`` is its move number."""

    ply: int
    userid: str
    notation: str
    comment: str
    at: datetime
    queued: bool = False  # played from the player's queue


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One player's rating before and after a rated game."""

    name: str
    before: int
    after: int


@dataclass(frozen=True)
class BoardView:
    """Everything a board mail shows. Player names are display forms."""

    board: int
    game: str  # the game's command word
    title: str  # the game's title, for people
    seat_names: tuple[str, str]
    variant: str
    options: Mapping[str, str]
    white: str
    black: str
    status: str  # waiting | active | finished | cancelled
    result: str | None
    termination: str | None
    state: GameState
    moves: Sequence[MoveLine]
    created_at: datetime
    last_move_at: datetime | None
    nag_days: int
    forfeit_days: int
    undo_request_by: str | None = None
    cancel_request_by: str | None = None
    draw_offer_by: str | None = None
    subscribers: Sequence[str] = field(default_factory=tuple)
    next_nag_at: datetime | None = None  # the next reminder (None: no more before forfeit)
    forfeit_at: datetime | None = None
    clock_notes: Sequence[str] = field(default_factory=tuple)  # vacations, site pause
    clock_lines: Sequence[str] = field(default_factory=tuple)  # a time bank's (not classic)
    rating_changes: Sequence[RatingChange] = field(default_factory=tuple)
    waiting_for: str | None = None  # a challenge: the player who has yet to accept
    # The number players give a ply (chess counts pairs); ``Game.move_number``.
    move_number: Callable[[int], int] = int
    position: str = ""  # ``state`` as the board stores it (``GameState.dump``), if known

    @property
    def players(self) -> tuple[str, str]:
        return (self.white, self.black)

    @property
    def to_move_name(self) -> str:
        return self.players[self.state.to_move]

    @property
    def winner(self) -> int | None:
        """The winning seat of a finished game (None: a draw, or not finished)."""
        return winner_of(self.result) if self.result else None

    @property
    def drawn(self) -> bool:
        return self.status == "finished" and self.result is not None and self.winner is None


def subject_status(view: BoardView) -> str:
    """``bob to move``; a result as the move list writes it: ``White wins``, ``Draw``,
    ``Cancelled``."""
    if view.status == "cancelled":
        return "Cancelled"
    if view.status == "waiting":
        return f"waiting for {view.waiting_for} to accept"
    winner = view.winner
    if view.drawn:
        return "Draw"
    if view.status == "finished" and winner is not None:
        return f"{view.seat_names[winner]} wins"
    if view.status == "finished":
        return "Game over"
    return f"{view.to_move_name} to move"


def board_subject(view: BoardView, status: str | None = None) -> str:
    return f"{view.title} Board {view.board} - {status or subject_status(view)}"


def variant_line(view: BoardView) -> str:
    opts = ", ".join(f"{k}={v}" for k, v in sorted(view.options.items()))
    return f"Variant: {view.variant}" + (f" ({opts})" if opts else "")


def move_list(
    moves: Sequence[MoveLine], width: int = WIDTH, number: Callable[[int], int] = int
) -> list[str]:
    """Turns in rows, White's and Black's side by side, numbered as the game numbers them
    (``number``: ``Game.move_number``), so the list, the header and ``#N`` agree.

    A game that numbers every turn (Accasta): ``1. a1:C+b2,HS-c1   2. g2:C+f2,H+f3``;
    one that numbers pairs (chess): ``1. e4   e5``.
    """
    per_turn = number(2) == 2
    rows: list[tuple[str, str, int]] = []  # White's turn, Black's, the row's number
    for m in moves:
        text = f"{number(m.ply)}. {m.notation}" if per_turn else m.notation
        if m.ply % 2 == 1:
            rows.append((text, "", number(m.ply)))
        elif rows and not rows[-1][1]:
            rows[-1] = (rows[-1][0], text, rows[-1][2])
        else:  # a Black turn with no White turn before it in the list
            rows.append(("...", text, number(m.ply)))
    if not rows:
        return ["  (no moves yet)"]
    number_width = 0 if per_turn else len(str(rows[-1][2])) + 1
    left = max(len(w) for w, _, _ in rows)
    out: list[str] = []
    for w, b, n in rows:
        num = "" if per_turn else f"{n}.".rjust(number_width) + " "
        line = f"  {num}{w.ljust(left)}   {b}".rstrip()
        if len(line) > width:
            out.append(f"  {num}{w}")
            out.append(f"  {' ' * len(num)}{' ' * 3}{b}")
        else:
            out.append(line)
    return out


def _seat_label(view: BoardView, seat: int) -> str:
    return f"{view.players[seat]} ({view.seat_names[seat]})"


def _last_move(view: BoardView) -> list[str]:
    if not view.moves:
        return ["No moves yet."]
    m = view.moves[-1]
    seat = (m.ply - 1) % 2
    queued = " (queued)" if m.queued else ""
    number = view.move_number(m.ply)
    lines = [f"Move {number}, {_seat_label(view, seat)}: {m.notation}{queued}"]
    if m.comment.strip():
        lines.append(f"{view.players[seat]} writes:")
        lines.extend(wrap(m.comment.strip(), indent="  > "))
    return lines


def _state_lines(view: BoardView) -> list[str]:
    if view.status == "cancelled":
        return ["This board was cancelled."]
    if view.status == "waiting":
        return wrap(f"The challenge waits for {view.waiting_for} to accept it.")
    winner = view.winner
    how = f" ({view.termination})" if view.termination else ""
    if view.drawn:
        return [f"Draw{how}. Result {view.result}.", *_rating_lines(view)]
    if view.status == "finished" and winner is not None:
        lines = [f"{_seat_label(view, winner)} wins{how}. Result {view.result}."]
        return lines + _rating_lines(view)
    if view.status == "finished":
        return ["The game is over."]
    number = view.move_number(view.state.ply + 1)
    lines = [f"{_seat_label(view, view.state.to_move)} to move: move {number}."]
    if view.undo_request_by:
        lines.append(f"{view.undo_request_by} asks to take back the last move.")
    if view.cancel_request_by:
        lines.append(f"{view.cancel_request_by} asks to cancel this board.")
    if view.draw_offer_by:
        lines.append(f"{view.draw_offer_by} offers a draw.")
    return lines


def ending(view: BoardView) -> str:
    """How a board ended, for its diagram: ``Black wins (resign)``, ``Draw (agreement)``."""
    how = f" ({view.termination})" if view.termination else ""
    if view.status == "cancelled":
        return "Cancelled"
    winner = view.winner
    if view.drawn:
        return f"Draw{how}"
    if winner is not None:
        return f"{view.seat_names[winner]} wins{how}"
    return "Game over"


def _rating_lines(view: BoardView) -> list[str]:
    if not view.rating_changes:
        return []
    parts = [
        f"{r.name} {r.before} -> {r.after} ({r.after - r.before:+d})" for r in view.rating_changes
    ]
    return wrap(f"Ratings ({view.game} {view.variant}): " + ", ".join(parts) + ".")


def _how_to_reply(view: BoardView, recipient: str | None) -> list[str]:
    g, b = view.game, view.board
    if view.status == "waiting":
        if recipient and recipient.lower() == (view.waiting_for or "").lower():
            return wrap("To play, reply to this mail with accept; to refuse, reply with decline.")
        return wrap(
            f"Waiting for {view.waiting_for} to accept; to take the challenge back, "
            "reply with cancel."
        )
    if view.status != "active":
        return wrap(f"History: {g} history {b}. Show the board: {g} show {b}.")
    me = None
    if recipient is not None:
        for name in view.players:
            if name.lower() == recipient.lower():
                me = name
    lines = ["How to reply:"]
    if me is not None and me == view.to_move_name:
        example = view.state.example_move() or "MOVE"
        nxt = view.move_number(view.state.ply + 1)
        lines += [
            "  Reply to this mail with just your move on the first line, e.g.",
            f"    {example}",
            "  or mail this command to the server (your password for PASSWORD):",
            f"    {g} move {b} {me} PASSWORD {example}#{nxt}",
            f"  '#{nxt}' makes sure the move is only played as move {nxt}.",
            f"  Every legal move: {g} moves {b}",
        ]
    elif me is not None:
        lines += [f"  Waiting for {view.to_move_name} to move."]
        lines += wrap(
            "To have your answer played the moment they move, reply with "
            "queue MOVE (or queue MOVE if THEIR-MOVE; several lines are tried in order).",
            indent="  ",
        )
    else:
        lines += wrap(
            f"{view.to_move_name} is to move. If you follow this board, reply to this mail "
            "with unsubscribe to stop, or chat followed by a message.",
            indent="  ",
        )
    if me is not None:
        lines += wrap(
            "By reply you can also send resign, undo, accept, reject, show, history, "
            "moves, cancel, queue, or chat followed by a message.",
            indent="  ",
        )
    return lines


def _timing(view: BoardView) -> list[str]:
    lines = [f"Started:   {fmt_time(view.created_at)}", f"Last move: {fmt_time(view.last_move_at)}"]
    if view.status == "active":
        for note in view.clock_notes:
            lines += wrap(note)
        if view.clock_lines:
            for line in view.clock_lines:
                lines += wrap(line, indent="")
            return lines
        if view.next_nag_at is not None:
            lines.append(
                f"Reminder:  {fmt_time(view.next_nag_at)} (one every {view.nag_days} days "
                "without a move)"
            )
        if view.forfeit_at is not None:
            lines.append(
                f"Forfeit:   {fmt_time(view.forfeit_at)} ({view.forfeit_days} days without a move)"
            )
    return lines


def render_board_mail(
    view: BoardView, recipient: str | None = None, headline: str = "", seat: int | None = None
) -> tuple[str, str]:
    """The subject and body of a board mail for ``recipient`` (a userid, or None).

    ``headline`` (e.g. ``alice resigned.``) opens the body. The player to
    move is told the exact command that would play, with board and userid
    filled in. The diagram is drawn as ``recipient``'s seat sees it, or
    ``seat``'s when it is given (a board shown to a player by address).
    """
    seats = [seat if seat is not None else _reader_seat(view, recipient)]
    return render_board_mails(view, [recipient], headline, seats)[0]


def _reader_seat(view: BoardView, reader: str | None) -> int | None:
    """The seat of the player called ``reader`` (None for anyone else): his side of the board."""
    for seat, name in enumerate(view.players):
        if reader is not None and name.lower() == reader.lower():
            return seat
    return None


def render_board_text(view: BoardView) -> tuple[str, str]:
    """The subject and text of a board for the admin (``pbm game show``): no how-to-reply."""
    return _render(view, [None], "", replies=False)[0]


def render_board_mails(
    view: BoardView,
    recipients: Sequence[str | None],
    headline: str = "",
    seats: Sequence[int | None] | None = None,
) -> list[tuple[str, str]]:
    """``render_board_mail`` for each of ``recipients``; what they share is made once.

    Each sees the diagram from his seat (``seats``, by default the recipients'),
    drawn once a seat.
    """
    return _render(view, recipients, headline, seats, replies=True)


def _render(
    view: BoardView,
    recipients: Sequence[str | None],
    headline: str,
    seats: Sequence[int | None] | None = None,
    *,
    replies: bool,
) -> list[tuple[str, str]]:
    body: list[str] = []
    if headline:
        body += [*wrap(headline), ""]
    body.append(
        f"{view.title} Board {view.board}: {_seat_label(view, 0)} vs {_seat_label(view, 1)}"
    )
    body.extend(wrap(variant_line(view)))
    body.append("")
    body += _last_move(view)
    body += _state_lines(view)
    body += ["", "Moves:", *move_list(view.moves, number=view.move_number), ""]
    ended = None if view.status in ("active", "waiting") else ending(view)
    head = "\n".join(line.rstrip() for line in body)
    timing = [line.rstrip() for line in _timing(view)]
    subject = board_subject(view)
    if seats is None:
        seats = [_reader_seat(view, recipient) for recipient in recipients]
    out = []
    for recipient, seat in zip(recipients, seats, strict=True):
        drawn = diagram(view.game, view.position, seat, ended, view.state)
        how = ["", *(line.rstrip() for line in _how_to_reply(view, recipient))] if replies else []
        tail = [*how, "", *timing]
        out.append((subject, f"{head}\n{drawn}\n" + "\n".join(tail) + "\n"))
    return out


# The diagrams drawn last, by game, position, seat and ending: the copies of one board
# mail share theirs, and its HTML part finds the one it stands in for (``pictures``).
_DIAGRAMS: dict[tuple[str, str, int | None, str | None], str] = {}
DIAGRAMS_KEPT = 256  # a few batches of board mails


def diagram(
    game: str,
    position: str,
    seat: int | None,
    ended: str | None,
    state: GameState | None = None,
) -> str:
    """The ASCII diagram of ``position`` (``GameState.dump``) as board mails show it, from
    ``seat``: drawn once (``state``, if given, is that position loaded: a chess state
    replays its moves to load). Without a position it is drawn from ``state`` alone."""
    key = (game, position, seat, ended)
    found = _DIAGRAMS.get(key) if position else None
    if found is None:
        if state is None:
            state = rules_of(game).load(position)
        lines = state.diagram(seat, ended).rstrip("\n").splitlines()
        found = "\n".join(line.rstrip() for line in lines)
        if position:
            if len(_DIAGRAMS) >= DIAGRAMS_KEPT:
                _DIAGRAMS.clear()
            _DIAGRAMS[key] = found
    return found


def board_view(board: Board, now: datetime) -> BoardView:
    """What a board mail shows of ``board`` at ``now``: display names, dates, clock notes."""
    rules = board.rules
    next_nag_at = forfeit_at = None
    notes: list[str] = []
    clock_lines: list[str] = []
    if board.status == "active":
        clock = clock_state(board, now)
        next_nag_at, forfeit_at = clock.next_nag_at, clock.forfeit_at
        if clock.control.kind is not Kind.CLASSIC:
            clock_lines = _bank_lines(board, clock, now)
        for uid in board.players:
            away = [
                v for v in board.vacations if v.userid == uid and v.starts_at <= now < v.ends_at
            ]
            name = board.name(uid)
            if any(v.kind == "bounce" for v in away):
                notes.append(
                    f"Mail to {name} bounces since {fmt_time(away[-1].starts_at)}: {name}'s "
                    f"clock stands still until {name} writes to the server again."
                )
            elif away:
                notes.append(
                    f"{name} is on vacation until {fmt_time(away[-1].ends_at)}: "
                    f"{name}'s clock stands still until then."
                )
        if clock.paused_since is not None:
            notes.append(
                f"All clocks are stopped since {fmt_time(clock.paused_since)} (the site is "
                "paused); the dates below assume they run again now."
            )
    changes = [
        RatingChange(board.name(uid), before, after)
        for uid, before, after in (
            (board.white, board.white_rating_before, board.white_rating_after),
            (board.black, board.black_rating_before, board.black_rating_after),
        )
        if before is not None and after is not None
    ]
    return BoardView(
        board=board.number,
        game=rules.name,
        title=rules.title,
        seat_names=rules.seat_names,
        variant=board.variant,
        options=dict(board.options),
        white=board.name(board.white),
        black=board.name(board.black),
        status=board.status,
        result=board.result,
        termination=board.termination,
        state=board.state,
        moves=[
            MoveLine(m.ply, board.name(m.userid), m.notation, m.comment, m.created_at, m.queued)
            for m in board.moves
        ],
        created_at=board.created_at,
        last_move_at=board.last_move_at,
        nag_days=board.nag_days,
        forfeit_days=board.forfeit_days,
        undo_request_by=board.name(board.undo_request_by) if board.undo_request_by else None,
        cancel_request_by=board.name(board.cancel_request_by) if board.cancel_request_by else None,
        draw_offer_by=board.name(board.draw_offer_by) if board.draw_offer_by else None,
        subscribers=[f.userid or f.email or "" for f in board.followers],
        next_nag_at=next_nag_at,
        forfeit_at=forfeit_at,
        clock_notes=notes,
        clock_lines=clock_lines,
        rating_changes=changes,
        waiting_for=board.name(board.challenged) if board.challenged else None,
        move_number=board.move_number,
        position=board.position,
    )


def audience(board: Board) -> list[tuple[str | None, str]]:
    """(userid or None, address) of both players, then the followers."""
    out: list[tuple[str | None, str]] = [
        (uid, board.people[uid].email) for uid in board.players if uid in board.people
    ]
    for f in board.followers:
        if f.userid:
            if f.userid in board.people:
                out.append((f.userid, board.people[f.userid].email))
        elif f.email:
            out.append((None, f.email))
    return out


def board_mails(
    board: Board,
    now: datetime,
    headline: str = "",
    told: Mapping[str, Sequence[str]] | None = None,
) -> list[Reply]:
    """The board mail for every player and follower.

    ``told``: lines for one reader alone (by userid), above the rest (what
    became of his queued moves, say). Each player's copy carries his own
    reply address (``reply_as``), so the player to move can answer with just
    the move and the other with chat, undo, resign and the like.
    """
    view = board_view(board, now)
    readers = audience(board)
    seats = [board.seat_of(uid) if uid is not None else None for uid, _ in readers]
    names = [view.players[seat] if seat is not None else None for seat in seats]
    mails = render_board_mails(view, names, headline)
    told = told or {}
    return [
        Reply(
            to=address,
            subject=subject,
            body="\n".join([*told[uid], "", body]) if uid is not None and uid in told else body,
            board=board.number,
            reply_as=uid if seat is not None else None,
            counted=False,
        )
        for (uid, address), seat, (subject, body) in zip(readers, seats, mails, strict=True)
    ]


def follows(board: Board, address: str) -> bool:
    """Whether ``address`` plays or follows ``board`` (its mail about it is not counted)."""
    return any(a.lower() == address.lower() for _, a in audience(board))


def _bank_lines(board: Board, clock: ClockState, now: datetime) -> list[str]:
    """A time bank in a board mail: the control, each player's time left, what the next
    move gives, the next reminder and when the time runs out (UTC and the board's zone)."""
    control = clock.control
    bank = clock_of(board)
    lines = [f"Time:      {control.spec} ({control_meaning(control)})"]
    for seat, uid in enumerate(board.players):
        left = bank.time_left(seat, clock.seat, now, clock.stops)
        line = f"{board.rules.seat_names[seat]} {board.name(uid)}: {duration_words(left)} left"
        if seat == clock.seat:
            line += f" (to move); {control.growth_words()}"
        lines.append(line)
    if clock.next_nag_at is not None:
        lines.append(f"Reminder:  {fmt_time(clock.next_nag_at)}")
    out = f"Time out:  {fmt_time(clock.forfeit_at)}"
    if control.timezone != "UTC":
        local = clock.forfeit_at.astimezone(ZoneInfo(control.timezone))
        out += f" ({local:%Y-%m-%d %H:%M} {control.timezone})"
    lines.append(out)
    return lines
