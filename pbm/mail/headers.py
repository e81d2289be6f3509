"""``ParsedOnce``: an email message whose header lookups are parsed once, not on every call.

``policy.default`` builds a new header object (a full RFC 5322 parse) on every
``get``, and reading or flattening one message asks for Content-Type alone
many times over. This class keeps each answer until the headers change.
"""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

_ABSENT = object()
_PARSED = "_pbm_parsed"


class ParsedOnce(EmailMessage):
    """An ``EmailMessage`` that remembers parsed headers until a header is changed."""

    def get(self, name: str, failobj: Any = None) -> Any:
        parsed: dict[str, Any] = self.__dict__.setdefault(_PARSED, {})
        key = name.lower()
        value = parsed.get(key, _ABSENT)
        if value is _ABSENT:
            value = parsed[key] = super().get(name, _ABSENT)
        return failobj if value is _ABSENT else value

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
