"""The configuration: TOML with defaults, overridden by ``PBM_*`` variables.

Every key is documented in ``config/pbm.toml``. A key ``section.name`` is
overridden by the environment variable ``PBM_SECTION_NAME`` (``PBM_MAIL_ADDRESS``,
``PBM_DATABASE_URL``). Relative paths are taken from the config file's folder.

The file is found by ``locate``: the one named (``--config``, else
``$PBM_CONFIG``), which must exist, else the first of ``SEARCH_PATH`` that does.
"""

from __future__ import annotations

import errno
import os
import secrets
import tomllib
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from pbm.timecontrol import BadTimeControl, TimeControl
from pbm.timecontrol import parse as parse_time_control

DEFAULT_CONFIG_PATH = "pbm.toml"
# Where a config file is looked for when none is named, in order.
SEARCH_PATH = (Path(DEFAULT_CONFIG_PATH), Path("/etc/pbm/pbm.toml"))


# Keys of earlier versions that mean nothing now: a site's file may still name them.
RETIRED = {"server": {"inbox_workers"}}


class ConfigError(ValueError):
    """A config file or variable that cannot be used; says which key and why."""


class CannotListen(OSError):
    """A listen address that cannot be had (the port taken by another program, a folder
    missing): one line that says where, under which config key (``key``), and why."""

    def __init__(self, key: str, where: str, exc: OSError) -> None:
        # asyncio words a taken port at length ("error while attempting to bind on
        # address ('127.0.0.1', 2525): address already in use"): one wording for both.
        taken = exc.errno == errno.EADDRINUSE
        reason = "address already in use" if taken else (exc.strerror or str(exc))
        super().__init__(exc.errno, f"cannot listen on {where} ({key}): {reason}")
        self.key = key
        self.taken = taken

    def __str__(self) -> str:
        return str(self.strerror)


@dataclass(frozen=True)
class DatabaseConfig:
    url: str = ""  # empty: SQLite file pbm.sqlite3 in server.data_dir


@dataclass(frozen=True)
class ServerConfig:
    data_dir: str = "data"
    log_level: str = "INFO"
    tick_seconds: int = 60
    process_inbox: bool = True
    keep_raw_days: int = 7
    mail_attempts: int = 3


@dataclass(frozen=True)
class SmtpConfig:
    protocol: str = "smtp"  # or "lmtp", behind a mail server
    listen: str = "127.0.0.1:2525"
    hostname: str = ""
    max_message_bytes: int = 1_048_576
    max_recipients: int = 100
    connections_per_minute: int = 60
    messages_per_minute: int = 60
    tls_cert: str = ""
    tls_key: str = ""


@dataclass(frozen=True)
class MailConfig:
    address: str = "pbm@localhost"
    from_name: str = "PBM Server"
    secret: str = ""


@dataclass(frozen=True)
class OutboundConfig:
    transport: str = "maildir"
    maildir: str = ""  # empty: outbox/ in server.data_dir
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 25
    starttls: bool = False
    username: str = ""
    password: str = ""
    max_attempts: int = 20
    retry_base_seconds: float = 30.0
    poll_seconds: float = 10.0


@dataclass(frozen=True)
class LimitsConfig:
    error_replies_per_hour: int = 10
    answers_per_address_per_hour: int = 20
    player_error_replies_per_hour: int = 30
    player_answers_per_hour: int = 60
    stranger_answers_per_day: int = 1
    confirmations_per_day: int = 1
    password_resets_per_day: int = 3
    challenge_mails_per_hour: int = 1
    boards_followed: int = 10
    commands_per_mail: int = 20
    password_failures: int = 5
    password_lockout_minutes: int = 15


@dataclass(frozen=True)
class ClockConfig:
    nag_days: int = 7
    forfeit_days: int = 21
    vacation_days_per_year: int = 30
    # A new board's time control (``pbm.timecontrol``); "": classic with the days above.
    time_control: str = ""
    # A time bank's reminders: the hours left at which one is sent, once each.
    reminder_hours: str = "24, 1"
    # A player whose time runs out spends a vacation day of his own, while he has any.
    spend_vacation: bool = True
    # Days a challenge waits for its answer before it lapses.
    challenge_days: int = 7

    @property
    def reminders(self) -> tuple[timedelta, ...]:
        """``reminder_hours`` as times, the largest first."""
        hours = (h.strip() for h in self.reminder_hours.split(","))
        return tuple(sorted((timedelta(hours=float(h)) for h in hours if h), reverse=True))

    def default_control(self) -> TimeControl:
        """A new board's time control when the challenge names none."""
        if self.time_control.strip():
            return parse_time_control(self.time_control)
        return TimeControl.classic(self.nag_days, self.forfeit_days)


@dataclass(frozen=True)
class StatusConfig:
    max_wait_minutes: int = 15
    failed_within_hours: int = 24


@dataclass(frozen=True)
class WebConfig:
    listen: str = "127.0.0.1:8080"  # empty: no web site
    base_url: str = ""  # e.g. https://games.example.org: mails link to the boards' pages
    workers: int = 1  # processes answering visitors
    hosts: str = ""  # more names visitors may ask for (Host), comma-separated
    header_timeout_seconds: float = 10.0  # the most a request's headers may take to come
    connections_per_address: int = 64  # open connections of one client address; 0: any

    @property
    def host_names(self) -> tuple[str, ...]:
        """``hosts`` as names, lower case."""
        return tuple(h.strip().lower() for h in self.hosts.replace(" ", ",").split(",") if h)

    @property
    def host_port(self) -> tuple[str, int]:
        """``listen`` as (host, port); ``ConfigError`` for a value of another form."""
        host, _, port = self.listen.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"web.listen must be HOST:PORT, not {self.listen!r}")
        return host.strip("[]"), int(port)

    @property
    def base(self) -> str:
        """The site's address as absolute links name it, in its pages and in mail:
        ``base_url``, else the listen address (``localhost`` for one that listens on every
        address); never a request's Host. "" when there is no site (both empty)."""
        if self.base_url.strip():
            return self.base_url.strip().rstrip("/")
        if not self.listen.strip():
            return ""
        host, _, port = self.listen.rpartition(":")
        host = host.strip("[]")
        if host in ("", "0.0.0.0", "::"):
            host = "localhost"
        netloc = f"[{host}]" if ":" in host else host
        return f"http://{netloc}:{port}" if port.isdigit() else f"http://{netloc}"


@dataclass(frozen=True)
class ComputerConfig:
    userid: str = "computer"  # the computer player's account; empty: no computer player
    seconds_per_move: float = 60.0  # the most it thinks about one move
    games_per_player: int = 3  # active games a person may have against it
    seconds_per_hour: float = 1800.0  # its thinking on the whole site, an hour at most

    @property
    def account(self) -> str | None:
        """Its account's userid as accounts are kept (lower case); None: no computer
        player on this site."""
        return self.userid.strip().lower() or None

    @property
    def address(self) -> str:
        """Its mail address, where no mail is ever delivered (RFC 2606 ``.invalid``):
        it reads none, so none is sent it; "" when the site has no computer player."""
        return f"{self.account}@computer.invalid" if self.account else ""


@dataclass(frozen=True)
class Config:
    """The whole configuration; ``path`` is the file it came from, if any."""

    database: DatabaseConfig = field(default_factory=DatabaseConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    smtp: SmtpConfig = field(default_factory=SmtpConfig)
    mail: MailConfig = field(default_factory=MailConfig)
    outbound: OutboundConfig = field(default_factory=OutboundConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    clock: ClockConfig = field(default_factory=ClockConfig)
    status: StatusConfig = field(default_factory=StatusConfig)
    web: WebConfig = field(default_factory=WebConfig)
    computer: ComputerConfig = field(default_factory=ComputerConfig)
    path: Path | None = None

    @property
    def base_dir(self) -> Path:
        """The folder relative paths are taken from."""
        return self.path.parent if self.path is not None else Path.cwd()

    @property
    def data_path(self) -> Path:
        return (self.base_dir / self.server.data_dir).resolve()

    @property
    def database_url(self) -> str:
        """The SQLAlchemy URL; the embedded SQLite file unless one is set."""
        if self.database.url:
            return _sqlite_from(self.database.url, self.base_dir)
        return f"sqlite:///{self.data_path / 'pbm.sqlite3'}"

    @property
    def maildir_path(self) -> Path:
        if self.outbound.maildir:
            return (self.base_dir / self.outbound.maildir).resolve()
        return self.data_path / "outbox"

    @property
    def listen_unix_path(self) -> Path | None:
        """The unix socket of ``smtp.listen = "unix:/PATH"``, or None for HOST:PORT."""
        if not self.smtp.listen.startswith("unix:"):
            return None
        return (self.base_dir / self.smtp.listen.removeprefix("unix:")).resolve()

    @property
    def listen_host_port(self) -> tuple[str, int]:
        host, _, port = self.smtp.listen.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(
                f"smtp.listen must be HOST:PORT or unix:/PATH, not {self.smtp.listen!r}"
            )
        return host.strip("[]"), int(port)


def _sqlite_from(url: str, base_dir: Path) -> str:
    """A relative SQLite file in ``url`` taken from ``base_dir``, like every relative path."""
    scheme, sep, rest = url.partition(":///")
    if not sep or not scheme.startswith("sqlite"):
        return url
    file, q, query = rest.partition("?")
    if not file or file == ":memory:" or file.startswith("file:") or Path(file).is_absolute():
        return url
    return f"{scheme}:///{(base_dir / file).resolve()}{q}{query}"


_SECTIONS = (
    "database",
    "server",
    "smtp",
    "mail",
    "outbound",
    "limits",
    "clock",
    "status",
    "web",
    "computer",
)


def _coerce(key: str, value: Any, default: Any) -> Any:
    """Turn a TOML or environment value into the type of the default."""
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"):
            return True
        if isinstance(value, str) and value.lower() in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"{key} must be true or false, not {value!r}")
    # true is an int to Python, and int(1.7) would quietly make it 1: refuse both.
    if isinstance(default, int):
        try:
            if isinstance(value, bool | float):
                raise ValueError(value)
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key} must be a whole number, not {value!r}") from None
    if isinstance(default, float):
        try:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key} must be a number, not {value!r}") from None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, not {value!r}")
    return value


def from_mapping(
    data: dict[str, Any], env: dict[str, str] | None = None, path: Path | None = None
) -> Config:
    """Build a Config from parsed TOML and environment overrides."""
    env = dict(os.environ) if env is None else env
    unknown = set(data) - set(_SECTIONS)
    if unknown:
        raise ConfigError(f"unknown config section(s): {', '.join(sorted(unknown))}")
    sections: dict[str, Any] = {}
    base = Config()
    for name in _SECTIONS:
        section = getattr(base, name)
        given = data.get(name, {})
        if not isinstance(given, dict):
            raise ConfigError(f"[{name}] must be a table")
        known = {f.name for f in fields(section)}
        bad = set(given) - known - RETIRED.get(name, set())
        if bad:
            raise ConfigError(
                f"unknown key(s) in [{name}]: {', '.join(sorted(bad))}; "
                f"known: {', '.join(sorted(known))}"
            )
        values: dict[str, Any] = {}
        for f in fields(section):
            default = getattr(section, f.name)
            key = f"{name}.{f.name}"
            if f.name in given:
                values[f.name] = _coerce(key, given[f.name], default)
            env_name = f"PBM_{name.upper()}_{f.name.upper()}"
            if env_name in env:
                values[f.name] = _coerce(env_name, env[env_name], default)
        sections[name] = replace(section, **values)
    protocol = sections["smtp"].protocol
    if protocol not in ("smtp", "lmtp"):
        raise ConfigError(f'smtp.protocol must be "smtp" or "lmtp", not {protocol!r}')
    for key in ("keep_raw_days",):
        if getattr(sections["server"], key) < 0:
            raise ConfigError(f"server.{key} must be 0 or more")
    clock = sections["clock"]
    try:
        clock.default_control()
    except BadTimeControl as exc:
        raise ConfigError(f"clock.time_control: {exc}") from None
    try:
        if any(r <= timedelta(0) for r in clock.reminders):
            raise ValueError
    except ValueError:
        raise ConfigError(
            "clock.reminder_hours must be hours above 0, like "
            f'"24, 1", not {clock.reminder_hours!r}'
        ) from None
    if clock.challenge_days < 1:
        raise ConfigError("clock.challenge_days must be 1 or more")
    web = sections["web"]
    for host in web.host_names:
        # Starlette's TrustedHostMiddleware takes a name, or a wildcard "*.example.org".
        if "*" in host[1:] or (host.startswith("*") and not host.startswith("*.")):
            raise ConfigError(f'web.hosts: {host!r} is no name (a wildcard is "*.example.org")')
    if web.header_timeout_seconds <= 0:
        raise ConfigError("web.header_timeout_seconds must be above 0")
    if web.connections_per_address < 0:
        raise ConfigError("web.connections_per_address must be 0 (no limit) or more")
    return Config(**sections, path=path)


@dataclass(frozen=True)
class Located:
    """Where the config file is; ``named``: given by ``--config`` or ``$PBM_CONFIG``."""

    path: Path
    named: bool


def locate(
    explicit: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    search: tuple[Path, ...] = SEARCH_PATH,
) -> Located:
    """The config file: the explicit one, else $PBM_CONFIG, else the first of ``search``
    that exists, else the first of ``search`` (a file not there yet: ``pbm init`` writes it).
    """
    env = dict(os.environ) if env is None else env
    named = explicit or env.get("PBM_CONFIG")
    if named:
        return Located(Path(named), named=True)
    return Located(next((p for p in search if p.exists()), search[0]), named=False)


def config_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The config file to use (``locate``)."""
    return locate(explicit).path


def load(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Config:
    """Read the config file (if it exists) and apply the environment."""
    p = config_path(path).resolve()
    data: dict[str, Any] = {}
    if p.exists():
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read it: {exc.strerror}") from None
    return from_mapping(data, env=env, path=p)


def load_located(located: Located, env: dict[str, str] | None = None) -> Config:
    """``load`` the located file; a named file that does not exist is an error naming it."""
    if located.named and not located.path.exists():
        raise ConfigError(f"config file {located.path} not found (run `pbm init` to write one)")
    return load(located.path, env)


def new_secret() -> str:
    """A fresh random ``mail.secret`` for reply-token addresses."""
    return secrets.token_urlsafe(32)


def default_file_text(
    secret: str,
    address: str = MailConfig.address,
    data_dir: str = ServerConfig.data_dir,
    smtp_listen: str = SmtpConfig.listen,
    web_listen: str = WebConfig.listen,
) -> str:
    """The config file ``pbm init`` writes: every key, commented, with a fresh secret and
    the values chosen (each key's line in the template names its default)."""
    template = (Path(__file__).parent / "default_config.toml").read_text(encoding="utf-8")
    chosen = (
        ("secret", MailConfig.secret, secret),
        ("address", MailConfig.address, address),
        ("data_dir", ServerConfig.data_dir, data_dir),
        ("listen", SmtpConfig.listen, smtp_listen),
        ("listen", WebConfig.listen, web_listen),
    )
    for key, default, value in chosen:
        line = f"\n{key} = {toml_string(default)}\n"
        assert line in template, f"no line {line!r} in default_config.toml"
        template = template.replace(line, f"\n{key} = {toml_string(value)}\n", 1)
    return template


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def write_new_file(path: Path, text: str) -> None:
    """Write a new config file readable by its owner only (it holds ``mail.secret``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
