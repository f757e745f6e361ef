"""Execute the results notebooks headless (what ``make plots`` runs).

    python scripts/run_notebooks.py [--results DIR] [--plots DIR] [NOTEBOOK ...]

Runs ``notebooks/throughput.ipynb`` and ``notebooks/reward_curves.ipynb`` (or the ones
named) top to bottom with nbclient on the ``python3`` Jupyter kernel, reading the
results root ``--results`` (default ``$SEED_RESULTS`` or ``results``) and writing their
PNGs to ``--plots`` (default ``$SEED_PLOTS`` or ``<results>/plots``). The executed
notebooks, with their outputs, are saved beside the PNGs; the ones in ``notebooks/``
stay output-free. Exits non-zero with one line when the root holds no run, the Jupyter
packages (the ``notebooks`` extra) or the kernel are missing, or a cell fails (naming the
notebook and cell). The notebooks hold a few lines per cell: the figures are drawn by
:mod:`seed.plots`, the data read by :mod:`seed.results`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
DEFAULT_NOTEBOOKS = ("throughput.ipynb", "reward_curves.ipynb")
KERNEL = "python3"


class NotebookRunError(RuntimeError):
    """The notebooks cannot run or failed; the message is one line."""


def _check_jupyter() -> None:
    try:
        import nbclient  # noqa: F401  (run_notebooks executes with it)
        import nbformat  # noqa: F401
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError as e:
        raise NotebookRunError(
            f"{e.name} is not installed: the notebooks need the notebooks extra, "
            "`pip install -e '.[notebooks]'` (make setup installs it)") from None
    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        raise NotebookRunError(
            f"no {KERNEL!r} Jupyter kernel: install one into the venv with "
            f"`{sys.executable} -m ipykernel install --sys-prefix`") from None


def _check_results(results: Path) -> int:
    sys.path.insert(0, str(REPO))
    from seed.results.files import ResultsError
    from seed.results.run_dirs import find_runs
    try:
        runs = find_runs(results, include_partial=True)
    except ResultsError as e:
        raise NotebookRunError(str(e)) from None
    if not runs:
        raise NotebookRunError(
            f"no runs under {results}: a run directory holds config.json, metrics.csv and "
            "episodes.csv (train one first, e.g. `seed train --env toy:catch --frames 100000`)")
    return len(runs)


def _error_line(nb_name: str, exc) -> str:
    cell = getattr(exc, "cell_index", None)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip().splitlines()
    where = f"cell {cell}" if cell is not None else "a cell"
    return f"{nb_name}: {where} failed: {ename}: {evalue[0] if evalue else ''}"


def run_notebooks(results, plots=None, names=DEFAULT_NOTEBOOKS, timeout: int = 600,
                  echo=print) -> list[Path]:
    """Execute the notebooks; returns the PNGs in ``plots`` afterwards."""
    results = Path(results).resolve()
    plots = Path(plots).resolve() if plots else results / "plots"
    paths = []
    for name in names:
        p = Path(name)
        p = p if p.suffix == ".ipynb" else p.with_suffix(".ipynb")
        p = p if p.exists() else NOTEBOOKS / p.name
        if not p.exists():
            raise NotebookRunError(f"notebook {name} not found (looked in {NOTEBOOKS})")
        paths.append(p)
    n = _check_results(results)
    _check_jupyter()
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    plots.mkdir(parents=True, exist_ok=True)
    echo(f"{n} run dir(s) under {results}; plots to {plots}")

    saved = {k: os.environ.get(k) for k in ("SEED_RESULTS", "SEED_PLOTS", "MPLBACKEND")}
    os.environ.update(SEED_RESULTS=str(results), SEED_PLOTS=str(plots), MPLBACKEND="Agg")
    try:
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(nb, kernel_name=KERNEL, timeout=timeout,
                                    resources={"metadata": {"path": str(REPO)}})
            echo(f"executing {path.name} ...")
            try:
                client.execute()
            except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
                failed = plots / path.name
                nbformat.write(nb, failed)
                raise NotebookRunError(_error_line(path.name, e)
                                       + f" (executed notebook: {failed})") from None
            nbformat.write(nb, plots / path.name)
            text = "".join(out.get("text", "") for cell in nb.cells
                           for out in cell.get("outputs", [])
                           if out.get("output_type") == "stream")
            if text.strip():
                echo(text.rstrip("\n"))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    pngs = sorted(plots.glob("*.png"))
    echo(f"{len(pngs)} PNG(s) in {plots}; executed notebooks saved there too")
    return pngs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("notebooks", nargs="*", default=list(DEFAULT_NOTEBOOKS),
                   help="notebooks to run (default: throughput reward_curves)")
    p.add_argument("--results", default=os.environ.get("SEED_RESULTS", "results"),
                   help="results root (default $SEED_RESULTS or results)")
    p.add_argument("--plots", "--out", dest="plots", default=os.environ.get("SEED_PLOTS"),
                   help="where PNGs go (default $SEED_PLOTS or <results>/plots)")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = p.parse_args(argv)
    try:
        run_notebooks(args.results, args.plots, args.notebooks, args.timeout)
    except NotebookRunError as e:
        print(f"run_notebooks: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
