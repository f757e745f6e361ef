"""How actors and the learner talk: the server, inference batching, streams, who may connect.

A component of the run's :class:`seed.config.Config` (``config.transport``). The
rules that turn these settings into the learner's numbers (env groups per actor,
rows per inference batch, streams and server threads) need the run's shape and
architecture: each architecture's entry holds them (seed/runtime/architectures.py,
seed/runtime/seed_arch/sizing.py).
"""

from __future__ import annotations

import dataclasses

from seed.config.errors import ConfigError
from seed.config.fields import Checked, Count, CountOrZero, NonNegative, Positive


@dataclasses.dataclass
class TransportConfig(Checked):
    server: str = ""  # address; "" = a fresh unix socket in logdir (local) / 127.0.0.1:0
    inference_batch_size: CountOrZero = 0  # envs per inference batch; 0 = one request per
    #                                        actor stream
    actor_splits: Count = 1  # SEED: each actor's envs in this many groups, each with a
    #                          request in flight, so env stepping overlaps inference (double
    #                          buffering). Opt-in: on 2 cores it lost to 1 on Catch and on
    #                          Pong, where the smaller learner batch cost more than the
    #                          overlap gained
    inference_timeout_ms: Positive = 2.0
    stream_idle_timeout_s: NonNegative = 120.0  # SEED: close a stream that sent nothing this
    #                                             long (0 = never); its actor reconnects on a
    #                                             new run id
    # Who may connect (seed/transport/security.py): paths only, never the token itself.
    auth_token_file: str = ""  # token file; "" = $SEED_AUTH_TOKEN if set, else no token
    tls_cert_file: str = ""  # learner: PEM certificate chain; with tls_key_file, serve TLS
    tls_key_file: str = ""  # learner: PEM private key
    tls_ca_file: str = ""  # actors: PEM roots to verify the learner; "" = tls_cert_file

    @classmethod
    def key(cls, name: str) -> str:
        return f"transport.{name}"

    def validate(self, run) -> None:
        if self.inference_batch_size > run.num_envs:
            raise ConfigError(
                f"inference batch size {self.inference_batch_size} is larger than the "
                f"{run.num_envs} envs ({run.actors} actors x {run.envs_per_actor}): "
                "a batch could never fill")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ConfigError("TLS needs both --tls-cert-file and --tls-key-file")
