"""Benchmarks of the architectures on this machine: ``seed compare`` and ``seed roofline``.

* :mod:`seed.bench.steady`: steady-state figures of one run from its ``metrics.csv``.
* :mod:`seed.bench.compare`: SEED, IMPALA, SEED again, each a separate ``seed train``
  process on a wall-clock budget, with the CPU use of its process tree; one table.
* :mod:`seed.bench.roofline`: what this machine's cores can reach for a configuration
  (simulation, batched inference and training costs measured in isolation).
* :mod:`seed.bench.sweep`: the compare over network sizes, against inference cost.
"""
