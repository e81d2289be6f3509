"""The text of board mails: a pure function of a board's view (``boardview``).

``render_board_mails`` writes the mails, one a reader, what they share made once.

Layout: subject ``<Game> Board 12 - bob to move``;
body with the players and variant, the last move and its comment, whose
turn, the move list in numbered columns, the diagram, how to reply, and
the timing (the next reminder and the forfeit date as the service computed
them, with vacations and site pauses taken into account) and, on a rated
final board, each player's rating change. Every line fits in 78 characters
(the diagram is the game's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pbm import verbs
from pbm.games import GameState
from pbm.model import OPEN, BoardStatus, rules_of
from pbm.usecases.boardview import BoardView, MoveLine
from pbm.usecases.text import WIDTH, fmt_time, wrap
from pbm.verbs import Reader


def subject_status(view: BoardView) -> str:
    """``bob to move``; a result as the move list writes it: ``White wins``, ``Draw``,
    ``Cancelled``."""
    if view.status == BoardStatus.CANCELLED:
        return "Cancelled"
    if view.status == BoardStatus.WAITING:
        return f"waiting for {view.waiting_for} to accept"
    winner = view.winner
    if view.drawn:
        return "Draw"
    if view.status == BoardStatus.FINISHED and winner is not None:
        return f"{view.seat_names[winner]} wins"
    if view.status == BoardStatus.FINISHED:
        return "Game over"
    return f"{view.to_move_name} to move"


def board_subject(view: BoardView, status: str | None = None) -> str:
    return f"{view.title} Board {view.board} - {status or subject_status(view)}"


def variant_line(view: BoardView) -> str:
    opts = ", ".join(f"{k}={v}" for k, v in sorted(view.options.items()))
    return f"Variant: {view.variant}" + (f" ({opts})" if opts else "")


MOVES_HEADING = "Moves:"  # above the move list (the HTML part finds the list by it)


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
    if view.status == BoardStatus.CANCELLED:
        return ["This board was cancelled."]
    if view.status == BoardStatus.WAITING:
        return wrap(f"The challenge waits for {view.waiting_for} to accept it.")
    winner = view.winner
    how = f" ({view.termination})" if view.termination else ""
    if view.drawn:
        return [f"Draw{how}. Result {view.result}.", *_rating_lines(view)]
    if view.status == BoardStatus.FINISHED and winner is not None:
        lines = [f"{_seat_label(view, winner)} wins{how}. Result {view.result}."]
        return lines + _rating_lines(view)
    if view.status == BoardStatus.FINISHED:
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
    if view.status == BoardStatus.CANCELLED:
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
    if view.status == BoardStatus.WAITING:
        if recipient and recipient.lower() == (view.waiting_for or "").lower():
            return wrap(
                f"To play, reply to this mail with {verbs.ACCEPT}; to refuse, reply with "
                f"{verbs.REJECT}."
            )
        return wrap(
            f"Waiting for {view.waiting_for} to accept; to take the challenge back, "
            f"reply with {verbs.listed(verbs.sendable(Reader.CHALLENGER))}."
        )
    if view.status != BoardStatus.ACTIVE:
        lines = wrap(f"History: {g} history {b}. Show the board: {g} show {b}.")
        player = recipient is not None and recipient.lower() in (p.lower() for p in view.players)
        if view.status == BoardStatus.FINISHED and player:
            lines += wrap(
                "A rematch, the same game with colours swapped: reply to this mail with "
                f"rematch (or send: {g} rematch {b} {recipient} PASSWORD)."
            )
        return lines
    me = None
    if recipient is not None:
        for name in view.players:
            if name.lower() == recipient.lower():
                me = name
    draws = rules_of(view.game).draw_offers
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
        told: tuple[verbs.Verb, ...] = (verbs.MOVE,)
        reader = Reader.TO_MOVE
    elif me is not None:
        lines += [f"  Waiting for {view.to_move_name} to move."]
        lines += wrap(
            "To have your answer played the moment they move, reply with "
            f"{verbs.QUEUE.name} MOVE, or {verbs.QUEUE.name} MOVE if THEIR-MOVE (a line for "
            f"each reply you foresee; {verbs.QUEUE.name} show: what you gave).",
            indent="  ",
        )
        told, reader = (verbs.QUEUE,), Reader.OTHER_PLAYER
    else:
        may = verbs.listed(verbs.sendable(Reader.FOLLOWER, draws=draws))
        lines += wrap(
            f"{view.to_move_name} is to move. If you follow this board, a reply to this mail "
            f"may hold {may}.",
            indent="  ",
        )
        return lines
    also = [v for v in verbs.sendable(reader, draws=draws) if v not in told]
    lines += wrap(f"By reply you can also send {verbs.listed(also)}.", indent="  ")
    return lines


def _timing(view: BoardView) -> list[str]:
    lines = [f"Started:   {fmt_time(view.created_at)}", f"Last move: {fmt_time(view.last_move_at)}"]
    if view.status == BoardStatus.ACTIVE:
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
    if view.event is not None:
        body.extend(wrap(f"Event: {view.event}"))
    body.append("")
    body += _last_move(view)
    body += _state_lines(view)
    body += ["", MOVES_HEADING, *move_list(view.moves, number=view.move_number), ""]
    ended = None if view.status in OPEN else ending(view)
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
