"""gRPC server and client set-up: addresses, message limits, keepalive.

Addresses: ``unix:/path/to.sock`` (local runs, the default) or ``HOST:PORT``
(TCP, for actors on other machines). A server binds loopback unless told a
host explicitly, so a learner is never exposed by accident.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from concurrent import futures

import grpc

from seed.transport.proto import pb2, pb2_grpc

MAX_MESSAGE_BYTES = 512 * 1024 * 1024  # IMPALA parameter pulls of large networks

_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.so_reuseport", 0),
]


def fresh_unix_address() -> str:
    """A new Unix socket address (kept short: socket paths are limited to ~107 bytes)."""
    return f"unix:{tempfile.gettempdir()}/seed-{os.getpid()}-{uuid.uuid4().hex[:8]}.sock"


def normalize_server_address(address: str) -> str:
    """``'' -> fresh unix socket``; ``':PORT'`` or ``'PORT'`` -> loopback."""
    if not address:
        return fresh_unix_address()
    if address.startswith("unix:"):
        return address
    if address.isdigit():
        return f"127.0.0.1:{address}"
    if address.startswith(":"):
        return f"127.0.0.1{address}"
    return address


class Undecodable:
    """Stands in for a request whose bytes did not parse; handlers answer INVALID_ARGUMENT."""

    def __init__(self, kind: str, error: Exception):
        self.message = f"{kind}: bytes do not parse ({error})"


def _tolerant(message_cls):
    """A deserializer that never raises, so bad bytes reach the handler as Undecodable.

    gRPC answers a deserializer exception with INTERNAL; a client that sent
    garbage should hear INVALID_ARGUMENT, on its own call only.
    """
    def deserialize(data: bytes):
        try:
            return message_cls.FromString(data)
        except Exception as e:  # protobuf DecodeError and friends
            return Undecodable(message_cls.__name__, e)
    return deserialize


def reject_undecodable(request, context) -> None:
    if isinstance(request, Undecodable):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)


def _handlers(servicer) -> grpc.GenericRpcHandler:
    def unary(fn, req, resp):
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=_tolerant(req), response_serializer=resp.SerializeToString)

    return grpc.method_handlers_generic_handler("seedrl.Learner", {
        "GetSpec": unary(servicer.GetSpec, pb2.SpecRequest, pb2.Spec),
        "StreamSteps": grpc.stream_stream_rpc_method_handler(
            servicer.StreamSteps, request_deserializer=_tolerant(pb2.StepRequest),
            response_serializer=pb2.StepResponse.SerializeToString),
        "SendUnroll": unary(servicer.SendUnroll, pb2.UnrollMessage, pb2.UnrollAck),
        "GetParameters": unary(servicer.GetParameters, pb2.ParametersRequest, pb2.Parameters),
    })


def start_server(servicer, address: str, max_workers: int) -> tuple[grpc.Server, str]:
    """Serve ``servicer`` (a LearnerServicer) at ``address``; returns (server, bound address)."""
    address = normalize_server_address(address)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers,
                                                    thread_name_prefix="grpc"),
                         options=_OPTIONS, maximum_concurrent_rpcs=None)
    server.add_generic_rpc_handlers((_handlers(servicer),))
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind learner address {address}")
    if not address.startswith("unix:"):
        host = address.rsplit(":", 1)[0]
        address = f"{host}:{port}"
    server.start()
    return server, address


def connect(address: str) -> tuple[grpc.Channel, "pb2_grpc.LearnerStub"]:
    channel = grpc.insecure_channel(address, options=_OPTIONS)
    return channel, pb2_grpc.LearnerStub(channel)


def unix_socket_path(address: str) -> str | None:
    return address[len("unix:"):] if address.startswith("unix:") else None
