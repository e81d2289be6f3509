"""The configuration: defaults, the TOML file, PBM_* variables, refusals, the shipped file."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pbm import config
from pbm.config import Config, ConfigError

ROOT = Path(__file__).parent.parent
SHIPPED = ROOT / "config" / "pbm.toml"
PACKAGED = ROOT / "pbm" / "default_config.toml"


def sections() -> dict[str, type]:
    """Every section of ``Config``: its name and dataclass."""
    out = {}
    for f in dataclasses.fields(Config):
        if f.name != "path":
            out[f.name] = type(getattr(Config(), f.name))
    return out


def load_text(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Config:
    path = tmp_path / "pbm.toml"
    path.write_text(text, encoding="utf-8")
    return config.load(path, env=env or {})


# ---------------------------------------------------------------- defaults


def test_defaults_without_a_file(tmp_path: Path) -> None:
    cfg = config.load(tmp_path / "absent.toml", env={})
    assert cfg.path == (tmp_path / "absent.toml").resolve()
    assert dataclasses.replace(cfg, path=None) == Config()
    assert cfg.server.data_dir == "data"
    assert cfg.smtp.listen == "127.0.0.1:2525"
    assert cfg.smtp.max_message_bytes == 1_048_576
    assert cfg.mail.address == "pbm@localhost"
    assert cfg.mail.secret == ""
    assert cfg.outbound.transport == "maildir"
    assert cfg.outbound.starttls is False
    assert cfg.outbound.retry_base_seconds == 30.0
    assert cfg.clock.nag_days == 7
    assert cfg.clock.forfeit_days == 21
    # The embedded SQLite file and the Maildir live in data/ next to the config file.
    assert cfg.database_url == f"sqlite:///{tmp_path / 'data' / 'pbm.sqlite3'}"
    assert cfg.maildir_path == tmp_path / "data" / "outbox"


def test_config_path_explicit_then_variable_then_the_search_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, etc = tmp_path / "pbm.toml", tmp_path / "etc" / "pbm.toml"
    search = (here, etc)
    # None there: the first of the search path, for pbm init to write.
    assert config.locate(env={}, search=search) == config.Located(here, named=False)
    etc.parent.mkdir()
    etc.write_text("")
    assert config.locate(env={}, search=search) == config.Located(etc, named=False)
    here.write_text("")
    assert config.locate(env={}, search=search) == config.Located(here, named=False)
    env = {"PBM_CONFIG": str(tmp_path / "env.toml")}
    assert config.locate(env=env, search=search) == config.Located(tmp_path / "env.toml", True)
    flag = tmp_path / "flag.toml"
    assert config.locate(flag, env=env, search=search) == config.Located(flag, named=True)
    # The process's own: --config, else $PBM_CONFIG.
    monkeypatch.setenv("PBM_CONFIG", str(tmp_path / "env.toml"))
    assert config.config_path() == tmp_path / "env.toml"
    assert config.config_path(flag) == flag
    assert (Path("pbm.toml"), Path("/etc/pbm/pbm.toml")) == config.SEARCH_PATH


def test_a_named_file_must_exist(tmp_path: Path) -> None:
    missing = config.Located(tmp_path / "nope.toml", named=True)
    with pytest.raises(ConfigError, match=f"config file {missing.path} not found"):
        config.load_located(missing, env={})
    found = config.load_located(config.Located(tmp_path / "nope.toml", named=False), env={})
    assert dataclasses.replace(found, path=None) == Config()


# ---------------------------------------------------------------- the file


def test_values_from_the_file(tmp_path: Path) -> None:
    cfg = load_text(
        tmp_path,
        """
        [database]
        url = "postgresql+psycopg://pbm@db.example.org/pbm"
        [smtp]
        listen = "[::1]:25"
        max_message_bytes = 2048
        [mail]
        address = "games@example.org"
        secret = "s"
        [outbound]
        transport = "smtp"
        starttls = true
        retry_base_seconds = 5
        [clock]
        nag_days = 3
        """,
    )
    assert cfg.database_url == "postgresql+psycopg://pbm@db.example.org/pbm"
    assert cfg.listen_host_port == ("::1", 25)
    assert cfg.smtp.max_message_bytes == 2048
    assert (cfg.mail.address, cfg.mail.secret) == ("games@example.org", "s")
    assert (cfg.outbound.transport, cfg.outbound.starttls) == ("smtp", True)
    assert cfg.outbound.retry_base_seconds == 5.0
    assert isinstance(cfg.outbound.retry_base_seconds, float)
    assert cfg.clock.nag_days == 3
    assert cfg.clock.forfeit_days == 21  # untouched keys keep their defaults


def test_a_broken_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"pbm\.toml"):
        load_text(tmp_path, "[mail\naddress = 1\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[mial]\naddress = 'x@example.org'\n", "unknown config section(s): mial"),
        ("[mail]\nadress = 'x@example.org'\n", "unknown key(s) in [mail]: adress; known: "),
        ("mail = 'x@example.org'\n", "[mail] must be a table"),
        ("[outbound]\nmax_attempts = 'many'\n", "outbound.max_attempts must be a whole number"),
        ("[outbound]\nmax_attempts = true\n", "outbound.max_attempts must be a whole number"),
        ("[outbound]\nmax_attempts = 1.7\n", "outbound.max_attempts must be a whole number"),
        ("[outbound]\nretry_base_seconds = true\n", "outbound.retry_base_seconds must be a number"),
        ("[outbound]\nstarttls = 1\n", "outbound.starttls must be true or false, not 1"),
        ("[mail]\naddress = 5\n", "mail.address must be a string, not 5"),
        ("[server]\ndata_dir = ['a']\n", "server.data_dir must be a string"),
    ],
)
def test_the_file_refuses_what_it_cannot_use(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_text(tmp_path, text)
    assert message in str(exc.value)


def test_unknown_key_message_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_text(tmp_path, "[clock]\nnag = 3\n")
    known = ", ".join(sorted(f.name for f in dataclasses.fields(config.ClockConfig)))
    assert str(exc.value) == f"unknown key(s) in [clock]: nag; known: {known}"


def test_bad_listen_address(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, "[smtp]\nlisten = '2525'\n")
    with pytest.raises(ConfigError, match=r"smtp\.listen must be HOST:PORT"):
        _ = cfg.listen_host_port


def test_a_retired_key_is_accepted_and_means_nothing(tmp_path: Path) -> None:
    """A site's file from before may still name ``server.inbox_workers``."""
    assert load_text(tmp_path, "[server]\ninbox_workers = 2\n").server.mail_attempts == 3


# ---------------------------------------------------------------- the environment


def test_variables_override_the_file_with_coercion(tmp_path: Path) -> None:
    env = {
        "PBM_DATABASE_URL": "postgresql+psycopg://pbm@127.0.0.1/pbm",
        "PBM_SMTP_MAX_MESSAGE_BYTES": "4096",
        "PBM_MAIL_ADDRESS": "env@example.org",
        "PBM_OUTBOUND_STARTTLS": "yes",
        "PBM_OUTBOUND_RETRY_BASE_SECONDS": "0.5",
        "PBM_CLOCK_NAG_DAYS": " 2 ",
        "PBM_SERVER_LOG_LEVEL": "DEBUG",
        "OTHER_MAIL_ADDRESS": "ignored@example.org",
    }
    cfg = load_text(
        tmp_path, "[mail]\naddress = 'file@example.org'\nsecret = 'from-file'\n", env=env
    )
    assert cfg.database_url == "postgresql+psycopg://pbm@127.0.0.1/pbm"
    assert cfg.smtp.max_message_bytes == 4096
    assert cfg.mail.address == "env@example.org"
    assert cfg.mail.secret == "from-file"
    assert cfg.outbound.starttls is True
    assert cfg.outbound.retry_base_seconds == 0.5
    assert cfg.clock.nag_days == 2
    assert cfg.server.log_level == "DEBUG"


@pytest.mark.parametrize(
    ("word", "value"),
    [("1", True), ("true", True), ("ON", True), ("0", False), ("no", False), ("", False)],
)
def test_boolean_words(tmp_path: Path, word: str, value: bool) -> None:
    cfg = load_text(tmp_path, "[outbound]\nstarttls = true\n", {"PBM_OUTBOUND_STARTTLS": word})
    assert cfg.outbound.starttls is value


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("PBM_SMTP_MAX_MESSAGE_BYTES", "1MB", "PBM_SMTP_MAX_MESSAGE_BYTES must be a whole number"),
        ("PBM_OUTBOUND_STARTTLS", "maybe", "PBM_OUTBOUND_STARTTLS must be true or false"),
        ("PBM_OUTBOUND_RETRY_BASE_SECONDS", "soon", "must be a number, not 'soon'"),
    ],
)
def test_bad_variables_name_themselves(tmp_path: Path, name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_text(tmp_path, "", {name: value})
    assert message in str(exc.value)


def test_load_reads_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PBM_MAIL_FROM_NAME", "Games Room")
    path = tmp_path / "pbm.toml"
    path.write_text("", encoding="utf-8")
    assert config.load(path).mail.from_name == "Games Room"


# ---------------------------------------------------------------- relative paths


def test_relative_paths_are_taken_from_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (etc / "pbm.toml").write_text(
        '[server]\ndata_dir = "../var/pbm"\n[outbound]\nmaildir = "mail"\n', encoding="utf-8"
    )
    cfg = config.load(Path("..") / "etc" / "pbm.toml", env={})
    assert cfg.base_dir == etc
    assert cfg.data_path == tmp_path / "var" / "pbm"
    assert cfg.database_url == f"sqlite:///{tmp_path / 'var' / 'pbm' / 'pbm.sqlite3'}"
    assert cfg.maildir_path == etc / "mail"


def test_absolute_paths_stay(tmp_path: Path) -> None:
    cfg = load_text(
        tmp_path, f'[server]\ndata_dir = "{tmp_path / "abs"}"\n[outbound]\nmaildir = "/srv/mail"\n'
    )
    assert cfg.data_path == tmp_path / "abs"
    assert cfg.maildir_path == Path("/srv/mail")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///games.sqlite3", "sqlite:///{etc}/games.sqlite3"),
        ("sqlite:///db/games.sqlite3?timeout=5", "sqlite:///{etc}/db/games.sqlite3?timeout=5"),
        ("sqlite+pysqlite:///g.db", "sqlite+pysqlite:///{etc}/g.db"),
        ("sqlite:////srv/pbm.sqlite3", "sqlite:////srv/pbm.sqlite3"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("sqlite://", "sqlite://"),
        ("postgresql+psycopg://pbm@host/pbm", "postgresql+psycopg://pbm@host/pbm"),
    ],
)
def test_a_relative_sqlite_url_is_taken_from_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, expected: str
) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    monkeypatch.chdir(tmp_path)
    (etc / "pbm.toml").write_text(f'[database]\nurl = "{url}"\n', encoding="utf-8")
    cfg = config.load(etc / "pbm.toml", env={})
    assert cfg.database_url == expected.format(etc=etc)


# ---------------------------------------------------------------- the shipped file


def test_the_shipped_file_is_the_packaged_template() -> None:
    assert SHIPPED.read_bytes() == PACKAGED.read_bytes()


def test_the_shipped_file_has_every_key_with_its_default() -> None:
    data: dict[str, Any] = tomllib.loads(SHIPPED.read_text(encoding="utf-8"))
    expected = sections()
    assert set(data) == set(expected)
    for name, cls in expected.items():
        keys = {f.name for f in dataclasses.fields(cls)}
        assert set(data[name]) == keys, name
    cfg = config.from_mapping(data, env={})
    assert cfg == Config()


def test_every_key_of_the_shipped_file_is_documented() -> None:
    """Each key line (or group of key lines) follows a comment, and every section opens with one."""
    lines = SHIPPED.read_text(encoding="utf-8").splitlines()
    key_line = re.compile(r"^(\w+)\s*=")
    seen = set()
    section = ""
    for i, line in enumerate(lines):
        if line.startswith("["):
            section = line.strip("[]")
            continue
        m = key_line.match(line)
        if not m:
            continue
        seen.add(f"{section}.{m.group(1)}")
        j = i - 1
        while j >= 0 and key_line.match(lines[j]):
            j -= 1
        assert j >= 0 and lines[j].startswith("#"), f"{section}.{m.group(1)} has no comment"
    every = {f"{s}.{f.name}" for s, cls in sections().items() for f in dataclasses.fields(cls)}
    assert seen == every


def test_every_variable_name_is_the_section_and_key(tmp_path: Path) -> None:
    """PBM_SECTION_NAME reaches every key (checked with a value of the key's own type)."""
    samples: dict[type, tuple[str, Any]] = {
        bool: ("true", True),
        int: ("7777", 7777),
        float: ("7.5", 7.5),
        str: ("from-env", "from-env"),
    }
    # A key that takes one of a few words gets one of them.
    words = {
        "smtp.protocol": "lmtp",
        "outbound.transport": "smtp",
        "clock.time_control": "days 3",
        "clock.reminder_hours": "48, 2",
    }
    for name, cls in sections().items():
        for f in dataclasses.fields(cls):
            default = getattr(getattr(Config(), name), f.name)
            text, value = samples[type(default)]
            if f"{name}.{f.name}" in words:
                text = value = words[f"{name}.{f.name}"]
            cfg = load_text(tmp_path, "", {f"PBM_{name.upper()}_{f.name.upper()}": text})
            assert getattr(getattr(cfg, name), f.name) == value, f"{name}.{f.name}"


def test_init_template_has_a_fresh_secret_and_the_address() -> None:
    a, b = config.new_secret(), config.new_secret()
    assert a != b
    assert len(a) >= 40
    text = config.default_file_text(a, "games@example.org")
    cfg = config.from_mapping(tomllib.loads(text), env={})
    assert cfg.mail.secret == a
    assert cfg.mail.address == "games@example.org"
    assert dataclasses.replace(cfg, mail=Config().mail) == Config()
    # Only those two lines differ from the shipped file.
    diff = [
        (x, y) for x, y in zip(text.splitlines(), SHIPPED.read_text().splitlines(), strict=True)
    ]
    assert [x for x, y in diff if x != y] == [
        'address = "games@example.org"',
        f'secret = "{a}"',
    ]
