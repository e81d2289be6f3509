"""Per-client rates: how many connections and mails one address may begin in a minute.

A sliding window, kept in memory: for each client, the times of the events
admitted in the last minute, oldest first. A client at its limit is refused
until its oldest event leaves the window; refusals are not counted, so a
client that keeps trying is let in again as soon as its minute allows.

The table cannot be grown without bound: a client is forgotten once its
newest event is a minute old, each client holds at most ``limit`` times, and
no more than ``max_clients`` clients are kept (past that, the one quiet the
longest is forgotten first). The clock is injected (seconds, monotonic), so
tests move time by hand.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

WINDOW_SECONDS = 60.0
MAX_CLIENTS = 10_000

Clock = Callable[[], float]


class SlidingWindow:
    """At most ``limit`` events per key within any ``window`` seconds (0: no limit)."""

    def __init__(
        self,
        limit: int,
        *,
        window: float = WINDOW_SECONDS,
        clock: Clock = time.monotonic,
        max_keys: int = MAX_CLIENTS,
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.max_keys = max_keys
        # Ordered by each key's newest event, the oldest first: pruning looks at the front.
        self._events: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        """How many keys are remembered."""
        return len(self._events)

    def admit(self, key: str) -> bool:
        """Whether one more event of ``key`` fits in its window now; if so, it is counted."""
        if self.limit <= 0:
            return True
        now = self.clock()
        horizon = now - self.window
        self._prune(horizon)
        events = self._events.get(key)
        if events is None:
            events = self._events[key] = deque()
        while events and events[0] <= horizon:
            events.popleft()
        if len(events) >= self.limit:
            return False
        events.append(now)
        self._events.move_to_end(key)
        while len(self._events) > self.max_keys:
            self._events.popitem(last=False)
        return True

    def _prune(self, horizon: float) -> None:
        """Forget the keys whose newest event has left the window."""
        while self._events:
            key, events = next(iter(self._events.items()))
            if events and events[-1] > horizon:
                return
            del self._events[key]


def client_of(peer: Any) -> str:
    """The client a connection comes from: its IP address (the port left out).

    A unix socket has no peer address: all its connections are one local client.
    """
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return "local"


class ClientRates:
    """Connections and mails (MAIL transactions) per client address and minute."""

    def __init__(
        self,
        connections_per_minute: int,
        messages_per_minute: int,
        *,
        clock: Clock = time.monotonic,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.connections = SlidingWindow(connections_per_minute, clock=clock, max_keys=max_clients)
        self.messages = SlidingWindow(messages_per_minute, clock=clock, max_keys=max_clients)

    def admit_connection(self, peer: Any) -> bool:
        """Whether a connection from ``peer`` may be served (and count it)."""
        return self.connections.admit(client_of(peer))

    def admit_mail(self, peer: Any) -> bool:
        """Whether ``peer`` may begin one more mail (and count it)."""
        return self.messages.admit(client_of(peer))
