"""The CPU a process runs on: its model, the flags that say what it computes with, whether
it has bfloat16, and its peak FLOP/s per dtype (derivation: docs/performance.md, "The
machine's peak").

Read from ``/proc/cpuinfo`` (the file ``$SEED_CPUINFO`` names instead, where set: a test's
CPU, or a machine whose kernel hides flags) and, for the clock, the kernel's cpufreq limit
where it has one. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import os
from pathlib import Path

CPUINFO = "/proc/cpuinfo"
MAX_FREQ = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"  # kHz

#: The flags that say what the vector and matrix units compute; recorded where present.
COMPUTE_FLAGS = ("sse2", "avx", "fma", "avx2", "avx512f", "avx512_vnni", "avx512_bf16",
                 "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8")

#: bfloat16 is fast where the CPU has either: VDPBF16PS (AVX512-BF16) or AMX's tile multiply.
BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")

#: FLOPs a core's AMX tile unit does each cycle in bfloat16 (Sapphire Rapids: 1024, 16 times
#: its AVX-512 float32 FMAs).
AMX_BF16_FLOPS_PER_CYCLE = 1024


def cpuinfo_path() -> str:
    return os.environ.get("SEED_CPUINFO") or CPUINFO


def read_cpu(path: str | None = None, max_freq_path: str = MAX_FREQ) -> dict:
    """The CPU's model, vendor, family/model numbers, logical CPUs per physical core,
    clock and :data:`COMPUTE_FLAGS`, from the first processor of ``path``
    (:func:`cpuinfo_path` by default)."""
    path = path or cpuinfo_path()
    blocks = [b for b in Path(path).read_text().split("\n\n") if b.strip()]
    if not blocks:
        raise ValueError(f"{path} lists no processor")
    fields = {}
    for line in blocks[0].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    mhz = [float(line.partition(":")[2]) for b in blocks for line in b.splitlines()
           if line.startswith("cpu MHz")]
    siblings, cores = int(fields.get("siblings", 1)), int(fields.get("cpu cores", 1))
    clock_mhz, clock_source = (max(mhz) if mhz else None), "cpu MHz in " + path
    if Path(max_freq_path).exists():
        clock_mhz, clock_source = int(Path(max_freq_path).read_text()) / 1000, max_freq_path
    return {"model_name": fields.get("model name", "unknown"),
            "vendor": fields.get("vendor_id", "unknown"),
            "family": int(fields.get("cpu family", 0)), "model": int(fields.get("model", 0)),
            "threads_per_core": max(1, siblings // max(cores, 1)),
            "clock_mhz": clock_mhz, "clock_source": clock_source,
            "flags": [f for f in COMPUTE_FLAGS if f in flags]}


def has_bfloat16(cpu: dict) -> bool:
    return any(f in cpu["flags"] for f in BFLOAT16_FLAGS)


def effective_compute_dtype(asked: str, cpu: dict) -> tuple[str, str | None]:
    """(the ``compute_dtype`` a run uses, the line saying why it differs from ``asked`` or
    None): a bfloat16 one asked for on a CPU without bfloat16 becomes float32."""
    if not asked.startswith("bfloat16") or has_bfloat16(cpu):
        return asked, None
    return "float32", (f"compute_dtype {asked} asked for, but this CPU ({cpu['model_name']}) "
                       f"has no {' or '.join(BFLOAT16_FLAGS)}: computing in float32")


def with_effective_compute_dtype(config, echo=print):
    """``config`` with the ``compute_dtype`` this CPU computes in; ``echo`` gets the one line
    of :func:`effective_compute_dtype` where it differs from the one asked for."""
    dtype, why = effective_compute_dtype(config.compute_dtype, read_cpu())
    if why is None:
        return config
    echo(why)
    from seed.config import replaced
    return replaced(config, compute_dtype=dtype)


def vector_bits(cpu: dict) -> int:
    flags = cpu["flags"]
    return 512 if "avx512f" in flags else 256 if "avx" in flags else 128


def fma_units(cpu: dict) -> tuple[int, str]:
    """(FMA units per core at :func:`vector_bits`' width, why): what one core issues each
    cycle. The flags do not say it; this is each family's documented count."""
    vendor, family, model = cpu["vendor"], cpu["family"], cpu["model"]
    avx512 = "avx512f" in cpu["flags"]
    if vendor == "AuthenticAMD":
        if family == 0x17 and model < 0x30:
            return 1, "AMD Zen 1: 256-bit ops on two 128-bit FMA pipes"
        if family == 0x19 and avx512:
            return 1, "AMD Zen 4: 512-bit ops on two 256-bit FMA pipes"
        if family in (0x17, 0x19):
            return 2, "AMD Zen 2/3: two 256-bit FMA pipes"
        if family == 0x1A:
            return 2, "AMD Zen 5: two 512-bit FMA pipes"
    if vendor == "GenuineIntel":
        name = cpu["model_name"]
        if avx512 and ("Silver" in name or "Bronze" in name):
            return 1, "Intel Xeon Silver/Bronze: one 512-bit FMA unit"
        return 2, ("Intel Xeon Scalable (Gold, Platinum) and Core since Haswell: two FMA "
                   "units at the vector width")
    return 2, "not in the table: two FMA units assumed"


def peak_flops(cpu: dict, logical_cpus: int) -> dict:
    """The peak FLOP/s of ``logical_cpus`` of this CPU per dtype, and its terms.

    float32: physical cores x clock x (vector bits / 32) lanes x 2 (an FMA is a multiply and
    an add) x FMA units per core. bfloat16: with AMX, :data:`AMX_BF16_FLOPS_PER_CYCLE` a
    core; with AVX512-BF16, VDPBF16PS takes twice the float32 lanes in pairs (2 x the float32
    peak); without either, None (a run computes in float32).
    """
    cores = max(1, logical_cpus // cpu["threads_per_core"])
    units, why = fma_units(cpu)
    lanes = vector_bits(cpu) // 32
    per_cycle = lanes * 2 * units
    hz = (cpu["clock_mhz"] or 0.0) * 1e6
    float32 = cores * hz * per_cycle
    if "amx_bf16" in cpu["flags"]:
        bfloat16, unit = cores * hz * AMX_BF16_FLOPS_PER_CYCLE, "AMX tiles"
    elif "avx512_bf16" in cpu["flags"]:
        bfloat16, unit = 2 * float32, "VDPBF16PS (AVX512-BF16)"
    else:
        bfloat16, unit = None, None
    return {"float32": float32 or None, "bfloat16": bfloat16 or None,
            "physical_cores": cores, "clock_ghz": hz / 1e9, "vector_bits": vector_bits(cpu),
            "float32_lanes": lanes, "fma_units_per_core": units, "fma_units_source": why,
            "float32_flops_per_cycle_per_core": per_cycle, "bfloat16_unit": unit}
