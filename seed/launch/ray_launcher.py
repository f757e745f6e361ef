"""Actors as Ray actors, spread over the nodes of a Ray cluster.

``RayLauncher(config, run_dir)`` joins the cluster at ``config.ray_address``
(or starts a local one in this process when it is empty) and runs each actor,
the actor loop of the run's architecture (``run_actor(address, task)`` of its
entry in :mod:`seed.runtime.architectures`, handed in by the run, which travels to the
actor by reference), inside a Ray actor that asks for one CPU, placed with
``scheduling_strategy="SPREAD"``.

Restarts are Ray's: the Ray actor has ``max_restarts`` and its ``run`` call
``max_task_retries=-1``, so when an actor's worker process dies (killed, OOM,
node lost) Ray starts a fresh one and runs ``run`` there again; the new actor
connects with a new run id, and the learner starts its envs on fresh episodes
and drops their half-built unrolls. ``check()`` raises once Ray gives up on
an actor (restarts used up) or an actor's loop ends by itself.

The learner must be reachable over TCP. ``learner_address(server)`` chooses
where it listens: an explicit ``HOST:PORT`` as given; otherwise loopback
(``127.0.0.1:0``) when every node of the cluster is this machine on loopback
(an in-process cluster, or a head started with ``--node-ip-address
127.0.0.1``); otherwise it refuses and asks for ``--server NODE_IP:PORT``,
since which interface to expose the learner on is the user's decision.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from seed.config import Config, ConfigError, from_saved
from seed.launch.base import ActorLost, Launcher, setup_logging
from seed.transport.channel import normalize_server_address

log = logging.getLogger(__name__)

INSTALL_HINT = ("--launcher ray needs Ray: pip install 'seed-rl-suite[ray]' "
                "(or pip install 'ray[default]>=2.40')")

# What runs an actor's loop: the run_actor(address, task, security=...) of the run's
# architecture (seed/runtime/architectures.py), handed in by the run (the runtime imports this
# package, so this package never imports the runtime back).
RunActor = Callable[..., int]

# Seconds an actor may wait for a node with a free CPU before check() warns.
_PENDING_WARN_S = 60.0


def import_ray():
    """``ray``, or a ConfigError that says how to install it."""
    try:
        import ray
    except ImportError as e:
        raise ConfigError(f"{INSTALL_HINT} ({e})") from None
    return ray


def _is_loopback(host: str) -> bool:
    return host == "localhost" or host == "::1" or host.startswith("127.")


def connect_ray(config: Config):
    """(ray, started_here): join ``config.ray_address``, or start Ray in this process."""
    address = config.ray_address or None
    if address is None and "ray" not in sys.modules:
        # An in-process cluster is this machine alone: keep Ray's node
        # address on loopback rather than the first network interface.
        # (Ray reads this when it is imported; it only affects clusters
        # started here, and such a cluster cannot take other nodes.)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = import_ray()
    if ray.is_initialized():
        log.info("using the Ray connection this process already has")
        return ray, False
    kwargs = dict(log_to_driver=False, configure_logging=False)
    if address is None:
        kwargs.update(num_cpus=max(os.cpu_count() or 1, config.actors),
                      include_dashboard=False,
                      object_store_memory=100 * 1024 * 1024)
    try:
        ray.init(address=address, **kwargs)
    except Exception as e:  # unreachable, auth errors and the like: one line, with the cause
        if address is None:
            raise
        raise ConfigError(f"cannot join the Ray cluster at {address}: {_first_line(e)} "
                          "(is it up? with token auth: RAY_AUTH_MODE=token and the "
                          "cluster's token, see docs/ray.md)") from None
    log.info("Ray %s: %s", "started in-process" if address is None else f"joined {address}",
             ray.cluster_resources())
    return ray, True


class ActorHost:
    """The body of one Ray actor: runs the actor loop of the run's architecture.

    Ray re-runs ``__init__`` in a fresh worker process on every restart, so
    ``incarnation`` (the process id and start time) tells restarts apart.
    """

    def __init__(self, arch: str, run_actor: RunActor, address: str, task: int,
                 auth_token_file: str = "", tls_ca_file: str = ""):
        # Actors step envs on CPU (IMPALA actors also infer there): keep TF
        # off any GPU of the node, and quiet, before anything imports it.
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        setup_logging()
        self.arch, self.run_actor, self.address, self.task = arch, run_actor, address, task
        # Paths, read on this node when the loop starts: the token itself never travels
        # through Ray (without a file, it comes from $SEED_AUTH_TOKEN of this worker).
        self.auth_token_file, self.tls_ca_file = auth_token_file, tls_ca_file
        self.pid = os.getpid()
        self.started = time.time()

    def info(self) -> dict:
        import socket
        return {"task": self.task, "pid": self.pid, "started": self.started,
                "host": socket.gethostname()}

    def run(self) -> int:
        """The actor loop; returns only when the loop ends (it should not during a run)."""
        from seed.transport.security import client_security
        log.info("%s actor %d (pid %d) connecting to %s", self.arch, self.task, self.pid,
                 self.address)
        security = client_security(self.auth_token_file, self.tls_ca_file)
        return self.run_actor(self.address, self.task, security=security)


class RayLauncher(Launcher):
    def __init__(self, config: Config, run_dir: str | Path, run_actor: RunActor,
                 max_restarts: int = 3):
        self.config = config
        self.run_actor = run_actor
        self.run_dir = Path(run_dir)
        self.max_restarts = max_restarts
        self.namespace = "seed"
        # Named per run dir and learner process, so runs sharing a cluster never clash.
        self.name_prefix = f"seed-{self.run_dir.name}-{os.getpid()}-actor"
        self._actors: dict[int, object] = {}
        self._runs: dict[int, object] = {}
        self._resubmits: dict[int, int] = {}
        self._ready: dict[int, object] = {}
        self._started_at = 0.0
        self._warned_pending = False
        self._owns_ray = False
        self.ray = self._connect()

    # -- cluster ---------------------------------------------------------------

    def _connect(self):
        ray, self._owns_ray = connect_ray(self.config)
        return ray

    def node_addresses(self) -> list[str]:
        return [n["NodeManagerAddress"] for n in self.ray.nodes() if n.get("Alive")]

    def learner_address(self, server: str) -> str:
        """Where the learner listens so that actors on the cluster's nodes reach it."""
        nodes = self.node_addresses()
        on_loopback = bool(nodes) and all(_is_loopback(h) for h in nodes)
        if server and not server.startswith("unix:"):
            host = normalize_server_address(server).rsplit(":", 1)[0].strip("[]")
            if _is_loopback(host) and not on_loopback:
                raise ConfigError(
                    f"--server {server} listens on loopback, which actors on other nodes "
                    f"cannot reach (nodes: {', '.join(sorted(set(nodes)))}): give this "
                    "machine's cluster-network address, --server NODE_IP:PORT")
            return server
        if on_loopback:
            return "127.0.0.1:0"
        raise ConfigError(
            "--launcher ray on a cluster needs --server NODE_IP:PORT: the address of this "
            f"machine on the cluster network (nodes: {', '.join(sorted(set(nodes)))}); "
            "keep that port closed beyond the cluster network (see docs/ray.md)")

    # -- launcher interface ----------------------------------------------------

    def start(self, address: str, num_actors: int) -> None:
        if address.startswith("unix:"):
            raise ConfigError(f"Ray actors cannot reach the learner at {address}: give it "
                              "a TCP address (--server HOST:PORT)")
        ray = self.ray
        self._address = address
        self._remote_cls = ray.remote(ActorHost)
        self._options = dict(
            num_cpus=1, max_restarts=self.max_restarts, max_task_retries=-1,
            max_concurrency=2,  # run() blocks; info() must still answer
            scheduling_strategy="SPREAD", namespace=self.namespace)
        self._started_at = time.monotonic()
        for task in range(num_actors):
            self._resubmits[task] = 0
            self._spawn(task)
        log.info("started %d Ray actors (%s) against the learner at %s", num_actors,
                 self.name_prefix, address)

    def _spawn(self, task: int) -> None:
        actor = self._remote_cls.options(
            name=f"{self.name_prefix}-{task}", **self._options).remote(
            self.config.arch, self.run_actor, self._address, task,
            self.config.transport.auth_token_file,
            self.config.transport.tls_ca_file or self.config.transport.tls_cert_file)
        self._actors[task] = actor
        self._runs[task] = actor.run.remote()
        self._ready[task] = actor.info.remote()

    def check(self) -> None:
        """Raise when Ray gave up on an actor, or an actor's loop ended by itself."""
        ray = self.ray
        if not self._runs:
            return
        task_of = {ref: task for task, ref in self._runs.items()}
        done, _ = ray.wait(list(task_of), num_returns=len(task_of), timeout=0)
        for ref in done:
            task = task_of[ref]
            try:
                code = ray.get(ref)
                why = f"its loop returned {code}"
            except ray.exceptions.RayActorError as e:
                raise ActorLost(
                    f"Ray actor {self.name_prefix}-{task} died and Ray gave up restarting it "
                    f"(max_restarts={self.max_restarts}): {_first_line(e)}") from None
            except ray.exceptions.RayTaskError as e:
                why = f"it raised {_first_line(e)}"
            # The process is alive but the loop ended: run it again, a few times.
            if self._resubmits[task] >= self.max_restarts:
                raise ActorLost(f"actor {task} stopped {self._resubmits[task] + 1} times; "
                                f"last: {why}")
            self._resubmits[task] += 1
            log.warning("actor %d stopped (%s); running it again (%d/%d)", task, why,
                        self._resubmits[task], self.max_restarts)
            self._runs[task] = self._actors[task].run.remote()
        self._warn_if_pending()

    def _warn_if_pending(self) -> None:
        if self._warned_pending or not self._ready:
            return
        ready, pending = self.ray.wait(list(self._ready.values()),
                                       num_returns=len(self._ready), timeout=0)
        if not pending:
            self._ready.clear()
            return
        if time.monotonic() - self._started_at > _PENDING_WARN_S:
            self._warned_pending = True
            log.warning("%d of %d Ray actors are not running after %.0fs: the cluster may "
                        "lack free CPUs (%s available)", len(pending), len(self._actors),
                        _PENDING_WARN_S, self.ray.available_resources().get("CPU", 0))

    def stop(self, timeout: float = 10.0) -> None:
        ray = self.ray
        for actor in self._actors.values():
            try:
                ray.kill(actor, no_restart=True)
            except Exception as e:  # already gone
                log.debug("ray.kill: %s", e)
        # Wait for the kills to land so no actor outlives the run.
        deadline = time.monotonic() + timeout
        for ref in self._runs.values():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                ray.get(ref, timeout=left)
            except Exception:
                pass
        self._actors.clear()
        self._runs.clear()
        self._ready.clear()
        if self._owns_ray:
            ray.shutdown()
            self._owns_ray = False

    # -- for tests and tools ---------------------------------------------------

    def actor_handles(self) -> dict:
        return dict(self._actors)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# -- the learner itself as a Ray actor on a GPU node -------------------------------

# What runs the learner in a process: seed.runtime.run.train_here, handed in by its caller
# (seed.cli.launch_training; the runtime sits above this package, which never imports it).
TrainHere = Callable[[Config, str | None, dict | None], dict]


class LearnerHost:
    """The body of the learner's Ray actor: the training run on the GPU node Ray chose."""

    def __init__(self):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        setup_logging()

    def train(self, train_here: TrainHere, config_values: dict,
              resume_dir: str | None, given: dict | None) -> dict:
        import socket

        import ray
        summary = train_here(from_saved(config_values), resume_dir, given)
        summary["learner_host"] = {
            "hostname": socket.gethostname(), "pid": os.getpid(),
            "node_ip": ray.util.get_node_ip_address(),
            "ray_gpu_ids": [str(g) for g in ray.get_gpu_ids()],
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
        return summary


def learner_placement(ray, config: Config) -> dict:
    """Ray options that put the learner on a GPU node, and on the node of ``--server``."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    gpu_nodes = [n["NodeManagerAddress"] for n in nodes
                 if n.get("Resources", {}).get("GPU", 0) >= 1]
    if not gpu_nodes:
        raise ConfigError("learner_on_gpu_node: no node of the Ray cluster has a GPU "
                          f"(resources: {ray.cluster_resources()})")
    options = dict(num_gpus=1, num_cpus=1)
    server = config.transport.server
    if server and not server.startswith("unix:"):
        host = normalize_server_address(server).rsplit(":", 1)[0].strip("[]")
        if not _is_loopback(host):
            if host not in gpu_nodes:
                raise ConfigError(
                    f"learner_on_gpu_node: --server {server} is not the address of a GPU "
                    f"node of the cluster (GPU nodes: {', '.join(sorted(set(gpu_nodes)))})")
            options["resources"] = {f"node:{host}": 0.001}  # Ray's per-node resource
            return options
    if all(_is_loopback(n["NodeManagerAddress"]) for n in nodes):
        return options
    raise ConfigError(
        "learner_on_gpu_node on a cluster needs --server GPU_NODE_IP:PORT: the GPU node to "
        "run the learner on, and where it listens (GPU nodes: "
        f"{', '.join(sorted(set(gpu_nodes)))}); keep that port within the cluster network")


def train_on_gpu_node(config: Config, resume_dir: str | None, given: dict | None,
                      train_here: TrainHere,
                      run_dir: str | Path) -> dict:
    """Run ``train_here(config, resume_dir, given)`` in a Ray actor with one GPU; returns its
    summary.

    ``train_here`` travels to that node by reference (a module-level function of
    an importable module). The run directory ``run_dir`` is written on that node
    (made absolute here; use a path that exists there, or shared storage).
    """
    ray, owns = connect_ray(config)
    host = None
    try:
        options = learner_placement(ray, config)
        values = config.to_json()
        values["progress"] = False  # its terminal is a Ray log file
        values["logdir"] = os.path.abspath(run_dir)
        resume = os.path.abspath(resume_dir) if resume_dir else None
        if resume:  # a resumed run takes its saved config with what was given: add this
            given = {**(given or {}), "progress": False}
        host = ray.remote(LearnerHost).options(
            name=f"seed-{Path(values['logdir']).name}-{os.getpid()}-learner",
            namespace="seed",
            max_restarts=0, **options).remote()
        ref = host.train.remote(train_here, values, resume, given)
        log.info("learner running as a Ray actor with %s; results in %s on that node",
                 options, values["logdir"])
        try:
            return ray.get(ref)
        except KeyboardInterrupt:
            ray.cancel(ref)  # a KeyboardInterrupt in train(): it stops its actors first
            try:
                ray.get(ref, timeout=60)
            except Exception:
                pass
            raise
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, ConfigError):
                raise ConfigError(str(cause)) from None
            raise RuntimeError(f"the learner on the GPU node failed: {_first_line(e)}") from e
    finally:
        if host is not None:
            try:
                ray.kill(host, no_restart=True)
            except Exception as e:
                log.debug("ray.kill learner: %s", e)
        if owns:
            ray.shutdown()
