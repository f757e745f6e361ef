"""Reading what runs and benchmarks wrote under a results root: the one reading layer of the
suite (``make report``, ``seed compare``, ``seed train --resume``, the plots, the notebooks
and the tests read result files through it). One module per job:

* :mod:`seed.results.files`: one file read strictly (JSON, CSV via pandas), the errors
  (:class:`~seed.results.files.ResultsError` and its kinds), each message one line naming
  the file and what is wrong.
* :mod:`seed.results.run_dirs`: finding run directories and reading them into
  :class:`~seed.results.run_dirs.Run` (config, metrics, episodes, summary), old metrics columns
  translated by the one table :data:`~seed.results.run_dirs.OLD_COLUMNS`.
* :mod:`seed.results.steady`: the steady-state rule ``seed compare`` measures by.
* :mod:`seed.results.curves`: episode returns shaped into curves, final returns, thresholds.
* one type per result file, each with its schema, one loader that absorbs older files'
  differences, and the rows it contributes to the report and the terminal:
  :mod:`seed.results.compare` (``compare.csv`` + ``compare.json``), :mod:`seed.results.sweep`
  (``sweep.csv``), :mod:`seed.results.roofline` (``results/roofline/*.json``),
  :mod:`seed.results.timeline` (a SEED run's ``timeline.json``);
* :mod:`seed.results.text`: the cell formats they and the report share.
* :mod:`seed.results.tables`: the tables the figures and the report draw (runs, SEED/IMPALA
  ratios, shares of the roofline ceiling, final returns).

Frames are env frames (emulator frames: an Atari step with frame skip 4 is 4 frames), as the
runs write them; ``Run.frames_per_step`` tells how many frames one env step is.
"""
