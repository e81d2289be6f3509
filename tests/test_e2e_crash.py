"""Case 4 of issue 35: no move mail is lost when a server instance dies. Two instances on
one PostgreSQL database, one of them killed with SIGKILL at random points and started
again, while moves come by mail; then every outbox row is counted against the Maildir
both deliver into, and every applied move against its board mails.

One short run here; ``scripts/crash_trial.py`` runs the issue's ten runs of 200 moves.
The steps of the hand-over one by one (a sender that dies after its claim, or after
the transport took the mail but before its outcome was written) are in
``tests/test_outbox_runner.py`` and ``tests/test_sent_once.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import _truncate
from crashes import run_trial

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]


def test_case_04_no_move_mail_is_lost_when_an_instance_is_killed(
    tmp_path: Path, postgres_url: str
) -> None:
    _truncate(postgres_url)
    trial = run_trial(tmp_path, postgres_url, moves=60, boards=6, seed=4, kill_every=1.5, down=0.3)
    assert trial.kills >= 1
    assert trial.moves_applied == trial.moves_sent == 60
    assert trial.held, trial
    assert trial.mails_in_maildir == trial.outbox_rows
