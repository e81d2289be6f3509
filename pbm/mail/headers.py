"""Header parsing without repeated work: ``ParsedOnce`` and two policies.

``policy.default`` builds a new header object (a full RFC 5322 parse) on every
``get``, and reading or flattening one message asks for Content-Type alone
many times over. ``ParsedOnce`` keeps each answer until the headers change.

The standard ``HeaderRegistry`` also makes a new class for every header it
parses; ``DEFAULT_POLICY`` and ``SMTP_POLICY`` are ``policy.default`` and
``policy.SMTP`` with a registry that makes each class once.
"""

from __future__ import annotations

from email import policy
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage
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
