"""What every actor process does around its loop: signals, parent death, backoff, spec."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import time

import grpc

from seed.transport.channel import connect
from seed.transport.proto import pb2

log = logging.getLogger(__name__)

# RPC errors after which an actor waits and reconnects (the learner restarts,
# or is not up yet). Anything else is a bug or bad input and ends the actor.
RETRY_CODES = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
               grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.ABORTED,
               grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL,
               grpc.StatusCode.RESOURCE_EXHAUSTED}


def retryable(error: grpc.RpcError) -> bool:
    """Whether to back off and reconnect: the learner is away, busy, or closed our stream.

    RESOURCE_EXHAUSTED means busy (every call slot or stream taken), unless it
    is about a message over its size limit, which retrying would only repeat.
    """
    code = error.code()
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        details = error.details() or ""
        return not ("larger than max" in details or "exceeds this learner's limit" in details)
    return code in RETRY_CODES


class ActorStopped(Exception):
    pass


def install_exit_handlers(parent_pid: int | None) -> None:
    """Exit quietly on SIGTERM/SIGINT, and when the launching process dies."""
    def _exit(signum, frame):
        raise ActorStopped(f"signal {signum}")

    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGINT, _exit)
    if parent_pid:
        try:  # Linux: have the kernel send SIGTERM if the parent dies.
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass
        if os.getppid() != parent_pid:
            raise ActorStopped("launcher already gone")


def fetch_spec(address: str, actor_id: int, wait_s: float = 60.0, security=None):
    """Ask the learner what it expects (retrying until ``wait_s``); returns
    ``(channel, stub, spec)``, the channel sized by the message limits of the spec.
    ``security``: a ClientSecurity (token, TLS CA), or None."""
    deadline = time.monotonic() + wait_s
    backoff = 0.2
    while True:
        channel, stub = connect(address, security=security)
        try:
            spec = stub.GetSpec(pb2.SpecRequest(actor_id=actor_id), timeout=10)
        except grpc.RpcError as e:
            if not retryable(e) or time.monotonic() > deadline:
                raise
            time.sleep(backoff)
            backoff = min(backoff * 2, 5.0)
            continue
        finally:
            channel.close()
        channel, stub = connect(address, spec, security)
        return channel, stub, spec


def spec_config(spec):
    """The run's config as the learner sent it. A SEED actor never builds the agent, so an
    agent only the learner's process knows (a registered one) is read without its settings;
    an IMPALA actor, which builds it, then fails on the unknown agent with one line."""
    from seed import config as config_lib
    values = json.loads(spec.config_json)
    return config_lib.from_saved(values, unknown_agent_ok=True)


def run_with_reconnect(loop_once, actor_id: int, what: str) -> int:
    """Call ``loop_once()`` (one connection's life) until stopped; back off on RPC errors."""
    backoff = 0.5
    while True:
        try:
            loop_once()
            return 0
        except ActorStopped:
            return 0
        except grpc.RpcError as e:
            code = e.code()
            if not retryable(e):
                log.error("%s actor %d: learner refused: %s %s", what, actor_id, code.name,
                          e.details())
                return 2
            log.warning("%s actor %d: learner unreachable (%s); retrying in %.1fs", what,
                        actor_id, code.name, backoff)
            try:
                time.sleep(backoff)
            except ActorStopped:
                return 0
            backoff = min(backoff * 2, 10.0)


def actor_envs_for(spec, task: int):
    """The envs actor ``task`` steps, as the learner's spec describes them."""
    from seed.runtime.actor_envs import ActorEnvs
    k = spec.envs_per_actor
    seed = int(json.loads(spec.config_json).get("seed", 0))
    return ActorEnvs(spec.env, json.loads(spec.env_kwargs_json),
                     list(range(task * k, (task + 1) * k)), seed=seed)


def run_actor_loop(address: str, task: int, what: str, build, session, security=None) -> int:
    """The life of an actor process, either architecture.

    On the first connection ``build(spec) -> dict`` makes what lives as long as
    the process (it must hold the ``'envs'``); then, per connection,
    ``session(stub, parts)`` runs until the learner goes away (reconnecting with
    backoff) or the actor is stopped.
    """
    parts: dict = {}

    def loop_once():
        channel, stub, spec = fetch_spec(address, task, security=security)
        try:
            if not 0 <= task < spec.num_actors:
                raise SystemExit(f"actor task {task} out of range: the learner expects "
                                 f"{spec.num_actors} actors")
            if not parts:
                parts.update(build(spec))
            session(stub, parts)
        finally:
            channel.close()

    try:
        return run_with_reconnect(loop_once, task, what)
    finally:
        if "envs" in parts:
            parts["envs"].close()
