"""The web site beside the mail: ``pbm web`` in a process of its own, started and
stopped by ``pbm serve``. Its own process, so that a crowd of visitors (or slow and
idle connections) takes none of the mail's event loop, at a lower CPU priority
(``pbm.cli.web.NICENESS``), so that it takes only the CPU the mail leaves."""

from __future__ import annotations

import logging
import subprocess
import sys

from pbm.config import Config

log = logging.getLogger("pbm.web")


class WebProcess:
    """A running ``pbm web`` for ``config`` (its file and the environment's overrides)."""

    def __init__(self, config: Config) -> None:
        command = [sys.executable, "-m", "pbm"]
        if config.path is not None:
            command += ["--config", str(config.path)]
        self.process = subprocess.Popen([*command, "web"])
        log.info("web site on http://%s/ (pid %s)", config.web.listen, self.process.pid)

    def stop(self) -> None:
        """End it (SIGTERM: uvicorn finishes what it is answering), killed after 10 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.returncode not in (0, -15):
            log.warning("the web site ended with status %s", self.process.returncode)
