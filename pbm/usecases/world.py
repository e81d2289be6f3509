"""What use cases decide on: boards and accounts as values (``pbm.model``), read from one
session through the store and kept.

A ``World`` is the read side of one session, a snapshot or the write
transaction: it loads boards and accounts on first use (or all at once,
``preload``: ``pbm.store.boards.load_boards`` reads any number of boards in
the same few statements), keeps them, and remembers which it handed out
(``reads``), so that the unit of work can tell whether a decision was made on
data that has changed since.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from pbm.config import Config
from pbm.model import Account, Away, Board, Key, Pause, account_key, board_key
from pbm.refusals import UnknownBoard, UnknownPlayer
from pbm.store import Session
from pbm.store.accounts import failures_since, load_accounts, lock_account
from pbm.store.answer_counts import notices_on
from pbm.store.boards import load_boards, next_board_number
from pbm.store.stops import granted_days, load_pauses, load_vacations


class World:
    """The boards and accounts of one session, loaded on first use and kept.

    ``config`` and ``now`` are the site's settings and the time of the decision.

    ``reads`` collects the keys of what was handed out, so a decision can be
    checked against what has been written since (``pbm.usecases.unit``).
    """

    def __init__(
        self, session: Session, config: Config, now: datetime, *, lock: bool = False
    ) -> None:
        self.session = session
        self.config = config
        self.now = now
        self.lock = lock
        self.reads: set[Key] = set()
        self._boards: dict[int, Board | None] = {}
        self._accounts: dict[str, Account | None] = {}

    @contextmanager
    def reading(self) -> Iterator[set[Key]]:
        """Collect, in the set yielded, the keys of what is read inside."""
        outer, self.reads = self.reads, set()
        try:
            yield self.reads
        finally:
            self.reads = outer | self.reads

    def preload(self, boards: Iterable[int] = (), accounts: Iterable[str] = ()) -> None:
        """Load these boards and accounts now, all at once (what a batch will ask for)."""
        numbers = [n for n in set(boards) if n not in self._boards]
        loaded = load_boards(
            self.session,
            numbers,
            lock=self.lock,
            now=self.now,
            reminders=self.config.clock.reminders,
        )
        for n in numbers:
            self._boards[n] = loaded.get(n)
        for board in loaded.values():
            for uid, account in board.people.items():
                self._accounts.setdefault(uid, account)
        uids = [u.lower() for u in set(accounts) if u.lower() not in self._accounts]
        found = load_accounts(self.session, uids, self.now)
        for uid in uids:
            self._accounts[uid] = found.get(uid)

    def forget(self, keys: Iterable[Key]) -> None:
        """Drop what was loaded for these keys: it has been written since."""
        for kind, key in keys:
            if kind == "board":
                self._boards.pop(key, None)  # type: ignore[call-overload]
            elif kind == "account":
                self._accounts.pop(str(key), None)
                # Boards carry their people's accounts: load them afresh too.
                for number, board in list(self._boards.items()):
                    if board is not None and str(key) in board.people:
                        del self._boards[number]

    def board(self, number: int) -> Board:
        """The board ``number``; ``UnknownBoard`` if there is none."""
        self.reads.add(board_key(number))
        if number not in self._boards:
            self.preload(boards=[number])
        found = self._boards[number]
        if found is None:
            raise UnknownBoard(f"There is no board {number}.")
        return found

    def find_account(self, userid: str) -> Account | None:
        uid = userid.lower()
        self.reads.add(account_key(uid))
        if uid not in self._accounts:
            self.preload(accounts=[uid])
        return self._accounts[uid]

    def account(self, userid: str) -> Account:
        """The account ``userid`` (any case); ``UnknownPlayer`` if there is none."""
        found = self.find_account(userid)
        if found is None:
            raise UnknownPlayer(
                f"There is no player {userid!r}; sign up with: signup UID PW", userid
            )
        return found

    def accounts(self, userids: Sequence[str]) -> dict[str, Account]:
        """The accounts of these userids that exist, by lower-case userid."""
        self.preload(accounts=userids)
        out = {}
        for uid in userids:
            found = self.find_account(uid)
            if found is not None:
                out[found.userid] = found
        return out

    def vacations(self, userid: str) -> tuple[Away, ...]:
        """Every vacation of ``userid``, oldest first."""
        self.reads.add(account_key(userid))
        found = load_vacations(self.session, [userid.lower()])
        return tuple(sorted(found, key=lambda v: v.starts_at))

    def granted(self, userid: str, year: int) -> int:
        """The vacation days an admin gave ``userid`` for ``year``."""
        self.reads.add(account_key(userid))
        return granted_days(self.session, userid, year)

    def lock_account(self, userid: str) -> None:
        """Hold ``userid``'s row until the write transaction ends (PostgreSQL's row lock;
        SQLite's write transaction holds the whole file already): what is counted for the
        account next is not counted by another server instance meanwhile."""
        lock_account(self.session, userid)

    def failures(self, userid: str, since: datetime) -> int:
        """Wrong passwords given for ``userid`` since ``since``."""
        self.reads.add(("failures", userid.lower()))
        return failures_since(self.session, userid, since)

    def notices_sent(self, key: str, day: datetime) -> int:
        """The mails sent on someone's behalf under ``key`` on ``day`` (``NoticeSent``)."""
        self.reads.add(("notices", key))
        return notices_on(self.session, key, day)

    def pauses(self) -> tuple[Pause, ...]:
        """Every site-wide clock pause."""
        self.reads.add(("pauses", "all"))
        return load_pauses(self.session)

    def next_board_number(self) -> int:
        """The number a new board takes: one more than the highest so far."""
        self.reads.add(("boards", "new"))
        return next_board_number(self.session)
