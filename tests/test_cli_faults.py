"""The command line's one error path, as an admin meets it: real ``pbm`` processes.

Every config or database fault is one line on stderr and exit status 1, the
database URL shown without its password; ``--debug`` shows the traceback. The
config is found on its search path; a config file named but missing is an
error naming it; commands that only read create nothing; ``pbm init`` writes
the config readable by its owner only; ``pbm --version`` says the installed
version. PostgreSQL is optional: without psycopg a SQLite site works.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbm.cli import main

ROOT = Path(__file__).parent.parent
CLOSED = "postgresql+psycopg://pbm:s3cretpw@127.0.0.1:1/pbm"  # nothing listens on port 1
SHOWN = "postgresql+psycopg://pbm:***@127.0.0.1:1/pbm"
READ_ONLY = (
    ("game", "list"),
    ("game", "show", "1"),
    ("player", "list"),
    ("ratings",),
    ("status",),
    ("clock", "status"),
    ("outbox", "list"),
)


def pbm(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    python: tuple[str, ...] = ("-m", "pbm"),
) -> subprocess.CompletedProcess[str]:
    """Run ``pbm ARGS`` in ``cwd`` with no PBM_* variable but those in ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PBM_")}
    return subprocess.run(
        [sys.executable, *python, *args],
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def in_process(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``pbm ARGS`` run by click's runner in this process (faster; the same error path)."""
    assert Path.cwd() == cwd  # the test has changed into it (monkeypatch.chdir)
    clean = {k: None for k in os.environ if k.startswith("PBM_")}
    result = CliRunner().invoke(main, list(args), env={**clean, **(env or {})})
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def one_line_error(res: subprocess.CompletedProcess[str], says: str) -> str:
    """The single stderr line of a failed command, which must contain ``says``."""
    assert res.returncode == 1, (res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("Error: ") and says in lines[0], lines[0]
    return lines[0]


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_version_comes_from_the_package_metadata(tmp_path: Path) -> None:
    res = pbm("--version", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"pbm {metadata.version('pbm')}\n"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert res.stdout == f"pbm {project['version']}\n"
    # Written once: no other file of the package carries the version.
    for path in (ROOT / "pbm").rglob("*.py"):
        assert f'"{project["version"]}"' not in path.read_text(encoding="utf-8"), path


def test_a_named_config_file_that_is_missing_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent.toml"
    for args, env in (
        (("--config", str(missing), "game", "list"), {}),
        (("status",), {"PBM_CONFIG": str(missing)}),
        (("--config", str(missing), "serve"), {}),
    ):
        res = pbm(*args, cwd=tmp_path, env=env)
        one_line_error(res, f"config file {missing} not found")
    assert files_under(tmp_path) == []


def test_the_config_search_path(tmp_path: Path) -> None:
    """``--config``, else ``$PBM_CONFIG``, else ``./pbm.toml`` (before ``/etc/pbm/pbm.toml``)."""
    here = tmp_path / "pbm.toml"
    res = pbm("--config", str(here), "init", "--address", "pbm@pbm.test", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(here.stat().st_mode) == 0o600
    assert tomllib.loads(here.read_text(encoding="utf-8"))["mail"]["address"] == "pbm@pbm.test"
    # Nothing named: ./pbm.toml (no web site running to ask: web.listen empty).
    res = pbm("status", "--json", cwd=tmp_path, env={"PBM_WEB_LISTEN": ""})
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["database"] == f"sqlite:///{tmp_path / 'data' / 'pbm.sqlite3'}"
    # $PBM_CONFIG wins over ./pbm.toml, and --config over both.
    other = tmp_path / "other" / "pbm.toml"
    data_dir = tmp_path / "var" / "pbm"
    res = pbm("init", "--data-dir", str(data_dir), cwd=tmp_path, env={"PBM_CONFIG": str(other)})
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(other.stat().st_mode) == 0o600
    assert tomllib.loads(other.read_text(encoding="utf-8"))["server"]["data_dir"] == str(data_dir)
    named = (("status", "--json"), {"PBM_CONFIG": str(other)})
    both = (("--config", str(other), "status", "--json"), {"PBM_CONFIG": str(here)})
    for args, env in (named, both):
        res = pbm(*args, cwd=tmp_path, env=env)
        assert json.loads(res.stdout)["database"] == f"sqlite:///{data_dir / 'pbm.sqlite3'}"


def test_init_writes_the_config_0600_even_with_a_lax_umask(tmp_path: Path) -> None:
    res = pbm(
        "init",
        cwd=tmp_path,
        env={"PBM_CONFIG": str(tmp_path / "pbm.toml")},
        python=("-c", "import os; os.umask(0); from pbm.cli import run; run()"),
    )
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE((tmp_path / "pbm.toml").stat().st_mode) == 0o600
    assert "readable by others" in pbm("init", cwd=tmp_path, env=_lax(tmp_path)).stderr


def _lax(tmp_path: Path) -> dict[str, str]:
    """A config file readable by everyone, named by $PBM_CONFIG."""
    path = tmp_path / "lax.toml"
    path.write_text("", encoding="utf-8")
    path.chmod(0o644)
    return {"PBM_CONFIG": str(path)}


@pytest.mark.parametrize("args", [*READ_ONLY, ("tick",), ("db", "upgrade"), ("init",)])
def test_an_unreachable_database_is_one_line_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbm.toml").write_text("", encoding="utf-8")
    (tmp_path / "pbm.toml").chmod(0o600)
    env = {"PBM_DATABASE_URL": CLOSED}
    line = one_line_error(in_process(*args, cwd=tmp_path, env=env), f"database {SHOWN}: ")
    assert "s3cretpw" not in line
    assert "Connection refused" in line


def test_serve_with_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    env = {"PBM_DATABASE_URL": CLOSED, "PBM_MAIL_SECRET": "s"}
    line = one_line_error(pbm("serve", cwd=tmp_path, env=env), f"database {SHOWN}: ")
    assert "s3cretpw" not in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    env = {"PBM_DATABASE_URL": CLOSED}
    res = pbm("--debug", "game", "list", cwd=tmp_path, env=env)
    assert res.returncode == 1
    assert "Traceback (most recent call last)" in res.stderr
    assert "OperationalError" in res.stderr


def test_a_bad_config_value_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbm.toml").write_text("[server]\nmail_attempts = -1.5\n", encoding="utf-8")
    one_line_error(
        in_process("status", cwd=tmp_path), "server.mail_attempts must be a whole number"
    )
    (tmp_path / "pbm.toml").write_text("[server\n", encoding="utf-8")
    one_line_error(in_process("game", "list", cwd=tmp_path), str(tmp_path / "pbm.toml"))
    env = {"PBM_DATABASE_URL": "not a url"}
    (tmp_path / "pbm.toml").write_text("", encoding="utf-8")
    one_line_error(in_process("game", "list", cwd=tmp_path, env=env), "database.url")


NO_PSYCOPG = (
    "-c",
    # What a site installed without the extra pbm[postgres] has: no psycopg to import.
    "import sys; sys.modules['psycopg'] = None; from pbm.cli import run; run()",
)


def test_a_sqlite_site_needs_no_psycopg(tmp_path: Path) -> None:
    named = {"PBM_CONFIG": str(tmp_path / "pbm.toml"), "PBM_WEB_LISTEN": ""}  # no site to ask
    for args in (("init",), ("status",), ("game", "list")):
        res = pbm(*args, cwd=tmp_path, env=named, python=NO_PSYCOPG)
        assert res.returncode == 0, res.stderr
    env = {**named, "PBM_DATABASE_URL": CLOSED}
    line = one_line_error(
        pbm("game", "list", cwd=tmp_path, env=env, python=NO_PSYCOPG), "pbm[postgres]"
    )
    assert SHOWN in line


def test_init_makes_the_database_and_its_wal_files_private_even_with_a_lax_umask(
    tmp_path: Path,
) -> None:
    """The SQLite file holds received mail (passwords in it): 0600, and SQLite gives its
    -wal and -shm files the same mode."""
    lax = ("-c", "import os; os.umask(0); from pbm.cli import run; run()")
    env = {"PBM_CONFIG": str(tmp_path / "pbm.toml")}
    assert pbm("init", cwd=tmp_path, env=env, python=lax).returncode == 0
    db = tmp_path / "data" / "pbm.sqlite3"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    # A connection that stays open keeps the -wal and -shm files there to look at.
    probe = (
        "-c",
        "import os, sqlite3, stat, sys; os.umask(0); c = sqlite3.connect(sys.argv[1]); "
        "c.execute('PRAGMA journal_mode=WAL'); c.execute('CREATE TABLE IF NOT EXISTS t (x)'); "
        "c.execute('INSERT INTO t VALUES (1)'); c.commit(); "
        "print(*(oct(stat.S_IMODE(os.stat(sys.argv[1] + s).st_mode)) for s in ('-wal', '-shm')))",
        str(db),
    )
    modes = subprocess.run(
        [sys.executable, *probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert modes == ["0o600", "0o600"]
    db.chmod(0o666)
    (tmp_path / "pbm.toml").chmod(0o666)
    warned = pbm("init", cwd=tmp_path, env=env).stderr
    assert f"{tmp_path / 'pbm.toml'} is readable by others (mode 666)" in warned
    assert f"{db} is readable by others (mode 666)" in warned


def test_the_first_hour_at_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36, point 13, as a newcomer met it: outside the project folder ``pbm status``
    said only "no pbm database at sqlite:////tmp/data/pbm.sqlite3"; an unknown player was
    answered with the mail command "signup UID PW"; ``pbm archive --format pgn`` of
    Accasta games archived 0 games and exited 0."""
    monkeypatch.chdir(tmp_path)
    elsewhere = {"PBM_WEB_LISTEN": ""}
    for args in (("status",), ("game", "list"), ("serve",)):
        line = one_line_error(in_process(*args, cwd=tmp_path, env=elsewhere), "pbm.toml")
        assert line.startswith(
            f"Error: no pbm.toml found (looked for {tmp_path / 'pbm.toml'} and "
            "/etc/pbm/pbm.toml; --config FILE or $PBM_CONFIG names one), and "
        ), line
        assert line.endswith(
            "run pbm in the folder of its pbm.toml, or `pbm init` to make one here"
        )
    assert files_under(tmp_path) == []  # nothing made by looking
    assert in_process("init", cwd=tmp_path).returncode == 0
    # The admin adds players; the mail's "signup UID PW" is not his.
    for uid in ("alice", "bob"):
        added = in_process("player", "add", uid, f"{uid}@x.org", "--password", "pw", cwd=tmp_path)
        assert added.returncode == 0, added.stderr
    for args in (("player", "show", "nobody"), ("game", "create", "accasta", "alice", "nobody")):
        line = one_line_error(in_process(*args, cwd=tmp_path), "nobody")
        assert line.endswith(
            "There is no player 'nobody'; add one with: pbm player add nobody EMAIL"
        )
    # A format that fits none of the games to archive: a line that says so, exit status 1.
    in_process("game", "create", "accasta", "alice", "bob", cwd=tmp_path)
    in_process("game", "move", "1", "alice", "resign", cwd=tmp_path)
    res = in_process("archive", "--format", "pgn", cwd=tmp_path)
    assert res.returncode == 1 and res.stderr.splitlines()[-1].startswith(
        "Error: no game archived as pgn: Accasta has no pgn records (board 1); formats: text "
        "and json for every game; pgn for Chess"
    )
    res = in_process("archive", "--format", "text", cwd=tmp_path)
    assert res.returncode == 0 and "1 game(s) archived" in res.stderr
    res = in_process("archive", "--format", "text", cwd=tmp_path)
    assert res.returncode == 0 and res.stderr.splitlines()[-1] == (
        f"0 games archived: every game that ended has its text record in "
        f"{tmp_path / 'data' / 'archive'} already"
    )


def test_every_command_s_short_help_fits_an_80_column_terminal() -> None:
    """Issue 36, point 13: ``pbm --help`` and each group's cut descriptions off with "..."."""
    import click

    def groups(group: click.Group, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = [path]
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                found += groups(command, (*path, name))
        return found

    for path in groups(main, ()):
        result = CliRunner().invoke(main, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, result.output
        listed = result.output.split("Commands:\n", 1)[1]
        assert "..." not in listed, (path, listed)
        assert all(len(line) <= 80 for line in listed.splitlines()), listed
