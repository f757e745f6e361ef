"""The launcher contract: what the run loop asks of whatever starts the actors.

An abstract base class rather than a Protocol: every launcher is one of this
package's own classes, and the base holds the default they share (the learner
listens where ``--server`` says).
"""

from __future__ import annotations

import abc
import logging
import signal
import sys


def setup_logging() -> None:
    """Log lines on stderr, as every process a launcher starts (an actor) writes them."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")


class ActorLost(RuntimeError):
    """An actor kept dying, or its launcher gave up restarting it: the run stops (actors
    first, no final checkpoint) and says so in one line."""


def exit_status(code: int) -> str:
    """A process's exit code as its launcher reports it: ``code 1``, ``code -11 (SIGSEGV)``
    for one a signal ended (a native crash, an engine killed)."""
    if code < 0:
        try:
            return f"code {code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"code {code}"


class Launcher(abc.ABC):
    """Starts a run's actors, watches them every tick, and stops them at the end."""

    def learner_address(self, server: str) -> str:
        """Where the learner listens, given ``--server``: as given, unless the launcher
        places actors where that address cannot reach (Ray overrides this)."""
        return server

    @abc.abstractmethod
    def start(self, address: str, num_actors: int) -> None:
        """Start ``num_actors`` actors (tasks 0..n-1) against the learner at ``address``."""

    @abc.abstractmethod
    def check(self) -> None:
        """Called every tick: restart what may be restarted, raise when an actor cannot
        be kept running."""

    @abc.abstractmethod
    def stop(self, timeout: float = 10.0) -> None:
        """Stop every actor, waiting up to ``timeout`` seconds; none outlives the run."""
