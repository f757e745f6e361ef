"""Who may connect to a learner: an opt-in shared-secret token and opt-in TLS.

- **Token.** A learner started with a token checks it on every call: a call
  without metadata ``authorization: Bearer <token>``, or with another token,
  ends with UNAUTHENTICATED before the service sees it (nothing is read,
  counted or changed). The token comes from the file named by
  ``--auth-token-file PATH`` (config ``auth_token_file``: the path, never the
  token) or else from the ``SEED_AUTH_TOKEN`` environment variable, on the
  learner and on every actor. It never goes into argv, ``config.json`` or logs.
- **TLS.** A learner given ``tls_cert_file`` and ``tls_key_file`` (PEM) serves
  over TLS; actors verify it against ``tls_ca_file`` (default: the certificate
  itself, for a self-signed one). The certificate must name the address actors
  dial (a DNS name or an IP address in its subjectAltName).

Both are off by default: local runs use a Unix socket of the learner's own
user and need neither.
"""

from __future__ import annotations

import collections
import dataclasses
import hmac
import logging
import os
import threading
import time
from pathlib import Path

import grpc

from seed.config import ConfigError

log = logging.getLogger(__name__)

TOKEN_ENV = "SEED_AUTH_TOKEN"
METADATA_KEY = "authorization"


class SecurityError(ConfigError):
    """A token or certificate that cannot be used (the message never holds the token)."""


def _read(path: str, what: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise SecurityError(f"cannot read the {what} {path}: {e.strerror}") from None
    if not data.strip():
        raise SecurityError(f"the {what} {path} is empty")
    return data


def read_token(token_file: str = "") -> str | None:
    """The token from ``token_file``, else from $SEED_AUTH_TOKEN, else None (no token)."""
    if token_file:
        token = _read(token_file, "auth token file").decode("utf-8", "replace").strip()
        if os.stat(token_file).st_mode & 0o077:
            log.warning("the auth token file %s is readable by other users (chmod 600 it)",
                        token_file)
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
    if token and any(c.isspace() or not c.isprintable() for c in token):
        raise SecurityError("the auth token must be one line of printable characters "
                            "without spaces")
    return token or None


@dataclasses.dataclass(frozen=True)
class ServerSecurity:
    token: str | None = dataclasses.field(default=None, repr=False)
    cert_chain: bytes | None = dataclasses.field(default=None, repr=False)
    private_key: bytes | None = dataclasses.field(default=None, repr=False)

    @property
    def tls(self) -> bool:
        return self.cert_chain is not None

    def describe(self) -> str:
        return (f"auth token {'on' if self.token else 'off'}, "
                f"TLS {'on' if self.tls else 'off'}")


@dataclasses.dataclass(frozen=True)
class ClientSecurity:
    token: str | None = dataclasses.field(default=None, repr=False)
    root_certs: bytes | None = dataclasses.field(default=None, repr=False)


def server_security(token_file: str = "", cert_file: str = "",
                    key_file: str = "") -> ServerSecurity:
    if bool(cert_file) != bool(key_file):
        raise SecurityError("TLS needs both --tls-cert-file and --tls-key-file")
    return ServerSecurity(
        token=read_token(token_file),
        cert_chain=_read(cert_file, "TLS certificate file") if cert_file else None,
        private_key=_read(key_file, "TLS key file") if key_file else None)


def client_security(token_file: str = "", ca_file: str = "") -> ClientSecurity:
    return ClientSecurity(token=read_token(token_file),
                          root_certs=_read(ca_file, "TLS CA file") if ca_file else None)


# -- server side -------------------------------------------------------------------------

def _denied(handler, message: str):
    """A handler of the same shape as ``handler`` that only refuses the call."""
    code = grpc.StatusCode.UNAUTHENTICATED

    def deny(request_or_iterator, context):
        context.abort(code, message)

    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(deny)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(deny)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(deny)
    return grpc.unary_unary_rpc_method_handler(deny)


class TokenCheck(grpc.ServerInterceptor):
    """Lets a call through only with ``authorization: Bearer <token>``."""

    def __init__(self, token: str):
        self._expected = f"Bearer {token}".encode()
        self._lock = threading.Lock()
        self.refused = 0
        self._last_log = 0.0

    def _authorized(self, metadata) -> bool:
        for key, value in metadata or ():
            if key == METADATA_KEY:
                got = value.encode() if isinstance(value, str) else bytes(value)
                return hmac.compare_digest(got, self._expected)
        return False

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or self._authorized(handler_call_details.invocation_metadata):
            return handler
        with self._lock:
            self.refused += 1
            refused, now = self.refused, time.monotonic()
            quiet = now - self._last_log < 10.0
            if not quiet:
                self._last_log = now
        if not quiet:
            log.warning("refused a call to %s without a valid auth token (%d so far)",
                        handler_call_details.method, refused)
        return _denied(handler, "missing or wrong auth token")


# -- client side -------------------------------------------------------------------------

class _CallDetails(collections.namedtuple(
        "_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready",
                         "compression")), grpc.ClientCallDetails):
    pass


class TokenMetadata(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                    grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds ``authorization: Bearer <token>`` to every call of a channel."""

    def __init__(self, token: str):
        self._entry = (METADATA_KEY, f"Bearer {token}")

    def __repr__(self) -> str:
        return "TokenMetadata(<token>)"

    def _details(self, d):
        return _CallDetails(d.method, d.timeout, list(d.metadata or ()) + [self._entry],
                            d.credentials, d.wait_for_ready, d.compression)

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return continuation(self._details(client_call_details), request_iterator)
