"""``results/roofline/*.json``: what ``seed roofline`` measured on a machine, as a type.

:mod:`seed.bench.roofline` builds a :class:`Roofline` and writes it
(:meth:`Roofline.to_json`); ``seed compare``, the tables and the report read it back with
:func:`load_roofline`, which takes what an older file lacks as absent (no bare training step,
no data path, no lock-step bound, no ``agent``: V-trace) and keeps what a newer one adds
(:attr:`Roofline.extra`, written back as read; a file from before FLOPs were counted has
no ``flops``, and its FLOPs cells say "not measured"). Its rows (:func:`roofline_rows`,
:func:`inference_vs_bare_rows`) are what both the terminal (:meth:`Roofline.format`) and the
report print: the roofline is formatted here alone.

A field is added by adding it to :class:`Roofline` (with a default, so older files stay
readable) and, if it is shown, a row to :data:`ROWS`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path

from seed.results.files import ResultsFileError, check_root, read_json
from seed.results.text import ms, num, us

#: The parts of the agent's inference call that ``seed roofline`` times alone.
INFERENCE_PARTS = ("network", "stack_update", "sampling", "host_copies_in", "host_copies_out")


@dataclasses.dataclass
class Roofline:
    """One roofline file. The measurements are the mappings ``seed roofline`` records (see
    seed/bench/roofline.py); a section an older file lacks is None (or empty)."""

    env: str
    network: str
    ceilings: dict  # {seed,impala}_{train,serve}, simulation_only: frames/s
    network_kwargs: dict = dataclasses.field(default_factory=dict)
    agent: str = "vtrace"
    config: dict = dataclasses.field(default_factory=dict)  # the shape it was measured for
    seed_batch: int | None = None
    impala_batch: int | None = None
    cores: int | None = None
    frames_per_step: int | None = None
    seconds_per_measurement: float | None = None
    simulation: dict = dataclasses.field(default_factory=dict)
    inference: dict = dataclasses.field(default_factory=dict)  # by batch (text)
    inference_vs_bare: dict | None = None  # by batch (text)
    training: dict = dataclasses.field(default_factory=dict)
    bare_training: dict | None = None
    seed_data_path: dict | None = None
    seed_lockstep_serve: dict | None = None
    costs_cpu_s_per_frame: dict = dataclasses.field(default_factory=dict)
    formula: str = ""
    flops: dict | None = None  # seed/bench/flops.py's counts and rates; None: not counted
    machine: dict = dataclasses.field(default_factory=dict)
    measured_at: str = ""
    extra: dict = dataclasses.field(default_factory=dict)  # fields this version does not know
    source: Path | None = None  # the file it was read from (not written)

    def to_json(self) -> dict:
        """The mapping the file holds."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("extra", "source")}
        return {**out, **self.extra}

    def key(self) -> tuple:
        """(env, network, agent): what a benchmark's runs and compares are matched by."""
        return self.env, self.network, self.agent

    def ceiling(self, arch: str, mode: str) -> float | None:
        """The ceiling of ``arch`` (seed, impala) in ``mode`` (train, serve), frames/s."""
        return self.ceilings.get(f"{arch}_{mode}")

    def turns(self) -> dict | None:
        """SEED's lock-step turns run for real without SEED (rooflines that measured them)."""
        return (self.seed_lockstep_serve or {}).get("turns")

    def format(self) -> str:
        """The terminal's roofline: the rows the report gives, and the formula."""
        head = (f"roofline {self.env} / {self.network} on {self.cores} core(s) (frames = env "
                f"steps x {self.frames_per_step})")
        lines = [head] + [f"  {label}: {cells[0]}" for label, *cells in roofline_rows([self])]
        for _, batch, calls, ratio, parts in inference_vs_bare_rows([self]):
            lines.append(f"  inference batch {batch} vs bare TensorFlow: agent / bare {calls} "
                         f"ms a call, infer over bare {ratio}; the agent's call in parts, each "
                         f"alone (ms): {parts}")
        return "\n".join(lines + [f"  ceiling formula: {self.formula}"])


_KNOWN = {f.name for f in dataclasses.fields(Roofline)} - {"extra", "source"}


def from_json(data, path: Path) -> Roofline:
    """The :class:`Roofline` of a roofline file's mapping; ResultsFileError (one line, naming
    ``path``) when it is not one."""
    if not isinstance(data, dict):
        raise ResultsFileError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if not isinstance(data.get("ceilings"), dict):
        raise ResultsFileError(
            f"{path}: has no 'ceilings' mapping (not written by seed roofline)")
    known = {k: v for k, v in data.items() if k in _KNOWN and v is not None}
    known.setdefault("env", None)
    known.setdefault("network", None)
    return Roofline(**known, extra={k: v for k, v in data.items() if k not in _KNOWN},
                    source=path)


def find_roofline_files(root) -> list[Path]:
    """The ``*.json`` files of ``<root>/roofline/`` (and below), sorted."""
    d = check_root(root) / "roofline"
    return sorted(p for p in d.rglob("*.json") if p.is_file()) if d.is_dir() else []


def load_roofline(path) -> Roofline:
    """One roofline file, read (:func:`from_json`) with ``source`` set."""
    path = Path(path)
    return from_json(read_json(path, ResultsFileError), path)


def write_roofline(roofline: Roofline, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(roofline.to_json(), indent=2))
    return path


# -- the rows ------------------------------------------------------------------------------

def _simulation(roof: Roofline) -> str:
    m = roof.simulation
    return (f"{us(m.get('cpu_s_per_frame'))} us/frame; {num(m.get('frames_per_s'))} "
            f"frames/s with {m.get('processes', '?')} processes")


def _inference(roof: Roofline, batch: str) -> str | None:
    m = roof.inference.get(batch)
    if not m:
        return None
    who = [w for w, b in (("SEED learner", roof.seed_batch),
                          ("IMPALA actor", roof.impala_batch)) if str(b) == batch]
    return (f"{us(m.get('cpu_s_per_frame'))} us/frame; {ms(m.get('wall_s_per_call'))} ms a "
            f"call; {num(m.get('frames_per_s'))} frames/s" + (f" ({', '.join(who)})"
                                                              if who else ""))


def _shape(roof: Roofline) -> str:
    c = roof.config
    text = (f"{c.get('actors', '?')} actors x {c.get('envs_per_actor', '?')} envs, "
            f"unroll {c.get('unroll_length', '?')}, train batch {c.get('batch_size', '?')}")
    if c.get("actor_splits", 1) != 1:
        text += f", actor_splits {c['actor_splits']}"
    if c.get("inference_batch_size"):
        text += f", inference batch {c['inference_batch_size']}"
    return text


def _training(roof: Roofline) -> str:
    t, c = roof.training, roof.config
    return (f"{ms(t.get('wall_s_per_step'))} ms a step ({c.get('batch_size', '?')} x "
            f"T={c.get('unroll_length', '?')}); {us(t.get('cpu_s_per_frame'))} us/frame; "
            f"{num(t.get('frames_per_s'))} frames/s")


def _bare(roof: Roofline) -> str | None:
    b = roof.bare_training
    if not b:
        return None
    return (f"{ms(b.get('wall_s_per_step'))} ms a step; agent at "
            f"{num(b.get('agent_over_bare'), '.2f')} of bare")


def _data_path(roof: Roofline) -> str | None:
    d = roof.seed_data_path
    if not d:
        return None
    return (f"learner {us(d.get('learner_cpu_s_per_frame'))} + actors "
            f"{us(d.get('actor_cpu_s_per_frame'))} us/frame; "
            f"{num(d.get('frames_per_s'))} frames/s; round trip p50 "
            f"{num(d.get('round_trip_p50_ms'), '.2f')} ms, p99 "
            f"{num(d.get('round_trip_p99_ms'), '.2f')} ms; SEED ceilings with it: serve "
            f"{num(d.get('seed_serve_with_data_path'))}, train "
            f"{num(d.get('seed_train_with_data_path'))}")


def _lockstep(roof: Roofline) -> str | None:
    s = roof.seed_lockstep_serve
    if not s:
        return None
    return (f"{num(s.get('frames_per_s'))} frames/s, "
            f"{num(s.get('fraction_of_serve_ceiling'), '.0%')} of the serve ceiling: a cycle "
            f"of {ms(s.get('cycle_wall_s'))} ms = inference {ms(s.get('inference_wall_s'))} "
            f"+ simulation {ms(s.get('simulation_wall_s'))} + data path "
            f"{ms(s.get('data_path_wall_s'))}")


def _turns(roof: Roofline) -> str | None:
    t = roof.turns()
    if not t:
        return None
    return (f"inference {ms(t.get('inference_wall_s'))} + stepping "
            f"{ms(t.get('stepping_wall_s'))} + hand-off {ms(t.get('handoff_wall_s'))} ms a "
            f"cycle, in turns for real (seed/bench/turns.py); inference + stepping + data path "
            f"{num(t.get('with_data_path_frames_per_s'))} frames/s")


NOT_MEASURED = "not measured"


def _si(flops) -> str:
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if flops >= scale:
            return f"{flops / scale:,.3g} {unit}"
    return f"{flops:,.0f} "


def _rate_text(m: dict | None) -> str:
    if not m:
        return NOT_MEASURED
    share = m.get("share_of_peak")
    return (f"{_si(m['flops_per_s'])}FLOP/s {m['dtype']}, "
            + (f"{100 * share:.2g}% of peak" if share is not None else "no peak for it"))


def flops_per_frame(roof: Roofline) -> str:
    """FLOPs per frame of inference and of the train step."""
    f = roof.flops
    if not f:
        return NOT_MEASURED
    train = (f"{_si(f['train_per_frame'])}FLOP" if f.get("train_per_frame") is not None
             else NOT_MEASURED)
    return f"inference {_si(f['inference_per_frame'])}FLOP, train step {train}"


def inference_flops(roof: Roofline, batch: str) -> str | None:
    """Achieved FLOP/s of inference at ``batch`` and its share of the peak; None where the
    roofline timed no inference at that batch."""
    if batch not in roof.inference:
        return None
    return _rate_text(((roof.flops or {}).get("inference") or {}).get(batch))


def training_flops(roof: Roofline) -> str:
    """Achieved FLOP/s of the train step and its share of the peak."""
    return _rate_text((roof.flops or {}).get("training"))


def peak_flops(roof: Roofline) -> str:
    """The CPU, its peak per dtype and the dtype the roofline computed in."""
    f = roof.flops
    if not f:
        return NOT_MEASURED
    p, cpu = f["peak"], f["cpu"]
    bf16 = f"{_si(p['bfloat16'])}FLOP/s ({p['bfloat16_unit']})" if p.get("bfloat16") else "none"
    return (f"{cpu['model_name']}, {p['physical_cores']} cores at {p['clock_ghz']:.2f} GHz, "
            f"{p['vector_bits']}-bit x {p['fma_units_per_core']} FMA: float32 "
            f"{_si(p['float32'])}FLOP/s, bfloat16 {bf16}; computed in {f['compute_dtype']}")


def _ceilings(arch: str) -> Callable[[Roofline], str]:
    return lambda roof: (f"{num(roof.ceiling(arch, 'serve'))} / "
                         f"{num(roof.ceiling(arch, 'train'))}")


#: The roofline table's rows after the inference rows (one per batch): (label, cell), the
#: cell None where a file has no such measurement.
ROWS: tuple[tuple[str, Callable[[Roofline], str | None]], ...] = (
    ("train step alone", _training), ("bare TensorFlow train step", _bare),
    ("ceiling, SEED: serve / train", _ceilings("seed")),
    ("ceiling, IMPALA: serve / train", _ceilings("impala")),
    ("ceiling, simulation only", lambda r: num(r.ceilings.get("simulation_only"))),
    ("SEED data path alone", _data_path), ("SEED lock-step serve bound", _lockstep),
    ("SEED lock-step turns without SEED", _turns),
)


def roofline_rows(roofs: list[Roofline]) -> list[list[str]]:
    """The roofline table: one row per measured quantity, one column per roofline; a row
    none of them measured is left out."""
    batches = sorted({b for r in roofs for b in r.inference}, key=float)
    lines = [("measured", lambda r: str(r.measured_at or "?").replace("T", " ")[:16]),
             ("shape", _shape), ("simulation alone", _simulation)]
    lines += [(f"inference alone, batch {b}", lambda r, b=b: _inference(r, b))
              for b in batches]
    lines += [("FLOPs per frame", flops_per_frame), ("peak FLOP/s", peak_flops)]
    lines += [(f"FLOP/s, inference batch {b}", lambda r, b=b: inference_flops(r, b))
              for b in batches]
    lines += [("FLOP/s, train step", training_flops)]
    rows = []
    for label, cell in lines + list(ROWS):
        cells = [cell(r) or "-" for r in roofs]
        if any(c != "-" for c in cells):
            rows.append([label, *cells])
    return rows


def inference_vs_bare_rows(roofs: list[Roofline], root=None) -> list[list[str]]:
    """One row per roofline and batch that timed the agent's inference call against the
    same step in bare TensorFlow: the file (relative to ``root``), the batch, agent / bare ms
    a call, infer over bare, the call's parts (ms)."""
    rows = []
    for roof in roofs:
        where = os.path.relpath(roof.source, root) if root is not None else str(roof.source)
        for batch, m in sorted((roof.inference_vs_bare or {}).items(),
                               key=lambda kv: float(kv[0])):
            p = m.get("agent_parts_ms") or {}
            rows.append([where, batch,
                         f"{num(m.get('agent_ms_per_call'), '.2f')} / "
                         f"{num(m.get('bare_ms_per_call'), '.2f')}",
                         num(m.get("infer_over_bare"), ".2f"),
                         ", ".join(num(p.get(k), ".2f") for k in INFERENCE_PARTS)])
    return rows
