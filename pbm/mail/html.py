"""The HTML part of a board mail: the text part's words, and the board as a picture.

What mail clients show, and what they do not: no scripts, no remote images,
no external style sheets (they are blocked, and a remote image tells the
sender who read the mail); styles inline, with one ``<style>`` block for
dark mode that clients without it ignore; at most 600 px wide and fluid below
that, so it reads at a phone's 360 px. Everything a player wrote (names,
comments, chat) is escaped: it is shown as text, never read as HTML.

The text is the text part's, paragraph by paragraph: the ASCII diagram gives
way to the picture (``cid:``, in the same mail) and its legend, lines laid out
with indents (how to reply, a quoted comment) keep a fixed-width font, each
sentence the text part wrapped at 78 columns one line again, for the screen
to wrap. The move list becomes rows of moves, each move an element that never
breaks: two to a row, White's and Black's, where they fit, else one under the
other (a phone).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from pbm.usecases.boardtext import MOVES_HEADING
from pbm.usecases.text import WIDTH

_PAGE = (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    '<meta name="color-scheme" content="light dark">\n'
    '<meta name="supported-color-schemes" content="light dark">\n'
    "<title>{title}</title>\n"
    "<style>@media (prefers-color-scheme: dark) {{"
    " body, .pbm {{ background: #1b1b1d !important; color: #e8e6e3 !important; }}"
    " .pbm .pre, .pbm .moves {{ background: #26262a !important; color: #e8e6e3 !important; }}"
    " .pbm .legend {{ color: #b9b6b1 !important; }} }}</style>\n"
    "</head>\n"
    '<body style="margin:0;padding:0;background:#ffffff;color:#1f1f1f;">\n'
    '<div class="pbm" style="max-width:600px;margin:0 auto;padding:12px 14px;'
    "font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.45;"
    'overflow-wrap:anywhere;word-wrap:break-word;">\n{content}\n</div>\n</body></html>\n'
)
_P = '<p style="margin:0 0 12px;">{}</p>'
_FIRST = '<p style="margin:0 0 12px;font-weight:bold;">{}</p>'
_PRE = (
    '<div class="pre" style="margin:0 0 12px;padding:6px 8px;background:#f4f2ee;'
    "border-radius:4px;font-family:Menlo,Consolas,'DejaVu Sans Mono',monospace;"
    'font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere;">{}</div>'
)
# A line of it (no white space between them: it would show): what wraps on a narrow
# screen goes on under its own start.
_LINE = '<div style="padding-left:{}ch;">{}</div>'
_PREFIX = re.compile(r" *(> )?")  # a line's indent, and a quote's mark
# The picture is drawn twice as wide (``pictures.SCALE``): sharp on a phone's screen.
_IMG = (
    '<p style="margin:0 0 12px;"><img src="cid:{cid}" alt="{alt}" width="480" '
    'style="display:block;width:100%;max-width:480px;height:auto;border:0;"></p>'
)
_LEGEND = (
    '<p class="legend" style="margin:-4px 0 12px;max-width:480px;font-size:13px;'
    'line-height:1.4;color:#555555;">{}</p>'
)
_MOVES = (
    '<div class="moves" style="margin:0 0 12px;padding:6px 8px;background:#f4f2ee;'
    "border-radius:4px;font-family:Menlo,Consolas,'DejaVu Sans Mono',monospace;"
    'font-size:13px;line-height:1.5;">\n{}\n</div>'
)
# A move: never broken, as wide as the widest of its column (White's, Black's).
_MOVE = '<span class="move" style="display:inline-block;white-space:nowrap;{}">{}</span>'
_COLUMN = "min-width:{}ch;"
_APART = "padding-right:3ch;"  # after White's move
_COLUMNS = re.compile(r" {3,}")  # between the moves of a row in the text part


def html_part(
    title: str,
    text: str,
    diagram: str,
    cid: str,
    alt: str,
    site_url: str = "",
    legend: str = "",
) -> str:
    """The HTML of a mail whose text part is ``text``: ``diagram`` (its ASCII board, if
    any) replaced by the picture ``cid`` and its ``legend`` (one line a sentence), which
    otherwise follow the first paragraph. The first paragraph (what the mail is) is in
    bold. Addresses on the site's own web site (``site_url``) are links; nothing else a
    player wrote becomes one."""
    return html_part_of(title, text, [Shown(diagram, cid, alt, legend)], site_url)


@dataclass(frozen=True, slots=True)
class Shown:
    """A picture of a mail's HTML part: the diagram of the text part it stands for ("":
    none), its ``cid``, its words for a screen reader and its legend."""

    diagram: str
    cid: str
    alt: str
    legend: str = ""


def html_part_of(title: str, text: str, shown: Sequence[Shown], site_url: str = "") -> str:
    """``html_part`` with several pictures (a digest's boards): each in place of its
    diagram, in order; one whose diagram the text does not hold follows the first
    paragraph."""
    content: list[str] = []
    rest, first = text, True
    loose: list[str] = []
    for one in shown:
        image = _image(one)
        before, found, after = rest.partition(one.diagram) if one.diagram else (rest, "", "")
        if not found:
            loose.append(image)
            continue
        content += [*_blocks(before, bold_first=first), image]
        rest, first = after, False
    blocks = _blocks(rest, bold_first=first)
    if first:  # no diagram found: the pictures follow the first paragraph
        content = [*blocks[:1], *loose, *blocks[1:]]
    else:
        content += [*loose, *blocks]
    html = "\n".join(content)
    if site_url:
        own = re.escape(escape(site_url.rstrip("/"), quote=True)) + r"/boards/\d+"
        html = re.sub(own, lambda m: f'<a href="{m.group(0)}">{m.group(0)}</a>', html)
    return _PAGE.format(title=escape(title), content=html)


def _image(shown: Shown) -> str:
    """A picture and its legend, as HTML."""
    image = _IMG.format(
        cid=escape(shown.cid.strip("<>"), quote=True), alt=escape(shown.alt, quote=True)
    )
    if shown.legend.strip():
        lines = (escape(line) for line in shown.legend.splitlines() if line.strip())
        image += "\n" + _LEGEND.format("<br>\n".join(lines))
    return image


def _blocks(text: str, *, bold_first: bool = False) -> list[str]:
    """Paragraphs (split at blank lines) as HTML: laid-out lines in a fixed-width font."""
    out = []
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        if lines[0] == MOVES_HEADING and len(lines) > 1:
            out += [_P.format(escape(lines[0])), _moves(lines[1:])]
            continue
        if any(line.startswith("  ") for line in lines):
            out.append(_laid_out(lines))
            continue
        shape = _FIRST if bold_first and not out else _P
        out.append(shape.format("<br>\n".join(escape(line) for line in lines)))
    return out


def _laid_out(lines: list[str]) -> str:
    """Lines laid out with indents (how to reply, a quoted comment) in a fixed-width
    font. A sentence the text part wrapped at its width (``usecases.text.wrap``: the next
    line, under the same indent, begins with a word that did not fit) is one line again,
    which a narrow screen wraps where it must, under its own start."""
    joined: list[str] = []
    before = ""  # the line before, as the text part has it
    for line in lines:
        start = _start(line)
        words = line[len(start) :].split()
        if words and joined and _start(before) == start and len(before) + len(words[0]) >= WIDTH:
            joined[-1] += " " + " ".join(words)
        else:
            joined.append(line)
        before = line
    return _PRE.format(
        "".join(
            _LINE.format(len(line) - len(line.lstrip(" ")), escape(line.lstrip(" ")))
            for line in joined
        )
    )


def _start(line: str) -> str:
    """A line's indent and quote mark (``  > ``)."""
    found = _PREFIX.match(line)
    return found.group(0) if found else ""


def _moves(lines: list[str]) -> str:
    """The move list's lines (``boardmail.move_list``: a row of moves each, apart by three
    spaces or more) as rows of moves, each move an element of its own that never breaks.
    Each column is as wide as its widest move: the rows of a list that does not fit two
    moves to a row wrap alike, one move under the other."""
    rows = [_COLUMNS.split(line.strip()) for line in lines]
    columns = range(max(len(row) for row in rows))
    widths = [max(len(row[j]) for row in rows if j < len(row)) for j in columns]
    return _MOVES.format(
        "\n".join(
            "<div>"
            + "".join(
                _MOVE.format(_COLUMN.format(widths[j]) + (_APART if j == 0 else ""), escape(move))
                for j, move in enumerate(row)
            )
            + "</div>"
            for row in rows
        )
    )
