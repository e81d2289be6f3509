"""The HTML part of a board mail: the text part's words, and the board as a picture.

What mail clients show, and what they do not: no scripts, no remote images,
no external style sheets (they are blocked, and a remote image tells the
sender who read the mail); styles inline, with one ``<style>`` block for
dark mode that clients without it ignore; at most 600 px wide and fluid below
that, so it reads at a phone's 360 px. Everything a player wrote (names,
comments, chat) is escaped: it is shown as text, never read as HTML.

The text is the text part's, paragraph by paragraph: the ASCII diagram gives
way to the picture (``cid:``, in the same mail), lines laid out in columns
(the move list, the how-to-reply examples) keep a fixed-width font.
"""

from __future__ import annotations

import re
from html import escape

_PAGE = (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    '<meta name="color-scheme" content="light dark">\n'
    '<meta name="supported-color-schemes" content="light dark">\n'
    "<title>{title}</title>\n"
    "<style>@media (prefers-color-scheme: dark) {{"
    " body, .pbm {{ background: #1b1b1d !important; color: #e8e6e3 !important; }}"
    " .pbm pre {{ background: #26262a !important; color: #e8e6e3 !important; }} }}</style>\n"
    "</head>\n"
    '<body style="margin:0;padding:0;background:#ffffff;color:#1f1f1f;">\n'
    '<div class="pbm" style="max-width:600px;margin:0 auto;padding:12px 14px;'
    "font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.45;"
    'overflow-wrap:anywhere;word-wrap:break-word;">\n{content}\n</div>\n</body></html>\n'
)
_P = '<p style="margin:0 0 12px;">{}</p>'
_FIRST = '<p style="margin:0 0 12px;font-weight:bold;">{}</p>'
_PRE = (
    '<pre style="margin:0 0 12px;padding:6px 8px;background:#f4f2ee;border-radius:4px;'
    "font-family:Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:13px;"
    'white-space:pre-wrap;overflow-wrap:anywhere;">{}</pre>'
)
_IMG = (
    '<p style="margin:0 0 12px;"><img src="cid:{cid}" alt="{alt}" width="480" '
    'style="display:block;width:100%;max-width:480px;height:auto;border:0;"></p>'
)


def html_part(title: str, text: str, diagram: str, cid: str, alt: str, site_url: str = "") -> str:
    """The HTML of a mail whose text part is ``text``: ``diagram`` (its ASCII board, if
    any) replaced by the picture ``cid``, which otherwise follows the first paragraph.
    The first paragraph (what the mail is) is in bold. Addresses on the site's own web
    site (``site_url``) are links; nothing else a player wrote becomes one."""
    before, found, after = text.partition(diagram) if diagram else (text, "", "")
    image = _IMG.format(cid=escape(cid.strip("<>"), quote=True), alt=escape(alt, quote=True))
    blocks = _blocks(before, bold_first=True)
    # No diagram in the text: the picture follows its first paragraph.
    content = [*blocks, image, *_blocks(after)] if found else [*blocks[:1], image, *blocks[1:]]
    html = "\n".join(content)
    if site_url:
        own = re.escape(escape(site_url.rstrip("/"), quote=True)) + r"/boards/\d+"
        html = re.sub(own, lambda m: f'<a href="{m.group(0)}">{m.group(0)}</a>', html)
    return _PAGE.format(title=escape(title), content=html)


def _blocks(text: str, *, bold_first: bool = False) -> list[str]:
    """Paragraphs (split at blank lines) as HTML: laid-out lines in a ``<pre>``."""
    out = []
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        if any(line.startswith("  ") for line in lines):
            out.append(_PRE.format(escape("\n".join(lines))))
            continue
        shape = _FIRST if bold_first and not out else _P
        out.append(shape.format("<br>\n".join(escape(line) for line in lines)))
    return out
