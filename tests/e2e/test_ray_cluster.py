"""Actors on a multi-node Ray cluster: a head without CPUs and two worker nodes.

Ray's own tooling (``ray.cluster_utils.Cluster``) starts the nodes on this machine:
each node is a raylet of its own, with its own node id, logical CPUs and object
store, all at this machine's network address (loopback only if it has none). The
nodes share the machine's real cores. The learner runs as it does on a cluster: a
``seed train --launcher ray --ray-address HEAD --server NODE_IP:0`` process that
joins the head as a Ray driver, while its actors are placed on the worker nodes.
Where actors ran is read from Ray's state API (``ray.util.state.list_actors``).

Checked here: both architectures learn Catch with an actor on each worker node; a
worker node killed mid-run (its raylet and its workers, SIGKILL) and the run still
spends its budget and learns; the learner port's token and TLS, from the worker
nodes. All slow: ``pytest -m slow tests/e2e/test_ray_cluster.py`` (docs/ray.md).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

# This process imports Ray with its node address on loopback (tests/support/optional_ray.py:
# the in-process Ray of tests/e2e/test_ray_local.py needs it). The processes of this cluster
# and its learner start without it (see _cluster_env), as on the machines of a real cluster.
from tests.support.optional_ray import HAVE_RAY, LOOPBACK_ONLY as _LOOPBACK_ONLY
from tests.support.optional_ray import needs_ray, ray

if HAVE_RAY:
    from ray.cluster_utils import Cluster

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, needs_ray]

WORKER_CPUS = 2  # logical CPUs per worker node: one actor, and room for one re-placed
ACTORS, ENVS = 2, 4  # as the suite's other Catch runs
FRAMES = 100_000  # the Catch budget of tests/e2e/test_train_e2e.py; 0.8 by then


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _machine_ip() -> str:
    """This machine's address on its network (a UDP connect sends nothing); else loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("8.8.8.8", 80))
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


@contextlib.contextmanager
def _cluster_env():
    """os.environ without _LOOPBACK_ONLY while a node starts (its processes inherit it)."""
    saved = os.environ.pop(_LOOPBACK_ONLY, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[_LOOPBACK_ONLY] = saved


class _Nodes:
    """A head (no CPUs, the dashboard for the state API) and worker nodes, all at ``ip``."""

    def __init__(self):
        self.ip = _machine_ip()
        self.temp_dir = tempfile.mkdtemp(prefix="rayc-", dir="/tmp")  # short socket paths
        # Every node imports this checkout's code, as each machine of a cluster has it installed.
        self.pythonpath = os.pathsep.join([str(ROOT)] + [
            p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        with _cluster_env():
            self.cluster = Cluster(initialize_head=True, head_node_args=dict(
                num_cpus=0, node_ip_address=self.ip, gcs_server_port=_free_port(),
                include_dashboard=True, dashboard_port=_free_port(),
                dashboard_agent_listen_port=_free_port(), ray_client_server_port=_free_port(),
                temp_dir=self.temp_dir, env_vars={"PYTHONPATH": self.pythonpath}))
        self.workers: list = []

    @property
    def address(self) -> str:
        return self.cluster.address

    def add_worker(self):
        with _cluster_env():
            node = self.cluster.add_node(num_cpus=WORKER_CPUS, node_ip_address=self.ip,
                                         env_vars={"PYTHONPATH": self.pythonpath})
        self.workers.append(node)
        self.cluster.wait_for_nodes()
        return node

    def kill(self, node) -> None:
        """The node is lost: its raylet and the rest SIGKILLed, nothing shut down in order."""
        self.workers.remove(node)
        self.cluster.remove_node(node, allow_graceful=False)

    def pids(self) -> set[int]:
        """The nodes' processes and their children (actor workers among them)."""
        import psutil
        out = set()
        for node in self.cluster.list_all_nodes():
            for infos in node.all_processes.values():
                for info in infos:
                    try:
                        proc = psutil.Process(info.process.pid)
                        out |= {proc.pid} | {c.pid for c in proc.children(recursive=True)}
                    except psutil.NoSuchProcess:
                        pass
        return out

    def shutdown(self) -> list[int]:
        """Stop every node; SIGKILL what outlived it, by pid; returns those pids."""
        pids = self.pids()
        try:
            self.cluster.shutdown()
        finally:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and [p for p in pids if _running(p)]:
                time.sleep(0.3)
            left = [p for p in pids if _running(p)]
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return left


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(scope="module")
def _cluster(request):
    nodes = None
    failed = request.session.testsfailed
    try:
        nodes = _Nodes()
        yield nodes
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if nodes is not None:
            left = nodes.shutdown()
            if request.session.testsfailed == failed:
                shutil.rmtree(nodes.temp_dir, ignore_errors=True)
            else:  # the nodes' Ray logs, for a look
                print(f"\nthe Ray cluster's logs: {nodes.temp_dir}/session_*/logs")
            assert not left, f"Ray processes outlived the cluster's shutdown: {left}"


@pytest.fixture()
def nodes(_cluster):
    """The cluster with two live worker nodes (a test that killed one gets it back)."""
    while len(_cluster.workers) < 2:
        _cluster.add_worker()
    return _cluster


# -- running the learner as a user does -------------------------------------------------

def _train(nodes: _Nodes, run_dir: Path, arch: str, frames: int, *extra: str
           ) -> subprocess.Popen:
    """``seed train --launcher ray`` joined to the head; its stderr goes to run_dir.log."""
    env = dict(os.environ, PYTHONPATH=nodes.pythonpath, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("RAY_ADDRESS", None)
    env.pop(_LOOPBACK_ONLY, None)
    cmd = [sys.executable, "-m", "seed.cli", "train", "--env", "toy:catch", "--arch", arch,
           "--actors", str(ACTORS), "--envs-per-actor", str(ENVS), "--frames", str(frames),
           "--launcher", "ray", "--ray-address", nodes.address,
           "--server", f"{nodes.ip}:0", "--logdir", str(run_dir), "--no-progress",
           "--set", "log_interval_s=2", *extra]
    with open(f"{run_dir}.log", "w") as log:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _finish(proc: subprocess.Popen, run_dir: Path, timeout: float = 900) -> tuple[dict, str]:
    """(summary, learner log) once the run ended; it must have ended cleanly."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        raise AssertionError(f"the run did not end within {timeout:.0f}s")
    finally:
        if proc.poll() is None:
            proc.kill()
    log = Path(f"{run_dir}.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-4000:]
    return json.loads((run_dir / "summary.json").read_text()), log


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(60)


def _learner_address(run_dir: Path) -> str | None:
    """Where the learner serves, once its log says so (with the token and TLS on)."""
    found = re.search(r"serving \d+ actors x \d+ envs at (\S+) \(auth token on, TLS on\)",
                      Path(f"{run_dir}.log").read_text(errors="replace"))
    return found.group(1) if found else None


def _rows(path: Path) -> list[dict]:
    try:
        with open(path) as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def _frames(run_dir: Path) -> int:
    rows = _rows(run_dir / "metrics.csv")
    return int(rows[-1]["env_frames"]) if rows else 0


def _wait(what: str, condition, timeout: float, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended (code {proc.returncode}) before {what}")
        time.sleep(1.0)
    raise AssertionError(f"no {what} within {timeout:.0f}s")


def _ray_actors(nodes: _Nodes, run_dir: Path, proc: subprocess.Popen) -> dict[int, object]:
    """task -> the run's actor as Ray's state API reports it (node_id, pid, state, restarts).

    The launcher names them seed-<run dir name>-<learner pid>-actor-<task>.
    """
    from ray.util.state import list_actors
    prefix = f"seed-{run_dir.name}-{proc.pid}-actor-"
    found = list_actors(address=nodes.address, detail=True, limit=10_000,
                        filters=[("class_name", "=", "ActorHost")])
    return {int(a.name.rsplit("-", 1)[1]): a for a in found
            if a.name and a.name.startswith(prefix)}


# -- the tests ----------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_learns_catch_with_an_actor_on_each_worker_node(nodes, tmp_path, arch):
    run_dir = tmp_path / f"learn-{arch}"
    proc = _train(nodes, run_dir, arch, FRAMES)
    try:
        summary, log = _finish(proc, run_dir)
    finally:
        _stop(proc)
    assert summary["stopped_by"] == "budget" and summary["arch"] == arch
    assert summary["env_frames"] >= FRAMES
    assert summary["mean_return_last_100"] >= 0.8, summary
    assert f"joined {nodes.address}" in log
    assert re.search(rf"serving {ACTORS} actors x {ENVS} envs at {re.escape(nodes.ip)}:\d+",
                     log), log[-3000:]
    # Ray's record of the run's actors: one on each worker node, none on the head.
    actors = _ray_actors(nodes, run_dir, proc)
    assert sorted(actors) == list(range(ACTORS)), actors
    where = {a.node_id for a in actors.values()}
    assert where == {w.node_id for w in nodes.workers}, (where, nodes.cluster.head_node.node_id)
    assert all(a.num_restarts == 0 for a in actors.values()), actors
    # The launcher killed them at the end; both played.
    _wait("the run's actors dead", lambda: {
        a.state for a in _ray_actors(nodes, run_dir, proc).values()} == {"DEAD"}, 60)
    assert {r["actor"] for r in _rows(run_dir / "episodes.csv")} == {"0", "1"}


def test_a_worker_node_lost_mid_run_and_the_run_still_learns(nodes, tmp_path):
    run_dir = tmp_path / "node-lost"
    proc = _train(nodes, run_dir, "seed", FRAMES)
    try:
        _wait("25k frames", lambda: _frames(run_dir) >= 25_000, 600, proc)
        before = _ray_actors(nodes, run_dir, proc)
        assert {a.state for a in before.values()} == {"ALIVE"}, before
        assert {a.node_id for a in before.values()} == {w.node_id for w in nodes.workers}
        victim = nodes.workers[1]
        [(task, lost)] = [(t, a) for t, a in before.items() if a.node_id == victim.node_id]
        survivor = nodes.workers[0].node_id
        frames_at_kill = _frames(run_dir)
        nodes.kill(victim)
        t_kill = time.monotonic()
        # Its actor's process went with the node, as on a machine that is gone.
        _wait(f"the end of pid {lost.pid}", lambda: not _running(lost.pid), 30)
        # Ray declares the node dead and restarts the actor on the surviving node.

        def moved_to_survivor():
            a = _ray_actors(nodes, run_dir, proc).get(task)
            return a if a is not None and a.state == "ALIVE" and a.node_id == survivor else None

        moved = _wait(f"actor {task} alive on the surviving node", moved_to_survivor, 240, proc)
        restarted_after = time.monotonic() - t_kill
        assert moved.num_restarts >= 1 and moved.pid != lost.pid
        assert _frames(run_dir) < FRAMES, "the budget was spent before the actor came back"
        # Two more rows: every episode the lost process reported is in episodes.csv by then,
        # so any later one of this task is the restarted actor's.
        rows_now = len(_rows(run_dir / "metrics.csv"))
        _wait("two more metrics rows",
              lambda: len(_rows(run_dir / "metrics.csv")) >= rows_now + 2, 120, proc)
        played = sum(r["actor"] == str(task) for r in _rows(run_dir / "episodes.csv"))
        summary, log = _finish(proc, run_dir)
    finally:
        _stop(proc)
    assert summary["stopped_by"] == "budget" and summary["env_frames"] >= FRAMES
    assert summary["mean_return_last_100"] >= 0.8, summary
    later = sum(r["actor"] == str(task) for r in _rows(run_dir / "episodes.csv"))
    assert later > played, "the restarted actor never played on the surviving node"
    assert "gave up" not in log
    after = _ray_actors(nodes, run_dir, proc)
    assert {a.node_id for a in after.values()} == {survivor}
    print(f"\nnode lost at {frames_at_kill} frames logged; actor {task} alive on the "
          f"surviving node {restarted_after:.0f}s later; last 100 episodes "
          f"{summary['mean_return_last_100']:.2f}")


def test_learner_port_token_and_tls_across_nodes(nodes, tmp_path):
    """The actors on both worker nodes reach the learner at the node address over TLS
    with the token; from those nodes, a call without TLS, without the token, with a wrong
    token or trusting another certificate is refused. The token never passes through Ray."""
    from tests.support.tls_files import TOKEN, self_signed, token_file

    cert, key = self_signed(tmp_path, ips=(nodes.ip,))
    (tmp_path / "other").mkdir()
    other_cert, _ = self_signed(tmp_path / "other", ips=(nodes.ip,))
    token = token_file(tmp_path)
    wrong = token_file(tmp_path, "not-" + TOKEN, name="wrong_token")
    run_dir = tmp_path / "secure"  # IMPALA: the model's weights travel over this port too
    proc = _train(nodes, run_dir, "impala", 10 * FRAMES, "--auth-token-file", token,
                  "--tls-cert-file", cert, "--tls-key-file", key)
    try:
        address = _wait("the learner's address", lambda: _learner_address(run_dir), 300, proc)
        assert address.startswith(f"{nodes.ip}:")
        # Both actors, one per worker node, are served.
        _wait("episodes of both actors",
              lambda: {r["actor"] for r in _rows(run_dir / "episodes.csv")} == {"0", "1"},
              300, proc)
        ray.init(address=nodes.address, log_to_driver=False, configure_logging=False)
        try:
            # Paths, as for the actors: each probe reads the files on its node.
            results = _probe_from_workers(nodes, address, {
                "token, TLS": (token, cert), "no TLS": (token, ""), "no token": ("", cert),
                "wrong token": (wrong, cert), "another certificate": (token, other_cert)})
        finally:
            ray.shutdown()
        proc.send_signal(signal.SIGTERM)  # a clean stop: the probes are what this run is for
        summary, log = _finish(proc, run_dir, timeout=120)
    finally:
        _stop(proc)
    for node_id, got in results.items():
        assert got.pop("seed") == str(ROOT / "seed" / "__init__.py"), node_id
        assert got == {"token, TLS": "OK 2 actors", "no TLS": "UNAVAILABLE",
                       "no token": "UNAUTHENTICATED", "wrong token": "UNAUTHENTICATED",
                       "another certificate": "UNAVAILABLE"}, (node_id, got)
    assert summary["stopped_by"] == "SIGTERM" and summary["learner_steps"] > 0
    assert "refused a call" in log  # the learner saw the tokenless probes
    actors = _ray_actors(nodes, run_dir, proc)
    assert {a.node_id for a in actors.values()} == {w.node_id for w in nodes.workers}
    # Each actor and probe read the token file on its node: the token is in no Ray log of
    # any node, nothing the run wrote.
    for path in [*Path(nodes.temp_dir).rglob("*"), *run_dir.rglob("*"), Path(f"{run_dir}.log")]:
        if path.is_file() and path.suffix in (".log", ".out", ".err", ".json", ".csv", ""):
            assert TOKEN not in path.read_text(errors="replace"), path


def _probe_from_workers(nodes: _Nodes, address: str, cases: dict) -> dict:
    """Calls to the learner from a Ray task on each worker node; ``cases``: name ->
    (token file, CA file), read there. Returns {node_id: {case: "OK ..." or gRPC code}}."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    def probe(address, cases):  # runs on a worker node (a closure: Ray pickles it by value)
        import grpc

        import seed
        from seed.transport.channel import connect
        from seed.transport.proto import pb2
        from seed.transport.security import client_security
        out = {"seed": seed.__file__}
        for case, (token_file, ca_file) in cases.items():
            channel, stub = connect(address, security=client_security(token_file, ca_file))
            try:
                spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=20)
                out[case] = f"OK {spec.num_actors} actors"
            except grpc.RpcError as e:
                out[case] = e.code().name
            finally:
                channel.close()
        return out

    remote = ray.remote(probe)
    refs = {w.node_id: remote.options(
        num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(w.node_id, soft=False)
    ).remote(address, cases) for w in nodes.workers}
    return {node_id: ray.get(ref, timeout=300) for node_id, ref in refs.items()}
