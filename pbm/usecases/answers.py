"""One mail in, at most one mail out to its sender.

Anyone can write any From address: a forged mail of twenty commands that
each get an answer would otherwise send twenty mails to its victim. So every
answer to one mail's commands goes to its sender in one reply, as Mailman
answers a mail of commands, and that reply is bounded: its text and its
files together at most ``MAX_ANSWER_BYTES``. Files past the bound are left
out, and the reply says where the web site has them. Mail to other people
(the opponent's board mail, a challenge) is not the sender's and stays as
it is. A refused mailed command is answered here too (``refusal_reply``): the
command quoted, why, and that nothing changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pbm import games
from pbm.refusals import Refused
from pbm.replies import Attachment, Reply
from pbm.usecases.text import wrap
from pbm.usecases.weblinks import board_url

MAX_ANSWER_BYTES = 256 * 1024  # the text and the files of one answer together
CUT = "\n[The rest was left out: one answer holds at most {size} KB. Send fewer commands.]\n"


def one_answer(replies: Sequence[Reply], sender: str | None, base_url: str = "") -> list[Reply]:
    """``replies`` with those to ``sender`` gathered into one, in the place of the first,
    each within the bound (``base_url``: where the web site has the records left out)."""
    if not sender:
        return [bounded(r, base_url) for r in replies]
    mine = [r for r in replies if r.to.lower() == sender.lower()]
    if len(mine) <= 1:
        return [bounded(r, base_url) for r in replies]
    gathered = bounded(_gathered(mine), base_url)
    out: list[Reply] = []
    for reply in replies:
        if reply.to.lower() != sender.lower():
            out.append(bounded(reply, base_url))
        elif not any(r is gathered for r in out):
            out.append(gathered)
    return out


def _gathered(replies: Sequence[Reply]) -> Reply:
    """Several answers to one address as one mail: each under its own subject, the same
    answer once; about one board (with its reply address and picture) when all are."""
    first = replies[0]
    parts: list[str] = []
    seen: set[tuple[str, str]] = set()
    for reply in replies:
        if (reply.subject, reply.body) in seen:
            continue
        seen.add((reply.subject, reply.body))
        parts.append(f"== {reply.subject} ==\n\n{reply.body.rstrip()}\n")
    boards = {r.board for r in replies}
    board = first.board if len(boards) == 1 else None
    readers = {(r.reply_as, r.reply_key) for r in replies}
    reply_as, reply_key = readers.pop() if len(readers) == 1 else (None, None)
    pictures = {r.picture for r in replies if r.picture is not None}
    counted = [r for r in replies if r.counted]
    return Reply(
        to=first.to,
        subject=f"{len(parts)} answers to your mail" if len(parts) > 1 else first.subject,
        body="\n".join(parts),
        board=board,
        reply_as=reply_as if board is not None or reply_key else None,
        reply_key=reply_key,
        in_reply_to=first.in_reply_to,
        is_error=all(r.is_error for r in replies),
        kind=counted[0].kind if counted else first.kind,
        attachments=tuple(a for r in replies for a in r.attachments),
        thread=first.thread if board is not None else None,
        picture=pictures.pop() if board is not None and len(pictures) == 1 else None,
    )


def bounded(reply: Reply, base_url: str = "") -> Reply:
    """``reply`` within ``MAX_ANSWER_BYTES``: the files that do not fit left out (the
    reply says where the web site has its board's records), then its text cut."""
    room = MAX_ANSWER_BYTES - len(reply.body.encode())
    kept: list[Attachment] = []
    dropped: list[Attachment] = []
    for file in reply.attachments:
        size = len(file.text.encode())
        if size <= room:
            kept.append(file)
            room -= size
        else:
            dropped.append(file)
    body = reply.body
    if dropped:
        names = ", ".join(f.filename for f in dropped)
        where = (
            f"on the web site: {board_url(base_url, reply.board)}"
            if base_url and reply.board is not None
            else "from the site's admin"
        )
        note = (
            f"{names} did not fit into this mail (one answer holds at most "
            f"{MAX_ANSWER_BYTES // 1024} KB); fetch {'them' if len(dropped) > 1 else 'it'} {where}."
        )
        body = body.rstrip() + "\n\n" + "\n".join(wrap(note)) + "\n"
    limit = MAX_ANSWER_BYTES - sum(len(f.text.encode()) for f in kept)
    if len(body.encode()) > limit:
        cut = CUT.format(size=MAX_ANSWER_BYTES // 1024)
        body = body.encode()[: max(0, limit - len(cut.encode()))].decode(errors="ignore") + cut
    if body == reply.body and len(kept) == len(reply.attachments):
        return reply
    return replace(reply, body=body, attachments=tuple(kept))


@dataclass(frozen=True)
class Quoted:
    """A mailed command as a refusal of it quotes it (its passwords masked), and what the
    refusal is titled by: the board it was about, else the game it named."""

    line: str
    board: int | None = None
    game: str | None = None


def refusal_reply(to: str, refused: Refused, quoted: Quoted) -> Reply:
    """The answer to a refused mailed command (``Quoted``: the command, the board or game it
    is about)."""
    return error_reply(
        to, refused.message, quoted.line, quoted.board, quoted.game, mistake=refused.mistake
    )


def error_reply(
    to: str,
    why: str,
    command: str,
    board: int | None,
    game: str | None = None,
    *,
    mistake: bool = True,
) -> Reply:
    """The answer to a refused command: the command quoted, why, and that nothing changed.

    Titled by the board (``<Title> Board 12 - error``), else by the game of a game
    command (``<Title> - error``), else ``pbm - error`` (accounts, help, no command).
    """
    title = games.get(game).title if game is not None and game in games.names() else "pbm"
    subject = f"{title} Board {board} - error" if board is not None else f"{title} - error"
    lines = ["Your command:", *wrap(command, indent="  > "), ""] if command else []
    lines += [*wrap(why), "", "Nothing was changed. Send 'help' for the commands."]
    body = "\n".join(lines) + "\n"
    return Reply(to=to, subject=subject, body=body, board=board, is_error=mistake)
