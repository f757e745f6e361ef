"""The roofline's FLOPs (seed.bench.flops): achieved FLOP/s and share of the peak by hand, and
how the roofline's type shows them (seed.results.roofline), "not measured" in a file from
before FLOPs were counted."""

import pytest

from seed.bench import flops
from seed.config import make_config
from seed.metrics import cpu_facts
from seed.results.roofline import (Roofline, flops_per_frame, inference_flops, peak_flops,
                                   training_flops)

# 2 cores at 2 GHz, AVX-512 with two FMA units and VDPBF16PS: float32 peak
# 2 x 2e9 x 16 x 2 x 2 = 256 GFLOP/s, bfloat16 twice that.
CPU = {"model_name": "Test Xeon", "vendor": "GenuineIntel", "family": 6, "model": 85,
       "threads_per_core": 1, "clock_mhz": 2000.0, "clock_source": "test",
       "flags": ["avx", "fma", "avx2", "avx512f", "avx512_bf16"]}
COUNTS = {"forward_per_env_step": 1_000_000, "backward_per_env_step": 1_500_000,
          "layers": [["conv1", 500_000], ["fc", 500_000]], "train_step": 80_000_000}
INFERENCE = {"1": {"wall_s_per_call": 0.001}, "32": {"wall_s_per_call": 0.004}}
TRAINING = {"wall_s_per_step": 0.5, "env_steps_per_train_step": 20}


def _roofline(flops_counted: dict | None) -> Roofline:
    return Roofline(env="toy:catch", network="mlp", ceilings={}, inference=INFERENCE,
                    training=TRAINING, flops=flops_counted)


@pytest.fixture(autouse=True)
def test_cpu(monkeypatch):
    monkeypatch.setattr(cpu_facts, "read_cpu", lambda: CPU)


def test_achieved_flops_and_share_of_the_peak_of_the_dtype_each_computed_in():
    config = make_config(compute_dtype="bfloat16_train")
    f = flops.achieved(COUNTS, config, 4, 2, INFERENCE, TRAINING)
    assert f["peak"]["float32"] == pytest.approx(256e9)
    assert f["peak"]["bfloat16"] == pytest.approx(512e9)
    assert f["inference_per_frame"] == 250_000  # 4 frames a step
    assert f["train_per_frame"] == 80_000_000 / (20 * 4)
    # inference in float32: 32 rows x 1 MFLOP in 4 ms = 8 GFLOP/s, 3.125% of 256
    assert f["inference"]["32"] == {"flops_per_s": pytest.approx(8e9), "dtype": "float32",
                                    "share_of_peak": pytest.approx(8e9 / 256e9)}
    assert f["inference"]["1"]["flops_per_s"] == pytest.approx(1e9)
    # the train step in bfloat16: 80 MFLOP in 0.5 s = 160 MFLOP/s of 512 GFLOP/s
    assert f["training"] == {"flops_per_s": pytest.approx(160e6), "dtype": "bfloat16",
                             "share_of_peak": pytest.approx(160e6 / 512e9)}
    assert f["cpu"] is CPU and f["compute_dtype"] == "bfloat16_train"
    roof = _roofline(f)
    assert inference_flops(roof, "32") == "8 GFLOP/s float32, 3.1% of peak"
    assert training_flops(roof) == "160 MFLOP/s bfloat16, 0.031% of peak"
    assert flops_per_frame(roof) == "inference 250 kFLOP, train step 1 MFLOP"
    assert peak_flops(roof) == (
        "Test Xeon, 2 cores at 2.00 GHz, 512-bit x 2 FMA: float32 256 GFLOP/s, bfloat16 "
        "512 GFLOP/s (VDPBF16PS (AVX512-BF16)); computed in bfloat16_train")
    assert "\n  FLOP/s, inference batch 32: 8 GFLOP/s float32, 3.1% of peak\n" in roof.format()


def test_no_peak_for_a_dtype_the_cpu_lacks_and_no_train_count_for_an_unknown_agent(
        monkeypatch):
    monkeypatch.setattr(cpu_facts, "read_cpu", lambda: dict(CPU, flags=["avx", "fma", "avx2"]))
    counts = dict(COUNTS, train_step=None)
    f = flops.achieved(counts, make_config(compute_dtype="bfloat16"), 1, 2, INFERENCE, TRAINING)
    assert f["peak"]["bfloat16"] is None and f["inference"]["1"]["share_of_peak"] is None
    assert f["training"] is None and f["train_per_frame"] is None
    roof = _roofline(f)
    assert inference_flops(roof, "1") == "1 GFLOP/s bfloat16, no peak for it"
    assert inference_flops(roof, "8") is None  # no batch of 8 was timed
    assert training_flops(roof) == "not measured"
    assert flops_per_frame(roof) == "inference 1 MFLOP, train step not measured"


def test_a_roofline_from_before_flops_were_counted_says_not_measured():
    old = _roofline(None)
    assert flops_per_frame(old) == peak_flops(old) == "not measured"
    assert inference_flops(old, "32") == training_flops(old) == "not measured"
    printed = old.format().splitlines()
    assert [line for line in printed if "FLOP" in line] == [
        "  FLOPs per frame: not measured", "  peak FLOP/s: not measured",
        "  FLOP/s, inference batch 1: not measured", "  FLOP/s, inference batch 32: not measured",
        "  FLOP/s, train step: not measured"]
