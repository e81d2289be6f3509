"""An email message -> who sent it, the text to read commands from, or why never to answer.

``read_message`` turns raw bytes into an ``Inbound`` and never raises: mail
from the internet is anything at all. It decodes what clients really send
(quoted-printable and base64, any declared charset or a bogus one, RFC 2047
subjects, RFC 3676 format=flowed, HTML-only mail) and separates what the
sender wrote from what they quoted (``strip_reply``).

Which text holds the commands follows ``COMMANDS.md`` and is
``command_candidates``' job; this module does not know the command grammar,
the caller passes ``is_command`` and chooses reply mode (``Inbound.token``
names the reply-token address the mail was sent to, if any).
"""

from __future__ import annotations

import codecs
import email
import email.utils
import re
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage, Message
from html.parser import HTMLParser

from pbm.mail.addresses import TokenAddress, parse_token_address
from pbm.mail.headers import DEFAULT_POLICY, ParsedOnce

# --- the message ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Inbound:
    """One received mail, decoded.

    ``sender`` is the address to answer: the From address (the envelope
    sender when there is no From). ``return_path`` is the SMTP envelope
    sender ("" for a bounce) and ``rcpt`` the envelope recipients. ``text`` is
    the whole body as plain text, ``new_text`` only what the sender wrote
    (``strip_reply``). ``token`` is the first recipient that is a reply-token
    address of this server (not yet checked against the secret).
    ``ignore_reason`` is set when the mail must get no answer at all
    (``never_answer``); the caller logs it and drops the mail.
    """

    sender: str
    sender_name: str
    return_path: str
    rcpt: tuple[str, ...]
    message_id: str
    subject: str
    in_reply_to: str
    references: tuple[str, ...]
    text: str
    new_text: str
    token: TokenAddress | None
    ignore_reason: str | None


def read_message(
    raw: bytes, *, mail_from: str, rcpt_tos: list[str], server_address: str
) -> Inbound:
    """Parse a received mail. Never raises: garbage gives an Inbound with an ``ignore_reason``."""
    return_path = _clean(mail_from).strip().strip("<>").strip()
    rcpt = tuple(_clean(r).strip().strip("<>") for r in rcpt_tos)
    try:
        msg = email.message_from_bytes(raw, _class=ParsedOnce, policy=DEFAULT_POLICY)
        sender_name, sender = _from_address(msg)
        text = _body_text(msg)
        return Inbound(
            sender=sender or return_path,
            sender_name=sender_name,
            return_path=return_path,
            rcpt=rcpt,
            message_id=_header(msg, "Message-ID").strip(),
            subject=" ".join(_header(msg, "Subject").split()),
            in_reply_to=_header(msg, "In-Reply-To").strip(),
            references=tuple(_header(msg, "References").split()),
            text=text,
            new_text=strip_reply(text),
            token=_token(rcpt, server_address),
            ignore_reason=never_answer(msg, return_path, server_address),
        )
    except Exception as exc:  # a parser bug must not lose the mail's log line or crash the worker
        return Inbound(
            sender=return_path,
            sender_name="",
            return_path=return_path,
            rcpt=rcpt,
            message_id="",
            subject="",
            in_reply_to="",
            references=(),
            text="",
            new_text="",
            token=None,
            ignore_reason=f"unreadable message ({type(exc).__name__})",
        )


def _clean(text: str) -> str:
    """Text safe to store and print: undecodable bytes (surrogate escapes) become U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _raw_header(msg: Message, name: str) -> str:
    for key, value in msg.raw_items():
        if key.lower() == name.lower():
            return _clean(str(value))
    return ""


def _header(msg: Message, name: str) -> str:
    """A header's decoded value (RFC 2047), "" when absent; raw when it cannot be decoded."""
    try:
        value = msg.get(name)
        return "" if value is None else _clean(str(value))
    except Exception:  # the header parser of policy.default chokes on some garbage
        return _raw_header(msg, name)


def _from_address(msg: Message) -> tuple[str, str]:
    """The display name and address of the first From mailbox; ("", "") if none."""
    try:
        for address in getattr(msg.get("From"), "addresses", ()):
            if "@" in address.addr_spec:
                return _clean(address.display_name), _clean(address.addr_spec)
    except Exception:
        pass
    name, addr = email.utils.parseaddr(_raw_header(msg, "From"))
    return (name, addr) if "@" in addr else ("", "")


def _token(rcpt: tuple[str, ...], server_address: str) -> TokenAddress | None:
    for address in rcpt:
        try:
            token = parse_token_address(address, server_address)
        except ValueError:  # int() of an absurd board number
            continue
        if token is not None:
            return token
    return None


# --- never answer ---------------------------------------------------------------

_BULK_PRECEDENCE = frozenset({"bulk", "junk", "list"})
_LIST_HEADERS = ("List-Id", "List-Unsubscribe")
_AUTOREPLY_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Autogenerated", "X-AutoReply-From")
_REPORT_TYPES = frozenset(
    {"multipart/report", "message/delivery-status", "message/disposition-notification"}
)
_ROBOT_LOCALS = ("mailer-daemon", "postmaster")
_NOREPLY_LOCALS = ("noreply", "no-reply", "no_reply", "donotreply", "do-not-reply", "do_not_reply")


def never_answer(msg: Message, mail_from: str, server_address: str) -> str | None:
    """Why this mail must get no answer at all (to avoid mail loops), or None.

    ``mail_from`` is the SMTP envelope sender, ``server_address`` our own address.
    """
    envelope = mail_from.strip().strip("<>").strip()
    if not envelope:
        # RFC 5321 §4.5.5: bounces have an empty reverse-path; never answer them.
        return "empty return path (a bounce)"
    auto = _header(msg, "Auto-Submitted").split(";")[0].strip().lower()
    if auto and auto != "no":
        # RFC 3834 §5: do not respond to any mail whose Auto-Submitted is not "no".
        return f"Auto-Submitted: {auto}"
    precedence = _header(msg, "Precedence").strip().lower()
    if precedence in _BULK_PRECEDENCE:
        return f"Precedence: {precedence}"
    for name in _LIST_HEADERS + _AUTOREPLY_HEADERS:
        if name in msg:  # present at all, whatever its value
            return f"{name} header (list mail or auto-reply)"
    try:
        content_type = msg.get_content_type()
    except Exception:
        content_type = ""
    if content_type in _REPORT_TYPES:
        return f"{content_type} (a delivery or read report)"
    _, from_address = _from_address(msg)
    for address in (envelope, from_address):
        if _is_ours(address, server_address):
            return f"sent by this server ({address}): a mail loop"
        local = address.rpartition("@")[0].lower() or address.lower()
        if local.startswith(_ROBOT_LOCALS) or local.startswith(_NOREPLY_LOCALS):
            return f"sent by a robot ({address})"
    return None


def _is_ours(address: str, server_address: str) -> bool:
    """Our own address, or any plus address of it (reply tokens): pbm+...@domain."""
    local, _, domain = address.lower().rpartition("@")
    our_local, _, our_domain = server_address.lower().rpartition("@")
    return bool(domain) and domain == our_domain and local.split("+")[0] == our_local


# --- the body -------------------------------------------------------------------


def _body_text(msg: Message) -> str:
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


# --- what the sender wrote ------------------------------------------------------

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
    inbound: Inbound, *, reply_mode: bool, is_command: Callable[[str], bool]
) -> tuple[list[str], str]:
    """The lines to run as commands, in order, and the comment to attach (COMMANDS.md).

    - reply mode: the first non-empty line of ``new_text`` (of ``bottom_text`` when
      nothing stands above the quote), whatever it is
      (the caller answers an error if it is no command); the rest is the
      comment. The subject is never read.
    - subject mode: the subject without prefixes, if ``is_command`` says so;
      the whole ``new_text`` is the comment.
    - body mode: otherwise every line of ``new_text`` that ``is_command``
      accepts; the other lines are the comment. No line accepted: ``[]``.
    """
    lines = inbound.new_text.split("\n")
    if reply_mode:
        if not inbound.new_text.strip():  # nothing above the quote: perhaps below it
            lines = bottom_text(inbound.text).split("\n")
        for i, line in enumerate(lines):
            if line.strip():
                return [line.strip()], "\n".join(lines[i + 1 :]).strip("\n")
        return [], ""
    subject = subject_command_text(inbound.subject)
    if subject and is_command(subject):
        return [subject], inbound.new_text
    commands: list[str] = []
    comment: list[str] = []
    for line in lines:
        if line.strip() and is_command(line.strip()):
            commands.append(line.strip())
        else:
            comment.append(line)
    return commands, "\n".join(comment).strip("\n")
