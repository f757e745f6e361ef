"""`make report`: results/REPORT.md is what the committed runs say, and a bad run directory is
named and left out."""

import csv
import json
import re
from pathlib import Path

from tests.support.results_tree import make_timeline

from seed import report
from seed.results import roofline as results_roofline

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


def test_the_committed_report_is_what_the_committed_runs_say(tmp_path):
    out = tmp_path / "REPORT.md"
    report.build(RESULTS, out, play=False)  # the committed strips, whatever checkpoints exist
    committed = (RESULTS / "REPORT.md").read_text()
    assert out.read_text() == committed, (
        "results/REPORT.md is stale: run `make report` and commit it with its figures")
    for link in [line.split("](")[1].rstrip(")") for line in committed.splitlines()
                 if line.startswith("![")]:
        assert (RESULTS / link).is_file(), link


def _run(d: Path, arch: str, returns: list[float], finished: bool = True, seed: int = 0,
         foreign: float | None = None, summary: dict | None = None,
         frames: int = 0) -> Path:
    """A run whose i-th episode (return ``returns[i]``) ends at 1,000 * (i + 1) frames and
    10 * (i + 1) seconds; one metrics row, with ``foreign_cpu`` where ``foreign`` is given;
    ``summary`` (default: stopped by its budget) where ``finished``; a budget of ``frames``
    (default: what it ran)."""
    d.mkdir(parents=True)
    config = {"env": "toy:catch", "arch": arch, "agent": "vtrace", "network": "mlp",
              "benchmark": "toy_catch", "seed": seed, "train": True,
              "frames": frames or 1000 * len(returns)}
    (d / "config.json").write_text(json.dumps(
        {"config": config, "architecture": arch, "frames_per_step": 1,
         "machine": {"cpu_count": 2, "processor": "x86_64", "python": "3.11.7",
                     "packages": {"numpy": "2.4.6"}}}))
    with (d / "metrics.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_steps", "env_frames", "fps", "learner_steps",
                    "learner_fps", "episodes", "episode_return"]
                   + (["foreign_cpu"] if foreign is not None else []))
        w.writerow([10.0 * len(returns), 1000 * len(returns), 1000 * len(returns), 100.0, 5,
                    90.0, len(returns), sum(returns) / len(returns)]
                   + ([foreign] if foreign is not None else []))
    with (d / "episodes.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_frames", "episode_return", "episode_length"])
        for i, r in enumerate(returns):
            w.writerow([10.0 * (i + 1), 1000 * (i + 1), r, 9])
    if finished:
        (d / "summary.json").write_text(json.dumps(summary or {"stopped_by": "budget"}))
    return d


def test_thresholds_statuses_and_bad_directories(tmp_path):
    root = tmp_path / "results"
    # Means of 2 consecutive episodes: run-0 reaches 0.5 at episode 3 (3,000 frames, 30 s)
    # and 0.9 at episode 4, run-1 0.5 at episode 5 and 0.9 at episode 6. IMPALA's one run
    # reaches 0.5 at episode 2, never 0.9, and has not finished.
    # run-1 reaches 0.9 only in its last row (not held). The SEED runs recorded their
    # foreign load, run-1 above report.LOADED; IMPALA's did not.
    _run(root / "toy_catch/seed/run-0", "seed", [0, 0, 1, 1, 1], foreign=0.1)
    _run(root / "toy_catch/seed/run-1", "seed", [0, 0, 0, 0, 1, 1], seed=1, foreign=0.4)
    _run(root / "toy_catch/impala/run-0", "impala", [1, 0, 1], finished=False)
    broken = root / "toy_catch/seed/broken"
    broken.mkdir(parents=True)
    for name in ("config.json", "metrics.csv", "episodes.csv"):
        (broken / name).write_text("{not json" if name == "config.json" else "")
    (root / "references.yaml").write_text(
        "toy_catch:\n  thresholds: [0.5, 0.9]\n  window: 2\n"
        "  references:\n    - {what: a paper, value: 1, unit: return, source: its page}\n")
    out = root / "REPORT.md"
    problems = report.build(root, out)
    text = out.read_text()
    assert len(problems) == 1 and problems[0].startswith("toy_catch/seed/broken: ")
    assert "\n" not in problems[0]
    assert f"- {problems[0]}" in text
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()
            if line.startswith("| ")}
    assert rows["seed"] == ("| seed | 2 | 4,000 (3,000-5,000); 40 s (30 s-50 s) (1 of 2 runs "
                            "loaded) [2/2] | 5,000 (4,000-6,000); 50 s (40 s-60 s) (1 of 2 runs "
                            "loaded) [2/2] (1 not held) |")
    assert rows["impala"] == ("| impala | 1 | 2,000; 20 s (load not recorded) [1/1] | "
                              "-; - [0/1] |")
    assert "not finished (no summary.json)" in rows["toy_catch/impala/run-0"]
    assert "| 5 | 5 | 0.60 | ran its budget | 10% mean, 10% max |" in rows["toy_catch/seed/run-0"]
    assert "| 40% mean, 40% max (loaded) |" in rows["toy_catch/seed/run-1"]
    assert "| not recorded |" in rows["toy_catch/impala/run-0"]
    assert "| a paper | 1 | return | its page |" in text
    assert "- 2 cores, x86_64, no GPU; python 3.11.7, numpy 2.4.6" in text
    assert (root / "report" / "toy_catch_reward.png").stat().st_size > 10_000


def test_the_goal_says_per_architecture_which_runs_met_missed_or_left_it_open(tmp_path):
    root = tmp_path / "results"
    # Means of 2 episodes, episode i at 1,000 * (i + 1) frames. Goal 0.9 within 4,000 frames:
    # run-0 reaches it at 4,000 (met); run-1 at 6,000, after the budget (missed at 6,000);
    # IMPALA's run never does: it ran 5,000 frames (missed) and run-b 3,000 (open).
    _run(root / "toy_catch/seed/run-0", "seed", [0, 0, 1, 1, 1])
    _run(root / "toy_catch/seed/run-1", "seed", [0, 0, 0, 0, 1, 1], seed=1)
    _run(root / "toy_catch/impala/run-a", "impala", [1, 0, 1, 0, 0])
    _run(root / "toy_catch/impala/run-b", "impala", [0, 0, 0], finished=False)
    refs = "toy_catch:\n  thresholds: [0.9]\n  window: 2\n"
    (root / "references.yaml").write_text(
        refs + "  goal: {return: 0.9, frames: 4000, why: a test}\n")
    out = root / "REPORT.md"
    assert report.build(root, out) == []
    text = out.read_text()
    assert ("Goal: a mean of 2 consecutive training episodes of 0.9 within 4,000 frames "
            "(a test).") in text
    rows = {r[0]: r for r in _tables(text)[2][1:]}
    assert rows["seed"] == ["seed", "2", "1 (run-0 at 4,000)", "1 (run-1 at 6,000)", "0"]
    assert rows["impala"] == ["impala", "2", "0", "1 (run-a)", "1 (run-b, stopped at 3,000)"]

    (root / "references.yaml").write_text(refs + "  goal: {return: high}\n")
    try:
        report.build(root, out)
    except report.ReportError as e:
        assert "toy_catch: goal needs a numeric return and frames" in str(e)
        assert "\n" not in str(e)
    else:
        raise AssertionError("a goal without frames was accepted")


# --------------------------------------------------------------------------- the committed
# report against the committed files, each read here with the standard library alone (not
# through seed.results), so a wrong number in a section fails whatever the generator does.

def _tables(text: str) -> list[list[list[str]]]:
    """Every markdown table of a report: rows of cells, header first (separator dropped)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("| "):
            if not line.startswith("| ---"):
                current.append([c.strip() for c in line.strip().strip("|").split(" | ")])
        elif current:
            tables.append(current)
            current = []
    return tables


def _section(text: str, heading: str) -> str:
    """The text under ``### heading``, up to the next heading."""
    start = text.index(f"\n### {heading}\n")
    ends = [i for i in (text.find("\n### ", start + 1), text.find("\n## ", start + 1)) if i > 0]
    return text[start:min(ends) if ends else len(text)]


def _rows(text: str, heading: str) -> dict[str, list[str]]:
    """The rows of the (first) table of a section, by their first cell."""
    [table, *_] = _tables(_section(text, heading))
    return {r[0]: r for r in table[1:]}


def _csv(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _mean(values) -> float:
    values = [float(v) for v in values if v not in ("", None)]
    return sum(values) / len(values)


def _pct(before: float, after: float) -> str:
    change = after / before - 1
    return f"({change:+.0%})" if round(change, 2) else "(0%)"


def _benchmark_of(compare_dir: Path) -> str:
    config = json.loads((compare_dir / "base_config.json").read_text())
    return config.get("benchmark") or config["env"].replace(":", "_")


def _compare_dirs() -> list[Path]:
    return sorted(p.parent for p in RESULTS.glob("compare-*/**/compare.csv"))


REPORT = (RESULTS / "REPORT.md").read_text()


def test_the_report_shows_each_roofline_file_as_it_is():
    roofs = sorted((RESULTS / "roofline").glob("*.json"))
    assert roofs
    for path in roofs:
        roof = json.loads(path.read_text())
        name = f"`roofline/{path.name}`"
        [table] = [t for t in _tables(REPORT) if name in t[0]]
        col = table[0].index(name)
        cells = {row[0]: row[col] for row in table[1:]}
        sim = roof["simulation"]
        assert cells["simulation alone"] == (
            f"{1e6 * sim['cpu_s_per_frame']:,.1f} us/frame; {sim['frames_per_s']:,.0f} "
            f"frames/s with {sim['processes']} processes"), path
        for who, batch in (("SEED learner", roof["seed_batch"]),
                           ("IMPALA actor", roof["impala_batch"])):
            inf = roof["inference"][str(batch)]
            cell = cells[f"inference alone, batch {batch}"]
            assert cell.startswith(f"{1e6 * inf['cpu_s_per_frame']:,.1f} us/frame; "
                                   f"{1e3 * inf['wall_s_per_call']:,.2f} ms a call"), path
            assert who in cell, path
        c = roof["ceilings"]
        assert cells["ceiling, SEED: serve / train"] == (
            f"{c['seed_serve']:,.0f} / {c['seed_train']:,.0f}"), path
        assert cells["ceiling, IMPALA: serve / train"] == (
            f"{c['impala_serve']:,.0f} / {c['impala_train']:,.0f}"), path
        # FLOPs per frame and FLOP/s as the roofline type words them ("not measured" in a
        # file from before they were counted)
        typed = results_roofline.load_roofline(path)
        assert cells["FLOPs per frame"] == results_roofline.flops_per_frame(typed), path
        assert cells["FLOP/s, train step"] == results_roofline.training_flops(typed), path
        for batch in roof["inference"]:
            assert cells[f"FLOP/s, inference batch {batch}"] == \
                results_roofline.inference_flops(typed, batch), path
        if not roof.get("flops"):
            assert cells["FLOP/s, train step"] == "not measured", path
        if roof.get("bare_training"):
            assert cells["bare TensorFlow train step"].endswith(
                f"agent at {roof['bare_training']['agent_over_bare']:.2f} of bare"), path
        if roof.get("seed_data_path"):
            d = roof["seed_data_path"]
            assert cells["SEED data path alone"].startswith(
                f"learner {1e6 * d['learner_cpu_s_per_frame']:.1f} + actors "
                f"{1e6 * d['actor_cpu_s_per_frame']:.1f} us/frame"), path
        if roof.get("seed_lockstep_serve"):
            s = roof["seed_lockstep_serve"]
            assert cells["SEED lock-step serve bound"] == (
                f"{s['frames_per_s']:,.0f} frames/s, {s['fraction_of_serve_ceiling']:.0%} of "
                f"the serve ceiling: a cycle of {1e3 * s['cycle_wall_s']:.2f} ms = inference "
                f"{1e3 * s['inference_wall_s']:.2f} + simulation "
                f"{1e3 * s['simulation_wall_s']:.2f} + data path "
                f"{1e3 * s['data_path_wall_s']:.2f}"), path
            if s.get("turns"):
                t = s["turns"]
                assert cells["SEED lock-step turns without SEED"] == (
                    f"inference {1e3 * t['inference_wall_s']:.2f} + stepping "
                    f"{1e3 * t['stepping_wall_s']:.2f} + hand-off {1e3 * t['handoff_wall_s']:.2f}"
                    f" ms a cycle, in turns for real (seed/bench/turns.py); inference + "
                    f"stepping + data path {t['with_data_path_frames_per_s']:,.0f} frames/s"), path
            else:
                assert cells.get("SEED lock-step turns without SEED", "-") == "-", path
        for batch, m in (roof.get("inference_vs_bare") or {}).items():
            [row] = [r for t in _tables(REPORT) if t[0][0] == "file" for r in t[1:]
                     if r[:2] == [f"roofline/{path.name}", batch]]
            assert row[2:4] == [f"{m['agent_ms_per_call']:.2f} / {m['bare_ms_per_call']:.2f}",
                                f"{m['infer_over_bare']:.2f}"], (path, batch)


def test_the_report_shows_what_each_compare_measured():
    dirs = _compare_dirs()
    assert len(dirs) > 20
    for d in dirs:
        runs = _csv(d / "compare.csv")
        meta = json.loads((d / "compare.json").read_text())
        seed = [r for r in runs if r["arch"] == "seed"]
        bench, rel = _benchmark_of(d), str(d.relative_to(RESULTS))
        row = _rows(REPORT, f"{bench} inside the compares")[rel]
        assert row[1] == " / ".join(f"{float(r['fps']):,.0f}" for r in seed), rel
        busy = [_mean(r["cpu_util"] for r in runs if r["arch"] == a) for a in ("seed", "impala")]
        assert row[2] == f"{busy[0]:.0%} / {busy[1]:.0%}", rel
        cpu = 1e6 / _mean(r["frames_per_cpu_s"] for r in seed)
        assert row[3].startswith(f"{cpu:,.0f}"), rel
        p50 = _mean(r.get("action_latency_p50_ms") or r.get("latency_p50_ms") for r in seed)
        assert row[4].startswith(f"{p50:.1f} / "), rel
        if "learner_cpu_util" in seed[0]:
            learner = 1e6 * _mean(r["learner_cpu_util"] for r in seed) * meta["cores"] / _mean(
                r["fps"] for r in seed)
            assert f"(learner {learner:,.0f})" in row[3], rel
        roof = meta.get("roofline") or {}
        *_, lockstep, turns, load = _rows(REPORT, f"{bench} throughput")[rel]
        shares = [lockstep, turns]
        assert load in ("quiet", "load not recorded") or "loaded" in load, rel
        for share, key in zip(shares, ("seed_lockstep_fraction", "seed_turns_fraction")):
            assert share == (f"{roof[key]:.0%}" if roof.get(key) is not None else "-"), rel


def test_the_report_sets_each_before_after_pair_side_by_side():
    pairs = [(b, a) for b in _compare_dirs() if "before" in b.name for a in _compare_dirs()
             if a.parent == b.parent and a.name.replace("-rerun", "")
             == b.name.replace("before", "after")]
    names = {(b.name, a.name) for b, a in pairs}
    assert {("serve-before24-20261206", "serve-after24-20261206"),
            ("train-before24-20261206", "train-after24-20261206")} <= names
    for b, a in pairs:
        bench, label = _benchmark_of(a), f"{b.relative_to(RESULTS)} -> {a.name}"
        row = _rows(REPORT, f"{bench} before and after")[label]
        before, after = _csv(b / "compare.csv"), _csv(a / "compare.csv")
        for col, arch in ((2, "seed"), (3, "impala")):
            fb, fa = (_mean(r["fps"] for r in runs if r["arch"] == arch)
                      for runs in (before, after))
            assert row[col] == f"{fb:,.0f} -> {fa:,.0f} {_pct(fb, fa)}", (label, arch)
        cb, ca = (_mean(r["frames_per_cpu_s"] for r in runs if r["arch"] == "seed")
                  for runs in (before, after))
        assert row[5] == f"{cb:,.0f} -> {ca:,.0f} {_pct(cb, ca)}", label


def test_the_report_shows_each_sweep_row():
    sweeps = sorted(RESULTS.glob("compare-*/**/sweep.csv"))
    assert sweeps
    for path in sweeps:
        bench = _benchmark_of(next(path.parent.glob("*/base_config.json")).parent)
        rows = _rows(REPORT, f"{bench} model-size sweep")
        for r in _csv(path):
            row = rows[r["size"]]
            assert row[2] == f"{int(r['parameters']):,}", path
            assert row[3] == " / ".join(f"{float(r[f'inf_cpu_us_per_sample_{k}']):,.0f}"
                                        for k in ("b1", "actor_batch", "seed_batch")), path
            assert row[6] == f"{float(r['fps_ratio']):.2f}", path


def test_the_report_shows_learner_steps_and_evaluation_thresholds():
    refs = report.load_references(RESULTS)
    for bench, entry in refs.items():
        window = (entry or {}).get("evaluation_window")
        if not window:
            continue
        for run_dir in sorted((RESULTS / bench).glob("*/*")):
            metrics = _csv(run_dir / "metrics.csv")
            rel = str(run_dir.relative_to(RESULTS))
            row = _rows(REPORT, f"{bench} learning")[rel]
            assert row[5] == f"{max(float(m['learner_steps']) for m in metrics):,.0f}", rel
            episodes = sorted((r for r in _csv(run_dir / "episodes.csv")
                               if r.get("evaluation") == "1"),
                              key=lambda r: (float(r["env_frames"]), float(r["wall_time"])))
            returns = [float(e["episode_return"]) for e in episodes]
            tables = _tables(_section(REPORT, f"{bench} learning"))
            evals = [t for t in tables if t[0][0] == "architecture"][1]  # training's first
            label = f"{run_dir.parent.name} ({run_dir.name})"
            [cells] = [r for r in evals[1:] if r[0] == label]
            for t, cell in zip(entry["thresholds"], cells[2:], strict=True):
                hit = next((i for i in range(window - 1, len(returns))
                            if sum(returns[i - window + 1:i + 1]) / window >= t), None)
                if hit is None:
                    assert cell == "-; - [0/1]", (rel, t)
                else:
                    frames = float(episodes[hit]["env_frames"])
                    text = f"{frames / 1e6:.2f}M" if frames >= 1e6 else f"{frames:,.0f}"
                    # its load up to the crossing: the committed R2D2 runs predate the record
                    assert cell.startswith(f"{text}; {float(episodes[hit]['wall_time']):,.0f} "
                                           "s (load not recorded) [1/1]"), (rel, t)


def test_the_docs_link_only_to_sections_the_report_has():
    """Links into REPORT.md from the docs name an anchor GitHub makes of one of its headings
    (lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``)."""
    anchors = {re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", line.lstrip("#").strip().lower()))
               for line in REPORT.splitlines() if line.startswith("#")}
    links = 0
    for doc in [ROOT / "README.md", RESULTS / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for anchor in re.findall(r"REPORT\.md#([\w-]+)", doc.read_text()):
            assert anchor in anchors, f"{doc.name}: REPORT.md#{anchor} names no section"
            links += 1
    assert links


# --------------------------------------------------------------------------- compares with
# runs in them, as seed compare writes them (each run's config.json made from the compare's)

def _compare_run(d: Path, arch: str, config: dict) -> Path:
    """A run folder of a compare: its config.json (the compare's config, this ``arch``),
    one metrics row and no episodes."""
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(
        {"config": {**config, "arch": arch, "train": False}, "architecture": arch,
         "frames_per_step": 1}))
    with (d / "metrics.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_steps", "env_frames", "fps", "learner_steps",
                    "learner_fps", "episodes", "episode_return"])
        w.writerow([10.0, 1000, 1000, 100.0, 0, 0.0, 0, ""])
    (d / "episodes.csv").write_text("wall_time,env_frames,episode_return,episode_length\n")
    return d


def _compare(d: Path, config: dict | None = None) -> Path:
    """A serve compare (SEED 100 frames/s, IMPALA 50) of toy_catch with its three runs; the
    runs' config.json and the compare's hold ``config`` over the benchmark's."""
    config = {"benchmark": "toy_catch", "env": "toy:catch", "network": "mlp",
              **(config or {})}
    d.mkdir(parents=True)
    with (d / "compare.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "arch", "fps"])
        for run, arch, fps in (("seed-1", "seed", 100.0), ("impala-1", "impala", 50.0),
                               ("seed-2", "seed", 100.0)):
            w.writerow([run, arch, fps])
            _compare_run(d / run, arch, config)
    (d / "base_config.json").write_text(json.dumps(config))
    (d / "compare.json").write_text(json.dumps(
        {"mode": "serve", "fps_ratio": 2.0, "config": config}))
    return d


def test_a_compare_with_idle_cores_polling_says_so_in_its_options(tmp_path):
    root = tmp_path / "results"
    _compare(root / "compare-toy_catch/serve-plain")
    _compare(root / "compare-toy_catch/serve-idlepoll", {"cpu_idle_poll": True})
    _compare(root / "compare-toy_catch/serve-idlepoll-jit",
             {"cpu_idle_poll": True, "jit_inference": True})
    problems = report.build(root, root / "REPORT.md")
    assert problems == []
    rows = _rows((root / "REPORT.md").read_text(), "toy_catch throughput")
    assert [rows[f"compare-toy_catch/serve-{name}"][3]
            for name in ("plain", "idlepoll", "idlepoll-jit")] == [
        "-", "cpu_idle_poll", "jit_inference, cpu_idle_poll"]


# --------------------------------------------------------------------------- lock-step cycles
# (seed timeline's timeline.json in a compare's SEED run folders; tests/support/results_tree.py
# gives each segment's mean ms: pre-inference 0.25, inference 5.5, reply 0.125 + 0.25 + 0.125
# + 1.0, actor sim 4.75, request 0.25 + 0.5 + 0.125 + 0.0625 + 0.0625; 13.0 ms in all)

def test_lockstep_cycles_per_seed_run_with_a_timeline(tmp_path):
    root = tmp_path / "results"
    plain = _compare(root / "compare-toy_catch/serve-a")  # a config from before cpu_idle_poll
    make_timeline(plain / "seed-1")  # seed-2 recorded none: no row
    polled = _compare(root / "compare-toy_catch/serve-b-idlepoll", {"cpu_idle_poll": True})
    make_timeline(polled / "seed-1", cycles=1200)
    make_timeline(polled / "seed-2", {"inference": 4.5, "reply transit": 0.75},
                  bookkeeping_ms=None)
    assert report.build(root, root / "REPORT.md") == []
    text = (root / "REPORT.md").read_text()
    section = _section(text, "toy_catch lock-step cycles")
    [table] = _tables(section)
    assert table[0] == ["compare", "run", "idle cores polled", "cycles", "interval ms",
                        "frames/s", "pre-inference ms", "inference ms", "reply ms",
                        "actor sim ms", "request ms", "post-reply bookkeeping ms (off path)",
                        "foreign load"]
    # 128 frames a batch (32 envs x 4) every 13 ms: 9,846 frames/s. seed-2 of serve-b: 1 ms
    # less inference, 0.25 less reply transit: reply 1.25, 11.75 ms, 128 / 0.01175 = 10,894.
    assert table[1:] == [
        ["compare-toy_catch/serve-a", "seed-1", "no", "900", "13.00", "9,846",
         "0.25", "5.50", "1.50", "4.75", "1.00", "2.50", "load not recorded"],
        ["compare-toy_catch/serve-b-idlepoll", "seed-1", "yes", "1,200", "13.00", "9,846",
         "0.25", "5.50", "1.50", "4.75", "1.00", "2.50", "load not recorded"],
        ["compare-toy_catch/serve-b-idlepoll", "seed-2", "yes", "900", "11.75", "10,894",
         "0.25", "4.50", "1.25", "4.75", "1.00", "-", "load not recorded"]]
    assert "`seed timeline`" in section and "add up to the interval" in section
    assert f"]({report.TIMELINE_DOCS})" in section
    # after what the compares measured, before the references
    assert (text.index("### toy_catch inside the compares") < text.index(section)
            < text.index("### toy_catch published references"))


def test_no_lockstep_cycles_section_without_a_timeline(tmp_path):
    root = tmp_path / "results"
    d = _compare(root / "compare-toy_catch/serve-a")
    make_timeline(d / "impala-1")  # IMPALA has no lock-step cycle: not a SEED run's timeline
    assert report.build(root, root / "REPORT.md") == []
    text = (root / "REPORT.md").read_text()
    assert "### toy_catch throughput" in text and "lock-step cycles" not in text


def test_a_damaged_timeline_is_named_in_one_line_and_the_rest_reported(tmp_path):
    root = tmp_path / "results"
    d = _compare(root / "compare-toy_catch/serve-a")
    (d / "seed-1" / "timeline.json").write_text('{"cycles": 12, "segm')
    make_timeline(d / "seed-2")
    e = _compare(root / "compare-toy_catch/serve-b")
    path = make_timeline(e / "seed-1")
    summary = json.loads(path.read_text())
    summary["segments"] = [s for s in summary["segments"] if s["name"] != "decode"]
    path.write_text(json.dumps(summary))
    problems = report.build(root, root / "REPORT.md")
    assert len(problems) == 2 and not any("\n" in p for p in problems)
    assert problems[0].startswith("compare-toy_catch/serve-a/seed-1/timeline.json: ")
    assert "not valid JSON" in problems[0]
    assert problems[1].startswith("compare-toy_catch/serve-b/seed-1/timeline.json: ")
    assert "(missing: decode)" in problems[1] and str(root) not in problems[1]
    text = (root / "REPORT.md").read_text()
    assert all(f"- {p}" in text for p in problems)
    rows = _rows(text, "toy_catch lock-step cycles")
    assert [r[:2] for r in rows.values()] == [["compare-toy_catch/serve-a", "seed-2"]]
    assert {"compare-toy_catch/serve-a", "compare-toy_catch/serve-b"} <= set(
        _rows(text, "toy_catch throughput"))


def test_the_lockstep_cycles_preface_links_to_a_section_of_the_performance_doc():
    doc, anchor = report.TIMELINE_DOCS.split("#")
    headings = [line.lstrip("#").strip() for line in (RESULTS / doc).read_text().splitlines()
                if line.startswith("#")]
    assert anchor in {re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", h.lower())) for h in headings}


def test_statuses_say_how_far_a_run_got_and_how_many_segments_it_has(tmp_path):
    root = tmp_path / "results"
    # 3 episodes = 3,000 frames of a 10,000 budget, over 30 s of wall time
    _run(root / "toy_catch/seed/a", "seed", [0, 1, 0], frames=10_000,
         summary={"stopped_by": "SIGINT", "segments": 3, "segments_exact": True})
    _run(root / "toy_catch/seed/b", "seed", [0, 1, 0], frames=10_000,
         summary={"stopped_by": "SIGTERM", "segments": 2, "segments_exact": False})
    _run(root / "toy_catch/seed/c", "seed", [0, 1, 0],
         summary={"stopped_by": "RuntimeError('boom')", "segments": 1})
    # an old summary (no count) of a segment much shorter than the run: resumed
    _run(root / "toy_catch/seed/d", "seed", [0] * 30, summary={"stopped_by": "budget",
                                                               "seconds": 100.0})
    assert report.build(root, root / "REPORT.md") == []
    rows = {r[0]: r[-2] for r in _tables((root / "REPORT.md").read_text())[0][1:]}
    assert rows == {
        "toy_catch/seed/a": "stopped early at 30% of its budget (SIGINT); 3 segments (resumed)",
        "toy_catch/seed/b": ("stopped early at 30% of its budget (SIGTERM); resumed: at least "
                             "2 segments"),
        "toy_catch/seed/c": "failed: RuntimeError('boom')",
        "toy_catch/seed/d": "ran its budget; resumed: at least 2 segments (not counted then)"}


def test_a_goal_over_the_median_of_seeds(tmp_path):
    root = tmp_path / "results"
    # Budget 4,000 frames, means of 2: SEED seeds 0, 1, 2 at 4,000 -> 1, 0.5, 0: median 0.5;
    # IMPALA has no seed 2 that ran to the budget: open.
    _run(root / "toy_catch/seed/s0", "seed", [0, 0, 1, 1], seed=0)
    _run(root / "toy_catch/seed/s1", "seed", [0, 0, 0, 1, 1], seed=1)
    _run(root / "toy_catch/seed/s2", "seed", [1, 1, 0, 0], seed=2)
    _run(root / "toy_catch/impala/s0", "impala", [1, 1, 1, 1], seed=0)
    _run(root / "toy_catch/impala/s1", "impala", [1, 1, 1, 1], seed=1)
    _run(root / "toy_catch/impala/s2", "impala", [1, 1], seed=2, finished=False)
    (root / "references.yaml").write_text(
        "toy_catch:\n  thresholds: [0.5]\n  window: 2\n"
        "  goal: {return: 0.5, frames: 4000, seeds: [0, 1, 2], why: a test}\n")
    assert report.build(root, root / "REPORT.md") == []
    table = _tables((root / "REPORT.md").read_text())[2]
    assert table[0] == ["architecture", "goal", "median at 4,000", "each seed"]
    assert table[1] == ["impala", "open", "-", "seed 0: 1.00; seed 1: 1.00"]
    assert table[2] == ["seed", "met", "0.50", "seed 0: 1.00; seed 1: 0.50; seed 2: 0.00"]


def test_seed_report_and_python_m_seed_report_write_what_build_writes(tmp_path, capsys):
    import subprocess
    import sys

    from seed.cli import main
    root = tmp_path / "results"
    _run(root / "toy_catch/seed/run-0", "seed", [0, 1, 1])
    report.build(root, tmp_path / "built.md")
    assert main(["report", "--results", str(root), "--out", str(tmp_path / "cli.md")]) == 0
    assert "wrote" in capsys.readouterr().out
    proc = subprocess.run([sys.executable, "-m", "seed.report", "--results", str(root)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    built = (tmp_path / "built.md").read_text()
    assert (tmp_path / "cli.md").read_text() == built == (root / "REPORT.md").read_text()
    assert "Generated by `make report` (`seed report`)" in built
    assert main(["report", "--results", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: results root") and "\n" not in err
