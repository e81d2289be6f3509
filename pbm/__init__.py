"""pbm: a play-by-email correspondence game server."""

__version__ = "0.1.0"
