"""``contrib/pbm.service``: systemd finds nothing wrong with it, and its ExecStart runs a server.

``systemd-analyze verify`` (Debian's systemd package; ``make test`` installs it)
checks the unit with its binary path pointed at this installation's ``pbm``
(verify wants the program to exist). Then the ExecStart line, as the unit
writes it with only the program and the config file swapped for the test's,
is started with the unit's Environment= and answers mail; the unit's
KillSignal stops it cleanly within TimeoutStopSec.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mailserver import LISTENING, PbmServer, Sink

UNIT = Path(__file__).parent.parent / "contrib" / "pbm.service"
PBM = Path(sys.executable).parent / "pbm"  # this installation's console script


def unit_values(text: str) -> dict[str, list[str]]:
    """``Section.Key`` -> every value the unit gives it (a key may repeat)."""
    values: dict[str, list[str]] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        values.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return values


def exec_start(values: dict[str, list[str]], config: Path) -> list[str]:
    """The ExecStart command with its program and its --config value swapped for ours."""
    [line] = values["Service.ExecStart"]
    argv = shlex.split(line)
    assert Path(argv[0]).name == "pbm", argv
    argv[0] = str(PBM)
    at = argv.index("--config")
    argv[at + 1] = str(config)
    return argv


def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: apt-get install systemd (make test does)"
    text = UNIT.read_text(encoding="utf-8")
    program = shlex.split(unit_values(text)["Service.ExecStart"][0])[0]
    unit = tmp_path / "pbm.service"
    unit.write_text(text.replace(program, str(PBM)), encoding="utf-8")
    res = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False, timeout=60
    )
    assert (res.returncode, res.stderr) == (0, ""), res.stderr


def test_the_unit_is_hardened_and_restarts_on_failure() -> None:
    values = unit_values(UNIT.read_text(encoding="utf-8"))
    service = {k.removeprefix("Service."): v[-1] for k, v in values.items()}
    assert service["User"] == "pbm"
    assert service["Restart"] == "on-failure"
    for key in ("NoNewPrivileges", "PrivateTmp", "ProtectHome"):
        assert service[key] == "yes", key
    assert service["ProtectSystem"] == "strict"
    assert service["ReadWritePaths"] == "/var/lib/pbm"
    assert service["StateDirectory"] == "pbm"
    assert "StandardError" not in service  # stderr goes to the journal, systemd's default
    assert values["Install.WantedBy"] == ["multi-user.target"]


def test_the_exec_start_line_runs_a_server_that_answers(tmp_path: Path, sink: Sink) -> None:
    values = unit_values(UNIT.read_text(encoding="utf-8"))
    # The site as the admin sets it up: pbm init, then the relay and the listener.
    site = PbmServer(tmp_path, sink_port=sink.port)
    site.pbm("init")
    env = {k: v for k, v in site.env().items() if k != "PBM_CONFIG"}  # the unit names it
    for assignment in values.get("Service.Environment", []):
        for pair in shlex.split(assignment):
            key, _, value = pair.partition("=")
            env[key] = value
    proc = subprocess.Popen(
        exec_start(values, site.config_path),
        env=env,
        cwd="/",  # systemd starts services in /
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = LISTENING.search(line)
        assert found is not None, (line, proc.stderr.read() if proc.returncode else "")
        site.port = int(found["port"])
        site.send("someone@example.org", "help")
        assert "help" in sink.wait_for("someone@example.org").get("Subject", "").lower()
    finally:
        kill = getattr(signal, values["Service.KillSignal"][0])
        proc.send_signal(kill)
        timeout = float(values["Service.TimeoutStopSec"][0])
        code = proc.wait(timeout=timeout)
        assert proc.stderr is not None
        log = proc.stderr.read()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()
    assert code == 0, log
    assert " INFO pbm.server: listening: " in log  # its log went to stderr, for the journal


@pytest.fixture(autouse=True)
def _no_pbm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("PBM_")]:
        monkeypatch.delenv(name)
