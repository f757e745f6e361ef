"""Who may connect: the shared-secret token on every call, TLS from certificate files."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from seed.config import ConfigError, make_config
from seed.runtime.architectures import architecture
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.seed_arch.actor import run_actor
from seed.runtime.seed_arch.learner import SeedLearnerService
from seed.transport.channel import connect, start_server
from seed.transport.proto import pb2
from seed.transport.security import (TOKEN_ENV, ClientSecurity, client_security, read_token,
                                     server_security)
from tests.support.tls_files import TOKEN, self_signed, token_file

ROOT = Path(__file__).resolve().parents[2]
class Learner:
    def __init__(self, security, address=""):
        self.config = make_config(env="toy:catch", actors=2, envs_per_actor=2, train=False,
                                  inference_timeout_ms=1.0, frames=10_000, progress=False)
        self.core = LearnerCore(self.config, EnvSpec.probe(self.config.env, {}))
        self.service = SeedLearnerService(self.core)
        workers = architecture("seed").grpc_workers(self.config)
        self.server, self.address = start_server(self.service, address, max_workers=workers,
                                                 security=security)

    def close(self):
        self.service.close()
        self.core.stop()
        self.server.stop(0)


@pytest.fixture()
def token_learner(tmp_path):
    learner = Learner(server_security(token_file(tmp_path)))
    yield learner
    learner.close()


def get_spec(address, security=None):
    channel, stub = connect(address, security=security)
    try:
        return stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    finally:
        channel.close()


def test_token_comes_from_the_file_or_else_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert read_token("") is None
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    assert read_token("") == "from-env"
    assert read_token(token_file(tmp_path, "from-file")) == "from-file"
    with pytest.raises(ConfigError, match="cannot read the auth token file"):
        read_token(str(tmp_path / "missing"))
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        read_token(str(tmp_path / "empty"))


def test_the_token_is_never_in_a_repr(tmp_path):
    assert TOKEN not in repr(client_security(token_file(tmp_path)))
    assert TOKEN not in repr(server_security(token_file(tmp_path)))


@pytest.mark.parametrize("security", [None, ClientSecurity(token="wrong-token")],
                         ids=["missing", "wrong"])
def test_a_call_without_the_token_is_unauthenticated_and_touches_nothing(
        token_learner, security, caplog):
    with caplog.at_level(logging.WARNING):
        with pytest.raises(grpc.RpcError) as err:
            get_spec(token_learner.address, security)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        channel, stub = connect(token_learner.address, security=security)
        with pytest.raises(grpc.RpcError) as err:
            next(stub.StreamSteps(iter([pb2.StepRequest(actor_id=0)]), timeout=10))
        channel.close()
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert token_learner.service.streams.counts["opened"] == 0  # the service never saw it
    assert token_learner.core.stats.env_steps == 0
    assert TOKEN not in caplog.text and "wrong-token" not in caplog.text


def test_an_actor_with_the_token_is_served(token_learner, tmp_path, monkeypatch):
    from_file = client_security(token_file(tmp_path, name="actor-token"))
    assert get_spec(token_learner.address, from_file).num_actors == 2
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert run_actor(token_learner.address, task=0, max_steps=100,
                     security=client_security()) == 0
    assert token_learner.core.stats.env_steps >= 100


def test_tls_with_a_token_serves_only_actors_that_trust_the_certificate(tmp_path):
    cert, key = self_signed(tmp_path)
    learner = Learner(server_security(token_file(tmp_path), cert, key), address="127.0.0.1:0")
    try:
        good = client_security(token_file(tmp_path), ca_file=cert)
        assert get_spec(learner.address, good).envs_per_actor == 2
        assert run_actor(learner.address, task=1, max_steps=100, security=good) == 0
        with pytest.raises(grpc.RpcError) as err:  # plaintext to a TLS port
            get_spec(learner.address, ClientSecurity(token=TOKEN))
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        with pytest.raises(grpc.RpcError) as err:  # TLS, wrong token
            get_spec(learner.address, ClientSecurity(token="nope", root_certs=good.root_certs))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        learner.close()


def test_tls_needs_both_certificate_and_key(tmp_path):
    cert, _ = self_signed(tmp_path)
    with pytest.raises(ConfigError, match="both --tls-cert-file and --tls-key-file"):
        server_security(cert_file=cert)


def test_seed_actor_with_a_wrong_token_ends_with_one_line(token_learner, tmp_path):
    wrong = token_file(tmp_path, "not-the-token", name="wrong")
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    proc = subprocess.run(
        [sys.executable, "-m", "seed.cli", "actor", "--server", token_learner.address,
         "--task", "0", "--auth-token-file", wrong, "--connect-timeout", "5"],
        cwd=ROOT, env=dict(env, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
        timeout=120)
    assert proc.returncode == 2
    assert "UNAUTHENTICATED" in proc.stderr and "Traceback" not in proc.stderr
    assert "not-the-token" not in proc.stderr + proc.stdout


def test_seed_train_with_a_token_file_keeps_it_out_of_config_logs_and_argv(tmp_path):
    run_dir = tmp_path / "run"
    path = token_file(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    proc = subprocess.run(
        [sys.executable, "-m", "seed.cli", "train", "--env", "toy:catch", "--actors", "1",
         "--envs-per-actor", "2", "--frames", "2000", "--logdir", str(run_dir),
         "--no-progress", "--auth-token-file", path],
        cwd=ROOT, env=dict(env, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
        timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    config = json.loads((run_dir / "config.json").read_text())["config"]
    assert config["transport"]["auth_token_file"] == path
    written = "".join(p.read_text(errors="replace") for p in run_dir.rglob("*")
                      if p.is_file() and p.suffix in (".json", ".csv", ".log"))
    assert TOKEN not in written + proc.stdout + proc.stderr
    assert "auth token on" in proc.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["env_frames"] >= 2000
