"""Peers of a learner's StreamSteps streams that behave as a real actor would not: a stream
that sends only when told, a TCP link that freezes with both sockets open."""

import queue
import select
import socket
import threading
import time

import grpc
import numpy as np
import pytest

from seed.transport import tensor as wire
from seed.transport.proto import pb2


class HeldStream:
    """A client stream fed from a queue: it sends what it is given and otherwise waits."""

    def __init__(self, stub, timeout=60):
        self._q = queue.Queue()
        self.call = stub.StreamSteps(iter(self._q.get, None), timeout=timeout)

    def step(self, env_ids, run_id):
        k = len(env_ids)
        self._q.put(pb2.StepRequest(
            actor_id=0, run_id=run_id, env_ids=env_ids,
            reward=wire.encode(np.zeros(k, np.float32)), done=wire.encode(np.ones(k, bool)),
            observation=wire.encode(np.zeros((k, 10, 5), np.float32))))
        return wire.decode(next(self.call).action, dtype="int32", shape=(k,))

    def ended_with(self):
        """The status the learner ended this stream with (waits for the end)."""
        with pytest.raises(grpc.RpcError) as err:
            next(self.call)
        return err.value.code()

    def close(self):
        self._q.put(None)
        self.call.cancel()


class FreezingProxy:
    """TCP proxy that can stop forwarding while keeping both sockets open: a half-open
    connection, as a peer behind a dead link or a lost node looks to the learner."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.frozen = threading.Event()
        self.stop = threading.Event()
        self.sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        self.listener.settimeout(0.2)
        while not self.stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a, b):
        peer = {a: b, b: a}
        while not self.stop.is_set():
            if self.frozen.is_set():
                time.sleep(0.05)  # read nothing, send nothing, close nothing
                continue
            ready, _, _ = select.select([a, b], [], [], 0.05)
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                peer[s].sendall(data)

    def close(self):
        self.stop.set()
        for s in self.sockets + [self.listener]:
            s.close()
