"""Reading headers: decoded values that never raise, and parsing without repeated work.

``header_text`` and ``from_mailbox`` read what a received mail's headers
say, tolerating any garbage (a From that does not parse cleanly is no address).
``ParsedOnce`` and the two policies keep the email package from parsing the same
values over and over:

``policy.default`` builds a new header object (a full RFC 5322 parse) on every
``get``, and reading or flattening one message asks for Content-Type alone
many times over. ``ParsedOnce`` keeps each answer until the headers change.

The standard ``HeaderRegistry`` also makes a new class for every header it
parses; ``DEFAULT_POLICY`` and ``SMTP_POLICY`` are ``policy.default`` and
``policy.SMTP`` with a registry that makes each class once.
"""

from __future__ import annotations

import re
from email import errors, policy
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage, Message
from typing import Any


class HeaderClasses(HeaderRegistry):
    """A ``HeaderRegistry`` that makes each header class once and keeps it.

    Header classes keep no state of their own (a parsed header is an
    instance), so one class per kind serves every header of that kind. Kept
    by kind, not by header name: mail can invent any number of names.
    """

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[type[Any], type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        kind = self.registry.get(name.lower(), self.default_class)
        made = self._classes.get(kind)
        if made is None:
            made = self._classes[kind] = super().__getitem__(name)
        return made


DEFAULT_POLICY = policy.default.clone(header_factory=HeaderClasses())
SMTP_POLICY = policy.SMTP.clone(header_factory=HeaderClasses())

_ABSENT = object()
_PARSED = "_pbm_parsed"


# Headers whose values recur from message to message (the MIME ones in every
# message, a player's From and To in each of his): parsed once per process, not
# once per message. The parsed header objects are immutable.
_SHARED_NAMES = frozenset(
    {
        "content-type",
        "content-transfer-encoding",
        "content-disposition",
        "mime-version",
        "from",
        "to",
    }
)
_SHARED: dict[tuple[Any, str, str], Any] = {}
_SHARED_LIMIT = 1024


class ParsedOnce(EmailMessage):
    """An ``EmailMessage`` that remembers parsed headers until a header is changed."""

    def get(self, name: str, failobj: Any = None) -> Any:
        parsed: dict[str, Any] = self.__dict__.setdefault(_PARSED, {})
        key = name.lower()
        value = parsed.get(key, _ABSENT)
        if value is _ABSENT:
            value = parsed[key] = self._lookup(key)
        return failobj if value is _ABSENT else value

    def _lookup(self, key: str) -> Any:
        """``Message.get``: the first header of that name, parsed by the policy."""
        for name, raw in self._headers:  # type: ignore[attr-defined]
            if name.lower() != key:
                continue
            # The parse depends on the policy's header factory alone; the policy itself
            # is cloned whenever a message is flattened.
            factory = getattr(self.policy, "header_factory", None)
            if key not in _SHARED_NAMES or factory is None or hasattr(raw, "name"):
                return self.policy.header_fetch_parse(name, raw)
            shared_key = (factory, name, raw)
            header = _SHARED.get(shared_key)
            if header is None:
                if len(_SHARED) >= _SHARED_LIMIT:
                    _SHARED.clear()
                header = _SHARED[shared_key] = self.policy.header_fetch_parse(name, raw)
            return header
        return _ABSENT

    # Every way the standard library changes headers forgets what was parsed.

    def __setitem__(self, name: str, val: Any) -> None:
        self.__dict__.pop(_PARSED, None)
        super().__setitem__(name, val)

    def __delitem__(self, name: str) -> None:
        self.__dict__.pop(_PARSED, None)
        super().__delitem__(name)

    def set_raw(self, name: str, value: Any) -> None:
        self.__dict__.pop(_PARSED, None)
        super().set_raw(name, value)

    def add_header(self, _name: str, _value: str, **_params: Any) -> None:
        self.__dict__.pop(_PARSED, None)
        super().add_header(_name, _value, **_params)

    def replace_header(self, _name: str, _value: Any) -> None:
        self.__dict__.pop(_PARSED, None)
        super().replace_header(_name, _value)


def clean(text: str) -> str:
    """Text safe to store and print: undecodable bytes (surrogate escapes) become U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def raw_header(msg: Message, name: str) -> str:
    for key, value in msg.raw_items():
        if key.lower() == name.lower():
            return clean(str(value))
    return ""


def header_text(msg: Message, name: str) -> str:
    """A header's decoded value (RFC 2047), "" when absent; raw when it cannot be decoded."""
    try:
        value = msg.get(name)
        return "" if value is None else clean(str(value))
    except Exception:  # the header parser of policy.default chokes on some garbage
        return raw_header(msg, name)


# What a From header may show and still name its one mailbox plainly: an obsolete but
# common form (a period in a display name, "John Q. Public"; RFC 5322 4.1), UTF-8
# (RFC 6532), which the email package reads as undecodable bytes (``clean`` decodes it),
# and a control character, which changes nothing of the header's structure (controls
# are stripped where text enters, and an address with one is no address to answer:
# ``inbound.usable_address``).
_HARMLESS = (
    errors.ObsoleteHeaderDefect,
    errors.UndecodableBytesDefect,
    errors.NonASCIILocalPartDefect,
    errors.NonPrintableDefect,
)


def from_mailbox(msg: Message) -> tuple[str, str, str | None]:
    """The display name and address of the mail's one From mailbox, and why whom to
    answer is not clear, if it is not: ("", "", None) when there is no From at all.

    Only the ``email.headerregistry`` parse counts, and only when it is clean: what
    it leaves as a defect (``victim@evil.example <me@example.org>`` reads as the first
    address, with the rest an invalid address) or refuses (an encoded word that decodes
    to a line break) is no address to answer. ``email.utils.parseaddr`` is never asked:
    before Python 3.11.10 it has no ``strict`` and mis-parses such Froms
    (CVE-2023-27043). RFC 5322 3.6: one From field; one mailbox, or whom to answer is
    not clear either.
    """
    fields = sum(1 for name, _ in msg.raw_items() if name.lower() == "from")
    if fields == 0:
        return "", "", None
    if fields > 1:
        return "", "", f"the mail has {fields} From headers"
    try:
        header = msg.get("From")
        mailboxes = list(getattr(header, "addresses", ()))
        defects = [d for d in getattr(header, "defects", ()) if not isinstance(d, _HARMLESS)]
    except Exception as exc:  # the parser refuses what it cannot represent (a CR, an LF)
        return "", "", f"the From header does not parse ({_first_line(exc)})"
    if defects:
        return "", "", f"the From header does not parse cleanly ({_first_line(defects[0])})"
    if not mailboxes:
        return "", "", "the From header names no mailbox"
    if len(mailboxes) > 1:
        return "", "", f"the From header names {len(mailboxes)} mailboxes, not one"
    address = clean(mailboxes[0].addr_spec)
    if "@" not in address or "\ufffd" in address:
        return "", "", f"the From header names no mailbox to answer ({address!r})"
    return clean(mailboxes[0].display_name), address, None


def _first_line(error: object) -> str:
    text = clean(str(error)).strip()
    return text.splitlines()[0][:120] if text else type(error).__name__


def sender_address(msg: Message) -> tuple[str, str]:
    """The display name and address of the mail's one From mailbox; ("", "") if there is
    none, or none that parses cleanly (``from_mailbox``)."""
    name, address, unclear = from_mailbox(msg)
    return ("", "") if unclear else (name, address)


# RFC 5322 3.6.4: msg-id = "<" id-left "@" id-right ">", each a dot-atom-text (or
# the right a no-fold-literal). Only such a value is copied into our headers.
_ATEXT = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_MSG_ID = re.compile(rf"<{_DOT_ATOM}@(?:{_DOT_ATOM}|\[[\x21-\x5a\x5e-\x7e]*\])>")


def msg_id(value: str) -> str | None:
    """``value`` if it is exactly one valid msg-id (RFC 5322 3.6.4), else None."""
    value = value.strip()
    return value if len(value) <= 250 and _MSG_ID.fullmatch(value) else None
