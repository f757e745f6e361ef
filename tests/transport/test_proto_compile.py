"""The generated gRPC modules compile on first import, even in a process that has
already loaded TensorFlow (where compiling in-process crashed: seed/transport/proto.py)."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_first_import_compiles_the_proto_after_tensorflow_is_loaded(tmp_path):
    shutil.copytree(ROOT / "seed", tmp_path / "seed",
                    ignore=shutil.ignore_patterns("*_pb2*.py", "__pycache__"))
    assert not list((tmp_path / "seed" / "transport").glob("*_pb2*.py"))
    code = ("from seed import quiet_tf\nquiet_tf.import_tensorflow()\n"
            "from seed.transport.proto import pb2\n"
            "print(pb2.StepRequest(actor_id=3).actor_id)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "3"
    assert sorted(p.name for p in (tmp_path / "seed" / "transport").glob("*_pb2*.py")) == [
        "seed_rl_pb2.py", "seed_rl_pb2_grpc.py"]
