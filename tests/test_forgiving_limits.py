"""The error allowance forgives what a person could not avoid, and holds nothing that
matters back: the same mistake counts once, players are allowed more than strangers, a
challenge never spends its reader's answers (a second within the hour waits for it), a
lockout is told once and seen by the admin, who can lift it. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from conftest import T0, Clock
from test_cli_admin import Cli, empty_config
from test_inbox_runner import mails_to

from pbm.config import LimitsConfig
from pbm.replies import Reply
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.answers import Quoted
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.limits import screen
from pbm.usecases.site import Site
from pbm.usecases.unit import Request

LIMITS = LimitsConfig(
    answers_per_address_per_hour=5,
    error_replies_per_hour=2,
    player_answers_per_hour=10,
    player_error_replies_per_hour=4,
    stranger_answers_per_day=100,  # the hourly windows here; a stranger's day: test_limits
)
STRANGER, ALICE, BOB = "zed@example.net", "alice@example.org", "bob@example.org"


def error(to: str, body: str = "'x' is not a command.\n") -> Reply:
    return Reply(to=to, subject="pbm - error", body=body, is_error=True)


def test_the_same_mistake_repeated_counts_once(db: Database) -> None:
    with db.transaction() as s:
        same = screen(s, [error(STRANGER) for _ in range(4)], T0, LIMITS)
        assert len(same) == 4  # one error, three answers: within both limits
        other = screen(s, [error(STRANGER, f"mistake {n}\n") for n in range(3)], T0, LIMITS)
        assert len(other) == 1  # two errors now: the limit of strangers


def test_a_player_is_allowed_more_than_a_stranger(site: Site, db: Database) -> None:
    with db.transaction() as s:
        strangers = screen(s, [error(STRANGER, f"m{n}\n") for n in range(6)], T0, LIMITS)
        players = screen(s, [error(ALICE, f"m{n}\n") for n in range(6)], T0, LIMITS)
    assert (len(strangers), len(players)) == (2, 4)


def test_a_challenge_never_spends_its_readers_answers(
    site: Site, db: Database, clock: Clock, tmp_path: Path, db_url: str
) -> None:
    # bob used up his answers (help, sixty times in the hour)...
    hour = T0.replace(minute=0)
    with db.transaction() as s:
        from pbm.store.answer_counts import count_answer

        for _ in range(site.config.limits.player_answers_per_hour):
            count_answer(s, BOB, hour, False)
    # ... then alice challenges him: it comes at once, his answers spent or not.
    [to_bob] = [
        r for r in unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE)) if r.to == BOB
    ]
    assert to_bob.not_before is None
    # carol's challenge within the hour waits for the hour (one a mail an hour at most).
    [to_bob] = [
        r
        for r in unit.run(site, Challenge("accasta", "carol", "bob", sender="carol@example.org"))
        if r.to == BOB
    ]
    assert to_bob.not_before is not None and to_bob.not_before >= clock() + timedelta(hours=1)
    [row] = [m for m in mails_to(db, BOB) if "challenge from carol" in m.subject]
    assert row.status == "pending" and row.next_attempt_at is not None
    assert row.next_attempt_at > clock()
    # The admin sees it, and can send it now.
    cli = Cli(empty_config(tmp_path), db_url)
    status = json.loads(cli("status", "--json", "--now", clock().isoformat(), ok=False).stdout)
    assert status["held"] == 1 and any("held back" in w for w in status["warnings"])
    shown = cli("player", "show", "bob", "--now", clock().isoformat()).output
    assert "held answers: 1" in shown
    cli("player", "unlock", "bob", "--now", clock().isoformat())
    [row] = [m for m in mails_to(db, BOB) if "challenge from carol" in m.subject]
    assert row.next_attempt_at is not None and row.next_attempt_at <= clock()


def wrong_password(site: Site, n: int) -> None:
    request = Request(
        unit_action(),
        Who("alice", Password(f"wrong{n}")),
        sender="eve@evil.example",
        message_id=f"<w{n}@x>",
        quoted=Quoted("password alice ****** ******"),
    )
    with site.db.read() as snapshot:
        decided = unit.decide_all(site, snapshot, [request])
    with site.db.transaction() as session:
        unit.write(site, session, decided)


def unit_action() -> object:
    from pbm.usecases.accounts import ChangePassword

    return ChangePassword("stolen")


def test_a_lockout_is_told_once_seen_and_lifted(
    site: Site, db: Database, clock: Clock, tmp_path: Path, db_url: str
) -> None:
    for n in range(8):  # five make the lock; three more knock on it
        wrong_password(site, n)
    told = [m for m in mails_to(db, ALICE) if m.subject == "pbm - wrong passwords"]
    assert len(told) == 1
    said = " ".join(told[0].body.split())
    assert "refused until 2025-03-01 12:15 UTC" in said
    assert "password reset alice" in said
    cli = Cli(empty_config(tmp_path), db_url)
    now = clock().isoformat()
    assert (
        "locked until 2025-03-01 12:15 UTC" in cli("player", "show", "alice", "--now", now).output
    )
    status = json.loads(cli("status", "--json", "--now", now, ok=False).stdout)
    assert status["locked"] == ["alice"]
    cli("player", "unlock", "alice", "--now", now)
    assert "not locked" in cli("player", "show", "alice", "--now", now).output
    # The right password works again at once.
    unit.run(site, unit_action(), Who("alice", Password("pw")))  # type: ignore[arg-type]
    assert queries.player(site, "alice").password_hash != ""
    clock.advance(minutes=1)
    assert timedelta(0) < clock() - T0
