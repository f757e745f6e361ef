"""Benchmarks of the architectures on this machine: ``seed compare``, ``seed roofline`` and
``seed timeline``.

* :mod:`seed.bench.compare`: SEED, IMPALA, SEED again, each a separate ``seed train``
  process on a wall-clock budget, with the CPU use of its process tree; one table.
* :mod:`seed.bench.roofline`: what this machine's cores can reach for a configuration
  (simulation, batched inference and training costs measured in isolation, by
  :mod:`seed.bench.costs`), written as a :class:`seed.results.roofline.Roofline`.
* :mod:`seed.bench.sweep`: the compare over network sizes, against inference cost.
* :mod:`seed.bench.timeline`: ``seed timeline``, where each cycle of a lock-step SEED run
  went, from the stamps the run recorded (``timeline``, :mod:`seed.metrics.timeline`).

Steady-state figures of a run come from :func:`seed.results.steady.steady_state`, the rule every
reader of a ``metrics.csv`` shares.
"""
