"""gRPC server and client set-up: addresses, message limits, keepalive.

Addresses: ``unix:/path/to.sock`` (local runs, the default) or ``HOST:PORT``
(TCP, for actors on other machines). A server binds loopback unless told a
host explicitly, so a learner is never exposed by accident.

Message limits (:mod:`seed.transport.limits`) are the run's: the server
receives at most the largest legitimate request of any method and refuses a
request over its own method's limit with RESOURCE_EXHAUSTED, before parsing
it. An actor asks for the Spec on a channel that accepts a small reply, then
sizes its data channel by the limits the Spec carries.

Keepalive: both sides ping over HTTP/2 after ``KEEPALIVE_TIME_S`` without
activity and drop the connection when a ping goes unanswered for
``KEEPALIVE_TIMEOUT_S`` (gRPC core needs ``grpc.http2.ping_timeout_ms`` as well
as the keepalive timeout for that), so a peer behind a dead TCP connection (a lost node,
a half-open socket) is noticed within seconds: the learner's calls from it are
cancelled (their threads freed), and an actor reconnects.

Concurrency: the server runs at most ``max_workers`` calls at once, one
thread each, and refuses any call beyond that with RESOURCE_EXHAUSTED rather
than queueing it; how many of them may be streams the SEED learner bounds
itself (:mod:`seed.transport.streams`).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from concurrent import futures

import grpc

from seed.transport import limits as limits_lib
from seed.transport.limits import MessageLimits
from seed.transport.proto import pb2, pb2_grpc
from seed.transport.security import ClientSecurity, ServerSecurity, TokenCheck, TokenMetadata

# A server whose servicer states no limits (tests of a bare servicer).
DEFAULT_LIMITS = MessageLimits(requests={m: 64 * 1024 * 1024 for m in limits_lib.METHODS},
                               response=64 * 1024 * 1024)


KEEPALIVE_TIME_S = 5.0
KEEPALIVE_TIMEOUT_S = 5.0


def keepalive_options(time_s: float = KEEPALIVE_TIME_S, timeout_s: float = KEEPALIVE_TIMEOUT_S,
                      server: bool = False) -> list:
    """Channel arguments for HTTP/2 keepalive; a server also accepts the clients' pings."""
    out = [("grpc.keepalive_time_ms", int(time_s * 1000)),
           ("grpc.keepalive_timeout_ms", int(timeout_s * 1000)),
           ("grpc.keepalive_permit_without_calls", 1),
           ("grpc.http2.max_pings_without_data", 0),
           ("grpc.http2.ping_timeout_ms", int(timeout_s * 1000))]
    if server:  # a client pinging every time_s is no abuse
        out += [("grpc.http2.min_recv_ping_interval_without_data_ms",
                 int(min(time_s, 1.0) * 1000)),
                ("grpc.http2.max_ping_strikes", 0)]
    return out


def _size_options(send: int | None, receive: int | None) -> list:
    """Channel arguments for these limits (None: gRPC's default)."""
    out = []
    if send is not None:
        out.append(("grpc.max_send_message_length", int(send)))
    if receive is not None:
        out.append(("grpc.max_receive_message_length", int(receive)))
    return out


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

    code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, kind: str, error: Exception):
        self.message = f"{kind}: bytes do not parse ({error})"


class Oversize(Undecodable):
    """Stands in for a request over its method's size limit; never parsed."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(self, method: str, size: int, limit: int):
        self.message = (f"{method}: a {size}-byte request exceeds this learner's limit of "
                        f"{limit} bytes for the method (sized from the run's spec)")


def _tolerant(message_cls, method: str, limit: int):
    """A deserializer that never raises, so bad bytes reach the handler as Undecodable.

    gRPC answers a deserializer exception with INTERNAL; a client that sent
    garbage should hear INVALID_ARGUMENT, on its own call only. A request over
    ``limit`` bytes is not parsed at all.
    """
    def deserialize(data: bytes):
        if len(data) > limit:
            return Oversize(method, len(data), limit)
        try:
            return message_cls.FromString(data)
        except Exception as e:  # protobuf DecodeError and friends
            return Undecodable(message_cls.__name__, e)
    return deserialize


def reject_undecodable(request, context) -> None:
    """End the call when the request did not parse (INVALID_ARGUMENT) or was over its
    method's size limit (RESOURCE_EXHAUSTED)."""
    if isinstance(request, Undecodable):
        context.abort(request.code, request.message)


def _handlers(servicer, limits: MessageLimits) -> grpc.GenericRpcHandler:
    def des(method, req):
        return _tolerant(req, method, limits.request(method))

    def unary(method, req, resp):
        return grpc.unary_unary_rpc_method_handler(
            getattr(servicer, method), request_deserializer=des(method, req),
            response_serializer=resp.SerializeToString)

    return grpc.method_handlers_generic_handler("seedrl.Learner", {
        "GetSpec": unary("GetSpec", pb2.SpecRequest, pb2.Spec),
        "StreamSteps": grpc.stream_stream_rpc_method_handler(
            servicer.StreamSteps, request_deserializer=des("StreamSteps", pb2.StepRequest),
            response_serializer=pb2.StepResponse.SerializeToString),
        "SendUnroll": unary("SendUnroll", pb2.UnrollMessage, pb2.UnrollAck),
        "GetParameters": unary("GetParameters", pb2.ParametersRequest, pb2.Parameters),
    })


def start_server(servicer, address: str, max_workers: int,
                 limits: MessageLimits | None = None,
                 keepalive: tuple[float, float] = (KEEPALIVE_TIME_S, KEEPALIVE_TIMEOUT_S),
                 security: ServerSecurity | None = None) -> tuple[grpc.Server, str]:
    """Serve ``servicer`` (a LearnerServicer) at ``address``; returns (server, bound address).

    ``limits``: the run's message limits; by default the servicer's ``limits``.
    At most ``max_workers`` calls run at once; more are refused (RESOURCE_EXHAUSTED).
    ``security``: an auth token every call must carry, TLS (see
    :mod:`seed.transport.security`); none by default.
    """
    security = security or ServerSecurity()
    address = normalize_server_address(address)
    limits = limits or getattr(servicer, "limits", None) or DEFAULT_LIMITS
    options = (_size_options(limits.response, limits.max_request)
               + keepalive_options(*keepalive, server=True) + [("grpc.so_reuseport", 0)])
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers,
                                                    thread_name_prefix="grpc"),
                         options=options, maximum_concurrent_rpcs=max_workers,
                         interceptors=[TokenCheck(security.token)] if security.token else None)
    server.add_generic_rpc_handlers((_handlers(servicer, limits),))
    if security.tls:
        port = server.add_secure_port(address, grpc.ssl_server_credentials(
            [(security.private_key, security.cert_chain)]))
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind learner address {address}")
    if not address.startswith("unix:"):
        host = address.rsplit(":", 1)[0]
        address = f"{host}:{port}"
    server.start()
    return server, address


def connect(address: str, spec: "pb2.Spec | None" = None,
            security: ClientSecurity | None = None
            ) -> tuple[grpc.Channel, "pb2_grpc.LearnerStub"]:
    """A channel to the learner, sized by the limits in ``spec``.

    Without a spec (to ask for one), it sends small requests and accepts a reply of
    up to ``SPEC_REPLY_BYTES``; a spec without limits (an older learner) leaves
    gRPC's defaults. ``security``: the token to send on every call, the CA to verify
    a TLS learner against.
    """
    security = security or ClientSecurity()
    if spec is None:
        sizes = _size_options(limits_lib.SMALL_REQUEST_BYTES, limits_lib.SPEC_REPLY_BYTES)
    else:
        sizes = _size_options(spec.max_request_bytes or None, spec.max_response_bytes or None)
    options = sizes + keepalive_options()
    if security.root_certs is not None:
        channel = grpc.secure_channel(
            address, grpc.ssl_channel_credentials(root_certificates=security.root_certs),
            options=options)
    else:
        channel = grpc.insecure_channel(address, options=options)
    if security.token:
        channel = grpc.intercept_channel(channel, TokenMetadata(security.token))
    return channel, pb2_grpc.LearnerStub(channel)


def unix_socket_path(address: str) -> str | None:
    return address[len("unix:"):] if address.startswith("unix:") else None
