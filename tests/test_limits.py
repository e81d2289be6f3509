"""The limits on automatic mail (pbm.usecases.limits, pbm.store.answer_counts)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pbm.config import LimitsConfig
from pbm.replies import MailKind, Reply
from pbm.store.answer_counts import count_answer
from pbm.store.engine import Database
from pbm.usecases.limits import Window, screen

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
# The hourly windows, for an address with no account; the day's bound is set out of the way
# here, but for the test of it.
LIMITS = LimitsConfig(
    answers_per_address_per_hour=3, error_replies_per_hour=2, stranger_answers_per_day=100
)


def answer(
    to: str = "victim@example.org",
    *,
    error: bool = False,
    kind: MailKind = MailKind.ANSWER,
    body: str = "Commands...\n",
) -> Reply:
    return Reply(to=to, subject="pbm - help", body=body, is_error=error, kind=kind)


def test_counts_are_kept_per_address_and_hour(db: Database) -> None:
    hour = T0.replace(minute=0)
    with db.transaction() as s:
        assert count_answer(s, "Victim@Example.org", hour, False) == (1, 0)
        assert count_answer(s, "victim@example.org", hour, True) == (2, 1)
        assert count_answer(s, "other@example.org", hour, True) == (1, 1)
        assert count_answer(s, "victim@example.org", hour + timedelta(hours=1), False) == (1, 0)
    with db.transaction() as s:  # kept across transactions
        assert count_answer(s, "victim@example.org", hour, False) == (3, 1)


def test_the_last_answer_says_so_then_silence(db: Database) -> None:
    got = []
    with db.transaction() as s:
        for minute in range(6):
            got += screen(s, [answer()], T0 + timedelta(minutes=minute), LIMITS)
    assert len(got) == 3
    assert "last answer" not in got[0].body and "last answer" not in got[1].body
    last = " ".join(got[2].body.split())
    assert "This is the last answer this server sends to your address until" in last
    # Three answers at 12:00-12:02: the last hour holds fewer than three from 13:20.
    assert "2025-03-01 13:20 UTC" in last
    with db.transaction() as s:  # what it did not send is not counted
        assert screen(s, [answer()], T0 + timedelta(hours=1, minutes=19), LIMITS) == []
        assert len(screen(s, [answer()], T0 + timedelta(hours=1, minutes=20), LIMITS)) == 1


def test_no_burst_at_the_turn_of_the_hour(db: Database) -> None:
    """Three answers at 12:59 weigh on 13:00 as the last hour's: no fourth before 13:20."""
    late = T0 + timedelta(minutes=59)
    with db.transaction() as s:
        assert len(screen(s, [answer() for _ in range(3)], late, LIMITS)) == 3
        assert screen(s, [answer()], T0 + timedelta(hours=1), LIMITS) == []
        assert len(screen(s, [answer()], T0 + timedelta(hours=1, minutes=30), LIMITS)) == 1
        assert screen(s, [answer()], T0 + timedelta(hours=1, minutes=31), LIMITS) == []


def test_window_arithmetic() -> None:
    w = Window(limit=20, previous=20, current=5)
    assert w.load(0.5) == 15
    assert w.opens_after(0.5) == 0.5  # open now
    assert w.opens_after(0.1) == pytest.approx(0.3)  # 20 * 0.7 + 6 = 20 at 18 minutes
    assert Window(20, 0, 20).opens_after(0.1) == pytest.approx(1.05)  # 13:03 for 12:xx


def test_errors_have_a_limit_of_their_own(db: Database) -> None:
    with db.transaction() as s:
        got = screen(s, [answer(error=True, body=f"Mistake {n}\n") for n in range(4)], T0, LIMITS)
    assert len(got) == 2 and "error replies" in got[1].body


def test_a_boards_mail_to_its_players_is_not_counted(db: Database) -> None:
    with db.transaction() as s:
        board_mails = [answer(kind=MailKind.BOARD) for _ in range(10)]
        assert screen(s, board_mails, T0, LIMITS) == board_mails
        assert len(screen(s, [answer(), answer(), answer(), answer()], T0, LIMITS)) == 3


def test_other_addresses_are_not_affected(db: Database) -> None:
    with db.transaction() as s:
        screen(s, [answer() for _ in range(5)], T0, LIMITS)
        assert len(screen(s, [answer("alice@example.org")], T0, LIMITS)) == 1


def test_an_address_with_no_account_gets_one_answer_a_day(db: Database) -> None:
    """Anyone can write any From: an address that never confirmed an account (it never
    answered one of our mails) gets ``limits.stranger_answers_per_day`` (1), and the
    answer says so."""
    limits = LimitsConfig()
    with db.transaction() as s:
        (first,) = screen(s, [answer(), answer()], T0, limits)
        assert "gets one answer a day" in " ".join(first.body.split())
        assert screen(s, [answer()], T0 + timedelta(hours=23), limits) == []
        assert len(screen(s, [answer()], T0 + timedelta(days=1, hours=1), limits)) == 1


def test_confirmations_reach_an_address_once_a_day_utc(db: Database) -> None:
    ask = answer(kind=MailKind.CONFIRM)
    with db.transaction() as s:
        assert screen(s, [ask, ask], T0, LimitsConfig()) == [ask]
        assert screen(s, [ask], T0 + timedelta(hours=11), LimitsConfig()) == []  # 23:00
        assert screen(s, [ask], T0 + timedelta(hours=12), LimitsConfig()) == [ask]  # a new day
