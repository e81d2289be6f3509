"""pbm: a play-by-email correspondence game server."""

from importlib import metadata


def version() -> str:
    """The installed version, from the package metadata (written once, in pyproject.toml)."""
    try:
        return metadata.version("pbm")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
