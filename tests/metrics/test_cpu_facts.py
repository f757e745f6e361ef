"""seed.metrics.cpu_facts: the CPU read from cpuinfo, its bfloat16, its peak FLOP/s by hand."""

import pytest

from seed.config import make_config
from seed.metrics import cpu_facts


def cpuinfo(tmp_path, name="AMD EPYC", vendor="AuthenticAMD", family=25, model=1,
            flags="fpu sse2 avx fma avx2", mhz=(2445.428, 2445.428), siblings=2, cores=2):
    """A cpuinfo file of ``len(mhz)`` processors."""
    blocks = [f"processor\t: {i}\nvendor_id\t: {vendor}\ncpu family\t: {family}\n"
              f"model\t\t: {model}\nmodel name\t: {name}\ncpu MHz\t\t: {m}\n"
              f"siblings\t: {siblings}\ncpu cores\t: {cores}\nflags\t\t: {flags}\n"
              for i, m in enumerate(mhz)]
    path = tmp_path / "cpuinfo"
    path.write_text("\n".join(blocks))
    return str(path)


def read(tmp_path, **kwargs):
    return cpu_facts.read_cpu(cpuinfo(tmp_path, **kwargs),
                              max_freq_path=str(tmp_path / "none"))


def test_an_amd_zen3_without_bfloat16(tmp_path):
    c = read(tmp_path, mhz=(2445.428, 2600.0))
    assert c == {"model_name": "AMD EPYC", "vendor": "AuthenticAMD", "family": 25, "model": 1,
                 "threads_per_core": 1, "clock_mhz": 2600.0,
                 "clock_source": f"cpu MHz in {tmp_path / 'cpuinfo'}",
                 "flags": ["sse2", "avx", "fma", "avx2"]}
    assert not cpu_facts.has_bfloat16(c)
    peak = cpu_facts.peak_flops(c, 2)
    # 2 cores x 2.6 GHz x 8 float32 lanes (256 bits) x 2 (FMA) x 2 FMA pipes
    assert peak["float32"] == pytest.approx(2 * 2.6e9 * 8 * 2 * 2)
    assert peak["bfloat16"] is None and peak["fma_units_per_core"] == 2


def test_the_clock_comes_from_cpufreq_where_the_kernel_has_it(tmp_path):
    (tmp_path / "max_freq").write_text("3500000\n")  # kHz
    c = cpu_facts.read_cpu(cpuinfo(tmp_path), max_freq_path=str(tmp_path / "max_freq"))
    assert c["clock_mhz"] == 3500.0 and c["clock_source"] == str(tmp_path / "max_freq")


def test_a_sapphire_rapids_with_amx_and_hyperthreads(tmp_path):
    c = read(tmp_path, name="Intel(R) Xeon(R) Platinum 8480+", vendor="GenuineIntel",
             family=6, model=143, mhz=(2000.0,), siblings=4, cores=2,
             flags="sse2 avx fma avx2 avx512f avx512_vnni avx512_bf16 amx_tile amx_bf16 "
                   "avx_vnni")
    assert c["flags"] == ["sse2", "avx", "fma", "avx2", "avx512f", "avx512_vnni",
                          "avx512_bf16", "avx_vnni", "amx_tile", "amx_bf16"]
    peak = cpu_facts.peak_flops(c, 4)  # 4 logical CPUs, 2 physical cores
    assert peak["physical_cores"] == 2
    assert peak["float32"] == pytest.approx(2 * 2.0e9 * 16 * 2 * 2)
    assert peak["bfloat16"] == pytest.approx(2 * 2.0e9 * 1024)
    assert peak["bfloat16_unit"] == "AMX tiles"


def test_avx512_bf16_without_amx_doubles_the_float32_peak(tmp_path):
    c = read(tmp_path, name="Intel(R) Xeon(R) Gold 6348H", vendor="GenuineIntel", family=6,
             model=85, mhz=(2300.0,), flags="avx fma avx2 avx512f avx512_bf16")
    peak = cpu_facts.peak_flops(c, 2)
    assert peak["float32"] == pytest.approx(2 * 2.3e9 * 16 * 2 * 2)
    assert peak["bfloat16"] == pytest.approx(2 * peak["float32"])


@pytest.mark.parametrize("name,vendor,family,model,flags,units", [
    ("AMD EPYC 9654", "AuthenticAMD", 25, 17, "avx fma avx2 avx512f avx512_bf16", 1),  # Zen 4
    ("AMD EPYC 7601", "AuthenticAMD", 23, 1, "avx fma avx2", 1),  # Zen 1
    ("AMD EPYC 7742", "AuthenticAMD", 23, 49, "avx fma avx2", 2),  # Zen 2
    ("Intel(R) Xeon(R) Silver 4214", "GenuineIntel", 6, 85, "avx fma avx2 avx512f", 1),
])
def test_fma_units_per_core_by_family(tmp_path, name, vendor, family, model, flags, units):
    c = read(tmp_path, name=name, vendor=vendor, family=family, model=model, flags=flags)
    assert cpu_facts.fma_units(c)[0] == units


def test_bfloat16_asked_for_without_it_computes_in_float32_and_says_so_once(tmp_path,
                                                                            monkeypatch):
    zen3 = read(tmp_path)
    dtype, why = cpu_facts.effective_compute_dtype("bfloat16_train", zen3)
    assert dtype == "float32"
    assert why == ("compute_dtype bfloat16_train asked for, but this CPU (AMD EPYC) has no "
                   "avx512_bf16 or amx_bf16: computing in float32")
    assert cpu_facts.effective_compute_dtype("float32", zen3) == ("float32", None)
    with_bf16 = dict(zen3, flags=zen3["flags"] + ["avx512_bf16"])
    assert cpu_facts.effective_compute_dtype("bfloat16", with_bf16) == ("bfloat16", None)
    # A run's config, the CPU read from $SEED_CPUINFO
    monkeypatch.setenv("SEED_CPUINFO", cpuinfo(tmp_path))
    lines = []
    config = cpu_facts.with_effective_compute_dtype(make_config(compute_dtype="bfloat16"),
                                                    lines.append)
    assert config.compute_dtype == "float32" and len(lines) == 1
    monkeypatch.setenv("SEED_CPUINFO", cpuinfo(tmp_path, flags="avx avx2 fma avx512_bf16"))
    config = cpu_facts.with_effective_compute_dtype(make_config(compute_dtype="bfloat16"),
                                                    lines.append)
    assert config.compute_dtype == "bfloat16" and len(lines) == 1


def test_a_cpuinfo_without_a_processor_is_one_clear_error(tmp_path):
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ValueError, match="lists no processor"):
        cpu_facts.read_cpu(str(tmp_path / "empty"))


def test_this_machine_reads():
    c = cpu_facts.read_cpu()
    assert c["model_name"] and c["clock_mhz"] > 0
    assert cpu_facts.peak_flops(c, 1)["float32"] > 1e9
