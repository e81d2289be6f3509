"""``pbm serve``: run the mail server."""

from __future__ import annotations

import asyncio

import click
from sqlalchemy.engine import make_url

from pbm import config as config_mod
from pbm import store


def load_config(ctx: click.Context) -> config_mod.Config:
    """The config named by ``--config``/``$PBM_CONFIG``, with a clear error if unusable."""
    try:
        return config_mod.load((ctx.obj or {}).get("config_file"))
    except config_mod.ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def shown_url(cfg: config_mod.Config) -> str:
    """The database URL as printed: without its password."""
    return make_url(cfg.database_url).render_as_string(hide_password=True)


@click.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Listen for command mail and answer it (stop with Ctrl-C or SIGTERM)."""
    from pbm.mail.server import configure_logging
    from pbm.mail.server import serve as run_server

    cfg = load_config(ctx)
    configure_logging(cfg.server.log_level)
    if not cfg.mail.secret:
        raise click.ClickException(
            "mail.secret is empty: run `pbm init` first (it writes a config with a fresh secret)"
        )
    db = store.Database.open(cfg)
    try:
        if store.current_revision(db) is None:
            raise click.ClickException(f"no pbm database at {shown_url(cfg)}: run `pbm init` first")
    finally:
        db.close()
    try:
        asyncio.run(run_server(cfg))
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {cfg.smtp.listen}: {exc}") from None
