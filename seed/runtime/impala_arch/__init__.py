"""IMPALA baseline: actors infer locally, send unrolls, pull parameters."""
