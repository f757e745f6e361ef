"""The report's greedy episode of a benchmark: frames of one greedy episode of its best run
with a checkpoint, side by side in one PNG, and the sidecar JSON that says what they show.

Per benchmark, ``report/<benchmark>_play.png`` beside the report and
``report/<benchmark>_play.json``: the run (relative to the results root), its checkpoint's
fingerprint (sha256 and size in bytes), the frames it had trained, the eval seed and step cap,
the episode's return and length, the steps the frames were taken at. The report's text is
drawn from the JSON alone, so it regenerates the same wherever the checkpoint is absent.

Which run: the benchmark's training runs ranked by the report's last-100 mean (the training
episodes', the runs table's column), best first; the strip is of the best run whose
``checkpoint.npz`` is on this machine (checkpoints are not committed). It is played again
only when it would change: no strip yet, a strip of that run from another checkpoint (the
fingerprint differs), or a strip of a run ranked below it (or no longer among the runs). A
strip of a better-ranked run whose checkpoint is not here stays. With no checkpoint at all
(a fresh clone) nothing is played and the committed strips are shown as they are.

Playing: :func:`seed.evaluate.evaluate` on a copy of the run's ``config.json`` and
``checkpoint.npz`` in a temporary folder (a live run may rewrite its checkpoint meanwhile;
the fingerprint is the copy's), one greedy episode cut at :data:`MAX_STEPS`. A run that
cannot be played here (its engine is not installed, its checkpoint does not load, the env
fails) is named with the reason in one line on stderr; its old strip, if any, stays. The PNG
and the JSON are each written to a temporary file and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

from seed.report.text import FIGURES
from seed.report.text import frames_text, heading, rel
from seed.results.curves import final_return
from seed.results.run_dirs import CONFIG, Run, training_episodes

CHECKPOINT = "checkpoint.npz"  # seed.runtime.checkpoint.CHECKPOINT, without importing it
STRIP_FRAMES = 8
#: Steps after which the greedy episode is cut: the best Pong and Breakout runs' episodes
#: last about 1,700-2,100 steps on average over their last 100 (their episodes.csv), so a
#: typical one plays to its end, while a long one (up to about 3,500 steps) is cut at
#: 10,000 frames instead of taking a minute or more on a loaded 2-core CPU. DMLab's
#: episodes (300 steps) and Football's (tens) end on their own.
MAX_STEPS = 2500
EVAL_SEED = 0
GAP = 4  # pixels between two frames of a strip
LABEL = 16  # pixels of the band below a frame that gives its step
GAP_COLOUR = (128, 128, 128)
NO_STRIP = ("No strip: no checkpoint of this benchmark's runs on the machine that made this "
            "report")


class NotPlayed(RuntimeError):
    """The episode could not be played; the message is one line."""


def one_line(e: BaseException) -> str:
    """An exception's message, its first line (its type where it has none)."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def strip_paths(figures: Path, bench: str) -> tuple[Path, Path]:
    """The strip's PNG and its sidecar JSON in the report's figures folder."""
    return figures / f"{bench}_play.png", figures / f"{bench}_play.json"


def ranked(runs: list[Run]) -> list[Run]:
    """The runs by their last-100 mean of training episodes, best first (a run without
    episodes last; ties by path)."""
    def key(r: Run):
        mean = final_return(training_episodes(r.episodes))
        return (math.isnan(mean), -mean if not math.isnan(mean) else 0.0, str(r.path))
    return sorted(runs, key=key)


def fingerprint(path: Path) -> dict:
    """``{"sha256": hex digest, "bytes": size}`` of a file."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return {"sha256": digest.hexdigest(), "bytes": size}


def read_record(path: Path) -> dict:
    """A strip's sidecar JSON; ValueError (one line) when it is damaged."""
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"not readable JSON ({e})") from None
    needed = ("run", "checkpoint", "trained_frames", "episode_return", "episode_length",
              "steps", "seed", "max_episode_steps")
    missing = [k for k in needed if k not in (record if isinstance(record, dict) else {})]
    if missing:
        raise ValueError(f"lacks {', '.join(missing)}")
    return record


class FrameSampler:
    """An ``on_frame(image, episode, step)`` that keeps about ``count`` frames spread evenly
    over an episode of a length not known in advance: every ``stride``-th frame, the stride
    doubling whenever more than ``4 * count`` are kept, and the last frame."""

    def __init__(self, count: int = STRIP_FRAMES):
        self.count, self.stride, self.kept, self.last = count, 1, {}, None

    def __call__(self, image, episode: int, step: int) -> None:
        self.last = (step, image)
        if step % self.stride == 0:
            self.kept[step] = image
            if len(self.kept) > 4 * self.count:
                self.stride *= 2
                self.kept = {s: im for s, im in self.kept.items() if s % self.stride == 0}

    def picked(self) -> list[tuple[int, object]]:
        """(step, image) of the kept frames nearest ``count`` evenly spaced steps from the
        first to the last, each once, in order."""
        last_step, last_image = self.last
        kept = {**self.kept, last_step: last_image}
        targets = [math.floor(i * last_step / (self.count - 1) + 0.5)
                   for i in range(self.count)]
        steps = sorted({min(kept, key=lambda s: (abs(s - t), s)) for t in targets})
        return [(s, kept[s]) for s in steps]


def compose(picked: list[tuple[int, object]]):
    """The frames side by side, :data:`GAP` pixels apart, each with its step written in a
    band of :data:`LABEL` pixels below it."""
    from PIL import Image, ImageDraw
    w, h = picked[0][1].size
    strip = Image.new("RGB", (len(picked) * w + (len(picked) - 1) * GAP, h + LABEL), GAP_COLOUR)
    draw = ImageDraw.Draw(strip)
    for i, (step, image) in enumerate(picked):
        x = i * (w + GAP)
        strip.paste(image.convert("RGB"), (x, 0))
        draw.rectangle((x, h, x + w - 1, h + LABEL - 1), fill=(0, 0, 0))
        draw.text((x + 4, h + 2), f"step {step:,}", fill=(255, 255, 255))
    return strip


def play(run: Run, root: Path, png: Path, sidecar: Path) -> dict:
    """Play one greedy episode of a copy of ``run``'s checkpoint; write the strip and its
    sidecar; return the record. Raises whatever the evaluation raises."""
    from seed import quiet_tf
    from seed.evaluate import evaluate
    from seed.runtime.disk import replace_atomically
    quiet_tf.import_tensorflow()
    sampler = FrameSampler()
    with tempfile.TemporaryDirectory(prefix="seed-report-play-") as copy:
        for name in (CONFIG, CHECKPOINT):
            shutil.copyfile(run.path / name, Path(copy) / name)
        checkpoint = fingerprint(Path(copy) / CHECKPOINT)
        try:
            result = evaluate(copy, episodes=1, seed=EVAL_SEED, max_episode_steps=MAX_STEPS,
                              eval_csv=False, on_frame=sampler)
        except Exception as e:  # named by the run's folder, not the copy's
            raise NotPlayed(one_line(e).replace(copy, rel(run.path, root))) from e
    picked = sampler.picked()
    record = {"run": rel(run.path, root), "checkpoint": checkpoint,
              "trained_frames": result["trained_frames"], "policy": result["policy"],
              "seed": EVAL_SEED, "max_episode_steps": MAX_STEPS,
              "episode_return": result["mean_return"],
              "episode_length": int(result["mean_length"]), "steps": [s for s, _ in picked]}
    strip = compose(picked)
    png.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(png, lambda f: strip.save(f, format="PNG", optimize=True))
    replace_atomically(sidecar, lambda f: f.write(
        (json.dumps(record, indent=1) + "\n").encode()))
    return record


def _to_play(runs: list[Run], root: Path, record: dict | None) -> Run | None:
    """The run to play, None when the strip there is the one to keep (or nothing can be
    played): the best-ranked run with a checkpoint here, unless the strip is of a run ranked
    above it, or of it and its checkpoint is the one played."""
    by_rank = ranked(runs)
    order = [rel(r.path, root) for r in by_rank]
    present = [r for r in by_rank if (r.path / CHECKPOINT).is_file()]
    if not present:
        return None
    best = present[0]
    if record is None or record["run"] not in order:
        return best
    if record["run"] == rel(best.path, root):
        try:
            changed = fingerprint(best.path / CHECKPOINT) != record["checkpoint"]
        except OSError:  # unreadable now: playing it says why in one line
            changed = True
        return best if changed else None
    return best if order.index(rel(best.path, root)) < order.index(record["run"]) else None


def _bring(figures: Path, root_figures: Path, bench: str) -> None:
    """Where the report is written elsewhere than the results root, start its figures folder
    from the results root's strip of ``bench`` (the committed one) when it has none."""
    if figures.resolve() == root_figures.resolve():
        return
    for here, there in zip(strip_paths(figures, bench), strip_paths(root_figures, bench)):
        if there.is_file() and not here.exists():
            figures.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(there, here)


def update(bench: str, runs: list[Run], root: Path, out_dir: Path,
           play_episodes: bool) -> None:
    """Bring the strip of ``bench`` in the figures folder beside the report (in ``out_dir``)
    up to date (see the module's doc); a run that cannot be played is named on stderr in one
    line."""
    figures = out_dir / FIGURES
    _bring(figures, root / FIGURES, bench)
    if not play_episodes:
        return
    png, sidecar = strip_paths(figures, bench)
    try:
        record = read_record(sidecar) if sidecar.exists() and png.exists() else None
    except ValueError:
        record = None
    run = _to_play(runs, root, record)
    if run is None:
        return
    print(f"seed report: playing one greedy episode of {rel(run.path, root)} "
          f"(at most {MAX_STEPS:,} steps)", file=sys.stderr)
    try:
        play(run, root, png, sidecar)
    except Exception as e:  # an engine missing here, a checkpoint that does not load, ...
        why = one_line(e)
        kept = f"the strip of {record['run']} stays" if record else "no strip"
        print(f"seed report: {bench}: no greedy episode of {rel(run.path, root)} played "
              f"({why}); {kept}", file=sys.stderr)


def caption(record: dict, runs: list[Run], root: Path) -> str:
    """What the strip shows, from its JSON; and, when it is not of the benchmark's best run,
    which run that is."""
    cut = record["episode_length"] >= record["max_episode_steps"]
    text = (f"One greedy episode of `{record['run']}` (its checkpoint at "
            f"{frames_text(record['trained_frames'])} frames trained, sha256 "
            f"{record['checkpoint']['sha256'][:12]}, eval seed {record['seed']}): return "
            f"{record['episode_return']:g} over {record['episode_length']:,} steps"
            + (f" (cut at {record['max_episode_steps']:,})" if cut else "")
            + "; frames at steps " + ", ".join(f"{s:,}" for s in record["steps"])
            + ", each with the return so far above it and its step below.")
    best = ranked(runs)[0] if runs else None
    if best is not None and rel(best.path, root) != record["run"]:
        text += (f" Not the benchmark's best run by last-100 mean: that is "
                 f"`{rel(best.path, root)}` "
                 f"({final_return(training_episodes(best.episodes)):.2f}); the strip is of "
                 "the best run whose checkpoint was on the machine that made it.")
    return text


def section(bench: str, runs: list[Run], root: Path, out_dir: Path) -> list[str]:
    """The benchmark's greedy episode: the strip and its caption, or why there is none."""
    png, sidecar = strip_paths(out_dir / FIGURES, bench)
    out = [heading(bench, "greedy episode"), ""]
    if not (png.is_file() and sidecar.is_file()):
        return out + [NO_STRIP + ".", ""]
    try:
        record = read_record(sidecar)
    except ValueError as e:
        return out + [f"No strip: its record {rel(sidecar, out_dir)} is damaged ({e}).", ""]
    return out + [f"![{bench}: frames of one greedy episode]({rel(png, out_dir)})", "",
                  caption(record, runs, root), ""]
