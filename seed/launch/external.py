"""No launcher: actors are started elsewhere (``seed actor --server ADDR --task I``)."""

from __future__ import annotations

import logging

from seed.launch.base import Launcher

log = logging.getLogger(__name__)


class ExternalActors(Launcher):
    def start(self, address: str, num_actors: int) -> None:
        log.info("waiting for %d actors: run `seed actor --server %s --task I` for I in "
                 "0..%d", num_actors, address, num_actors - 1)

    def check(self) -> None:
        pass

    def stop(self, timeout: float = 10.0) -> None:
        pass
