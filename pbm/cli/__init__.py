"""The ``pbm`` command line: one thin click module per area over the service layer.

``rules`` (pure game rules), ``admin`` (init, db, player, game, archive),
``serve`` (the mail server, the outbox, the timers).
"""

from __future__ import annotations

import click

from pbm.cli import admin, outbox, play, prune, rules, serve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The TOML config file (default: $PBM_CONFIG, else ./pbm.toml).",
)
@click.pass_context
def main(ctx: click.Context, config_file: str | None) -> None:
    """pbm: a play-by-email game server."""
    ctx.obj = {"config_file": config_file}


main.add_command(rules.rules)
main.add_command(serve.serve)
main.add_command(outbox.outbox)
main.add_command(prune.prune)
admin.register(main)
play.register(main)  # after admin: it adds `vacation` to the player group
