"""What a sender wrote, as opposed to what he quoted, and which lines are commands.

Players reply above the quote, below it, or with a signature; clients quote
with ``>`` or with a header such as "On Monday, Bob wrote:". ``strip_reply``
and ``bottom_text`` keep what the sender wrote; ``command_candidates`` picks
the lines to read as commands, in the modes of ``COMMANDS.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Lines that end the new text: signature separators (RFC 3676 §4.3 "-- ",
# and the forms it takes after careless clients: "--", "--=20") and the
# underscore rule Outlook puts above a quoted message.
_SIGNATURE = re.compile(r"(--(=20)?|_{2,})\s*")
_ORIGINAL = re.compile(
    r"-{2,}\s*(original message|ursprüngliche nachricht|original-nachricht|"
    r"message d'origine|forwarded message|weitergeleitete nachricht)\s*-{2,}",
    re.IGNORECASE,
)
# "On Mon, 1 Jan 2024 at 10:00, Bob <bob@example.org> wrote:" and its
# translations; clients wrap it over two lines, so these are also tried on a
# line joined with the next.
_ATTRIBUTION = re.compile(
    r"(on\b.{0,300}\bwrote"
    r"|am\b.{0,300}\bschrieb\b.{0,300}"
    r"|le\b.{0,300}\ba écrit"
    r"|el\b.{0,300}\bescribió"
    r"|op\b.{0,300}\bschreef\b.{0,300}"
    r"|il\b.{0,300}\bha scritto"
    r"|em\b.{0,300}\bescreveu"
    r"|den\b.{0,300}\bskrev\b.{0,300})"
    r"\s*:",
    re.IGNORECASE,
)
_WROTE = re.compile(r".{0,200}\bwrote:", re.IGNORECASE)
# Outlook's quote header: "From: ..." followed within a few lines by "Sent: ...".
_OUTLOOK_FROM = re.compile(r"\*?(from|von|de|van|da)\*?:\s*\S", re.IGNORECASE)
_OUTLOOK_NEXT = re.compile(
    r"\*?(sent|date|gesendet|datum|envoyé|enviado|to|an|à|subject|betreff)\*?:", re.IGNORECASE
)


def _is_quote_header(lines: list[str], i: int) -> bool:
    line = lines[i].strip()
    following = lines[i + 1].strip() if i + 1 < len(lines) else ""
    if _ORIGINAL.fullmatch(line) or _WROTE.fullmatch(line) or _ATTRIBUTION.fullmatch(line):
        return True
    if following and _ATTRIBUTION.fullmatch(f"{line} {following}"):
        return True
    if _OUTLOOK_FROM.match(line):
        return any(_OUTLOOK_NEXT.match(next_line.strip()) for next_line in lines[i + 1 : i + 4])
    return False


def strip_reply(text: str) -> str:
    """The new part of a body: up to the first signature or quote header, without ``>`` lines."""
    lines = text.split("\n")
    kept: list[str] = []
    for i, line in enumerate(lines):
        if _SIGNATURE.fullmatch(line) or _is_quote_header(lines, i):
            break
        if not line.startswith(">"):
            kept.append(line.rstrip())
    return "\n".join(kept).strip("\n")


def bottom_text(text: str) -> str:
    """What a bottom-poster wrote: the lines outside the quote, up to a signature.

    Some players answer below the quoted board ("On ... wrote:", ``>`` lines,
    then the move); ``strip_reply`` stops at the quote header and finds nothing.
    """
    lines = text.split("\n")
    kept: list[str] = []
    skip_to = -1
    for i, line in enumerate(lines):
        if _SIGNATURE.fullmatch(line):
            break
        if i <= skip_to or line.startswith(">"):
            continue
        if _is_quote_header(lines, i):
            # An attribution may run over two lines ("On ..., pbm\n<pbm@x> wrote:").
            joined = f"{line.strip()} {lines[i + 1].strip()}" if i + 1 < len(lines) else ""
            skip_to = i + 1 if _ATTRIBUTION.fullmatch(joined) else i
            continue
        kept.append(line.rstrip())
    return "\n".join(kept).strip("\n")


# Reply and forward prefixes in the languages clients write them in, with the
# counters some add ("Re[2]:", "AW(3):") and list tags ("[pbm]").
_SUBJECT_PREFIX = re.compile(
    r"\s*(\[[^\]]{0,100}\]"
    r"|(re|fwd?|fw|aw|wg|sv|vs|antw|odp|tr|rif|回复|答复|转发)\s*(\[\d{1,6}\]|\(\d{1,6}\))?\s*[:：])"
    r"\s*",
    re.IGNORECASE,
)


def subject_command_text(subject: str) -> str:
    """The subject without ``Re:``, ``Fwd:``, ``AW:``, ``SV:``... prefixes and ``[tags]``."""
    text = subject.strip()
    while (m := _SUBJECT_PREFIX.match(text)) is not None and m.end() > 0:
        text = text[m.end() :]
    return " ".join(text.split())


def command_candidates(
    text: str,
    new_text: str,
    subject: str,
    *,
    reply_mode: bool,
    is_command: Callable[[str], bool],
    is_meant: Callable[[str], bool] | None = None,
    limit: int | None = None,
) -> tuple[list[str], str]:
    """The lines of a mail to run as commands, in order, and the comment (COMMANDS.md).

    ``text`` is the whole body as text, ``new_text`` what the sender wrote of
    it (``strip_reply``), ``subject`` the Subject as decoded.

    - reply mode: the first line of ``new_text`` (of ``bottom_text`` when
      nothing stands above the quote) that ``is_command`` accepts, else the
      first that ``is_meant`` accepts (a command as a person means it: "OK,
      accept"), in one pass; the lines after it are the comment (a greeting
      above it is none, nor are words on its own line). No line accepted:
      ``[]`` and the whole text as the comment. The subject is never read.
    - subject mode: the subject without prefixes, if ``is_command`` says so;
      the whole ``new_text`` is the comment.
    - body mode: otherwise every line of ``new_text`` that ``is_command``
      accepts; the other lines are the comment. No line accepted: ``[]``.

    ``limit``: stop looking once more than ``limit`` command lines are found (a
    hostile mail of thousands of lines is not read to its end).
    """
    lines = new_text.split("\n")
    if reply_mode:
        if not new_text.strip():  # nothing above the quote: perhaps below it
            lines = bottom_text(text).split("\n")
        taken: int | None = None  # the first command as written, else the first as meant
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            if is_command(line.strip()):
                taken = i
                break
            if taken is None and is_meant is not None and is_meant(line.strip()):
                taken = i
        if taken is None:
            return [], "\n".join(lines).strip("\n")
        return [lines[taken].strip()], "\n".join(lines[taken + 1 :]).strip("\n")
    typed = subject_command_text(subject)
    if typed and is_command(typed):
        return [typed], new_text
    commands: list[str] = []
    rest: list[str] = []
    for line in lines:
        if limit is not None and len(commands) > limit:
            break
        if line.strip() and is_command(line.strip()):
            commands.append(line.strip())
        else:
            rest.append(line)
    return commands, "\n".join(rest).strip("\n")
