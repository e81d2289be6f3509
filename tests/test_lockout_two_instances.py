"""The lockout holds across server instances: two instances that check two guesses at the
same moment, each on a snapshot that shows four wrong passwords of five, let no guess past
the fifth in, even a right one. Two ``Site``s with connections of their own to one
database (SQLite and PostgreSQL), as two ``pbm serve`` have."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import Clock

from pbm.config import Config
from pbm.refusals import LockedOut, WrongPassword
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.accounts import ChangePassword
from pbm.usecases.answers import Quoted
from pbm.usecases.auth import Password, Who
from pbm.usecases.site import Site
from pbm.usecases.unit import Request

ALICE = "alice@example.org"


@pytest.fixture
def second(config: Config, clock: Clock, site: Site) -> Iterator[Site]:
    """Another server instance on the same database."""
    db = Database.open(config.database.url)
    yield Site(db, config, clock)
    db.close()


def guess(password: str, new: str = "stolen") -> Request:
    return Request(
        ChangePassword(new),
        Who("alice", Password(password)),
        sender="eve@evil.example",
        message_id=f"<{password}@x>",
        quoted=Quoted("password alice ****** ******"),
    )


def decided_on_a_snapshot(site: Site, request: Request) -> unit.Decided:
    with site.db.read() as snapshot:
        return unit.decide_all(site, snapshot, [request])[0]


def written(site: Site, decided: unit.Decided) -> unit.Outcome:
    with site.db.transaction() as session:
        (outcome,) = unit.write(site, session, [decided])
    return outcome


def test_two_instances_let_no_guess_past_the_lockout(site: Site, second: Site) -> None:
    for n in range(4):  # four wrong guesses, counted: one more is allowed
        outcome = written(site, decided_on_a_snapshot(site, guess(f"wrong{n}")))
        assert isinstance(outcome.refused, WrongPassword)
    # Both instances check a guess on snapshots that show four failures: the first is
    # wrong (the fifth failure), the second is right.
    first = decided_on_a_snapshot(site, guess("wrong4"))
    right = decided_on_a_snapshot(second, guess("pw"))
    assert isinstance(first.decision, WrongPassword)
    assert not isinstance(right.decision, Exception)  # on its own, it would have worked
    assert isinstance(written(site, first).refused, WrongPassword)
    outcome = written(second, right)
    assert isinstance(outcome.refused, LockedOut)  # decided again, after the fifth failure
    # Nothing was changed: alice's password is still hers.
    account = queries.player(site, "alice")
    assert site.passwords.verify("pw", account.password_hash)
