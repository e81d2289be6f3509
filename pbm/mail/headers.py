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


# MIME headers whose few usual values recur in every message: parsed once per
# process, not once per message (the parsed header objects are immutable).
_SHARED_NAMES = frozenset(
    {"content-type", "content-transfer-encoding", "content-disposition", "mime-version"}
)
_SHARED: dict[tuple[Any, str, str], Any] = {}
_SHARED_LIMIT = 256


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
