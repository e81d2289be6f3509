"""The body of a mail as plain text, whatever the client sent.

Quoted-printable and base64, any declared charset or a bogus one, RFC 3676
format=flowed, HTML-only mail: ``body_text`` turns them all into the text a
person would read.
"""

from __future__ import annotations

import codecs
import re
from email.message import EmailMessage, Message
from html.parser import HTMLParser


def body_text(msg: Message) -> str:
    """The body as plain text: text/plain preferred, else HTML turned into text."""
    for preference in ("plain", "html"):
        part = _find_part(msg, preference)
        if part is None:
            continue
        text = _part_text(part)
        if text.strip():
            return text
    return ""


def _find_part(msg: Message, subtype: str) -> Message | None:
    """The body part of this subtype (``get_body`` skips attachments), else the first one."""
    if isinstance(msg, EmailMessage):
        try:
            body = msg.get_body(preferencelist=(subtype,))
            if body is not None:
                return body
        except Exception:
            pass
    try:
        for part in msg.walk():
            if (
                part.get_content_type() == f"text/{subtype}"
                and part.get_content_disposition() != "attachment"
            ):
                return part
    except Exception:
        pass
    return None


def _part_text(part: Message) -> str:
    payload = part.get_payload(decode=True)  # undoes quoted-printable and base64
    if not isinstance(payload, bytes):
        return ""
    text = decode_bytes(payload, part.get_content_charset())
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if part.get_content_subtype() == "html":
        return html_to_text(text)
    if str(part.get_param("format", "")).lower() == "flowed":
        delsp = str(part.get_param("delsp", "")).lower() == "yes"
        return unflow(text, delsp=delsp)
    return text


# Python codecs that are no mail charset: they would interpret the text
# (escapes, IDNA) instead of decoding it.
_NOT_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "punycode", "idna", "undefined"})


def _codec(charset: str | None) -> str | None:
    """The Python codec of a declared charset; None for unknown or unsuitable ones."""
    try:
        name = codecs.lookup((charset or "").strip()).name
    except (LookupError, ValueError):
        return None
    return None if name in _NOT_CHARSETS else name


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Bytes in the declared charset as text, tolerating wrong and unknown charsets.

    The declared charset if the bytes fit it, else UTF-8 if they fit that (a
    common mislabel), else the declared charset with U+FFFD for what does not
    fit, else Latin-1 (which never fails) for unknown or ASCII labels.
    """
    declared = _codec(charset)
    for name in (declared, "utf-8"):
        if name is None:
            continue
        try:
            return data.decode(name)
        except (UnicodeError, LookupError):  # LookupError: base64, zlib... are no charsets
            continue
    if declared is not None and declared != "ascii":
        try:
            return data.decode(declared, "replace")
        except LookupError:
            pass
    return data.decode("latin-1")


def unflow(text: str, *, delsp: bool = False) -> str:
    """Undo RFC 3676 format=flowed: join soft-broken lines into paragraphs.

    A line ending in a space is continued by the next line of the same quote
    depth (§4.2); the signature separator ``-- `` is never flowed; one
    leading space is stuffing (§4.4) and removed; with DelSp=yes the trailing
    space was added by the sender and is deleted too (§4.1).
    """
    out: list[str] = []
    paragraph: str | None = None
    paragraph_depth = 0

    def emit(depth: int, line: str) -> None:
        out.append(">" * depth + " " + line if depth else line)

    for line in text.split("\n"):
        stripped = line.lstrip(">")
        depth = len(line) - len(stripped)
        body = stripped.removeprefix(" ")
        if depth == 0 and body.startswith(">"):
            body = stripped  # §4.4: the stuffed space is what keeps ">" from being a quote
        signature = body == "-- "  # §4.3: neither fixed nor flowed; it ends a paragraph
        flowed = body.endswith(" ") and not signature
        if flowed and delsp:
            body = body[:-1]
        if paragraph is not None and depth == paragraph_depth and not signature:
            body = paragraph + body
        elif paragraph is not None:  # §4.5: a quote depth change ends the paragraph
            emit(paragraph_depth, paragraph)
        paragraph, paragraph_depth = body, depth
        if not flowed:
            emit(depth, body)
            paragraph = None
    if paragraph is not None:
        emit(paragraph_depth, paragraph)
    return "\n".join(out)


class _HtmlText(HTMLParser):
    """Collects the text of an HTML body: block elements break lines, blockquotes quote."""

    # Elements that begin and end a line of text.
    _BLOCK = re.compile(
        r"address|article|aside|blockquote|center|d[dlt]|div|footer|form|h[1-6r]|header"
        r"|li|ol|p|pre|section|t(able|body|d|h|head|r)|ul"
    )
    _HIDDEN = frozenset({"head", "script", "style", "title", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.quote_depth = 0
        self.pre_depth = 0
        self.hidden_depth = 0

    def end_line(self, *, keep_empty: bool = False) -> None:
        text = "".join(self.current)
        if self.pre_depth == 0:
            text = " ".join(text.split())
        self.current = []
        if text or keep_empty:
            self.lines.append("> " * self.quote_depth + text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":  # a head never closed must not hide the body
            self.hidden_depth = 0
        elif tag in self._HIDDEN:
            self.hidden_depth += 1
        elif tag == "br":
            self.end_line(keep_empty=True)
        elif self._BLOCK.fullmatch(tag):
            self.end_line()
            if tag == "blockquote":
                self.quote_depth += 1
            if tag == "pre":
                self.pre_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif self._BLOCK.fullmatch(tag):
            self.end_line()
            if tag == "blockquote":
                self.quote_depth = max(0, self.quote_depth - 1)
            if tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.hidden_depth:
            return
        data = data.replace("\xa0", " ")
        if not self.pre_depth:
            self.current.append(data)
            return
        first, *rest = data.split("\n")
        self.current.append(first)
        for line in rest:
            self.end_line(keep_empty=True)
            self.current.append(line)


def html_to_text(html: str) -> str:
    """Plain text of an HTML mail body; blockquoted text comes back as ``> `` lines."""
    parser = _HtmlText()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser gives up on some broken markup; keep what it read
        pass
    parser.end_line()
    return "\n".join(parser.lines)
