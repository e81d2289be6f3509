#!/usr/bin/env python3
"""Crash trial (issue 35, case 4): moves by mail over two ``pbm serve`` instances on one
PostgreSQL database, one instance killed with SIGKILL at random points, counted.

Run by hand: ``.venv/bin/python scripts/crash_trial.py [--runs 10] [--moves 200]
[--boards 10] [--postgres URL]``. Each run uses a fresh database on the server of
``--postgres`` (default: this machine's, database ``test``). It prints, for each run,
the moves sent and applied, the kills, the outbox rows and the mails in the Maildir,
and any row without its mail, any mail delivered twice, any row left unsent and any
applied move whose board mails were not written; it exits 1 if any run lost or
doubled a mail.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from crashes import run_trial

from pbm.store.engine import init_db


def fresh_database(admin_url: str) -> tuple[str, sa.Engine, str]:
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"pbm_crash_{secrets.token_hex(4)}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    init_db(url).close()
    return url, admin, name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--boards", type=int, default=10)
    parser.add_argument("--kill-every", type=float, default=2.0, help="seconds, on average")
    parser.add_argument("--postgres", default="postgresql+psycopg://root@127.0.0.1:5432/test")
    args = parser.parse_args()
    failed = 0
    for run in range(1, args.runs + 1):
        url, admin, name = fresh_database(args.postgres)
        started = time.monotonic()
        try:
            with tempfile.TemporaryDirectory(prefix="pbm-crash-") as root:
                trial = run_trial(
                    Path(root),
                    url,
                    moves=args.moves,
                    boards=args.boards,
                    seed=run,
                    kill_every=args.kill_every,
                )
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.dispose()
        print(
            f"run {run}: {trial.moves_sent} moves sent, {trial.moves_applied} applied, "
            f"{trial.kills} kills, {trial.outbox_rows} outbox rows, "
            f"{trial.mails_in_maildir} mails in the Maildir, "
            f"{trial.sent_again} sent again after a kill, "
            f"{time.monotonic() - started:.0f} s: {'held' if trial.held else 'FAILED'}",
            flush=True,
        )
        for what in ("missing", "doubled", "not_sent", "moves_without_mail"):
            found = getattr(trial, what)
            if found:
                print(f"  {what}: {found[:10]}{' ...' if len(found) > 10 else ''}")
        failed += not trial.held or trial.moves_applied != trial.moves_sent
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
