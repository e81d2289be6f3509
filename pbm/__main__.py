"""``python -m pbm``: the same as the ``pbm`` command."""

from pbm.cli import run

run()
