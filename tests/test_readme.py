"""The README's first game, run as written against a real ``pbm serve``.

The shell blocks under "A first game" are taken from README.md and run by
bash in a site of their own; only the paths of ``.venv/bin/python`` and
``.venv/bin/pbm`` and the listening port are made this test's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mailserver import PbmServer, free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def first_game_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## A first game", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.S)


def run(block: str, server: PbmServer) -> str:
    script = block.replace(".venv/bin/python scripts/", f"{sys.executable} {ROOT}/scripts/")
    script = script.replace(".venv/bin/pbm ", f"{sys.executable} -m pbm ")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=server.root,
        env=server.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def test_the_first_game_works_as_written(tmp_path: Path) -> None:
    port = free_port()
    server = PbmServer(
        tmp_path,
        transport="maildir",
        listen=f"127.0.0.1:{port}",
        extra_env={"PBM_MAIL_ADDRESS": "pbm@localhost"},
    )
    server.start()
    try:
        game, swaks, admin = first_game_blocks()
        out = run(game, server)
        # bob's answer reached alice: her board mail shows it and it is her turn. The
        # game's mails are one thread: one subject, what each is about on its first line.
        assert "Subject: Accasta Board 1: alice vs bob" in out
        assert "\nAccasta Board 1 - alice to move\n" in out
        assert "Move 2, bob (Black): g2:C+f2,H+f3" in out
        if shutil.which("swaks") is None:
            pytest.fail("swaks is not installed (the README's example needs it)")
        run(swaks.replace("-p 2525", f"-p {port}"), server)
        confirm = f"{sys.executable} {ROOT}/scripts/mail.py read carol@example.org confirm"
        assert "signed up for the account carol" in run(confirm, server)
        listed = run(admin, server)
        assert "alice-bob" in listed and "Accasta Board 1 - alice to move" in listed
    finally:
        server.stop()
