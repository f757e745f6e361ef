"""Hold replay's samples per insert to a ratio, on both sides (as Reverb's SampleToInsertRatio).

Without it, how often each sequence is replayed depends on how fast the learner
is next to the actors: the same config then learns differently per frame on
another machine, or on a busy one. With ``samples_per_insert`` = r > 0, after
``min_size`` inserts every insert buys r samples, give or take ``error_buffer``:

    credit = r * (inserted - min_size) - sampled

* an insert waits while ``credit + r > error_buffer`` (the learner is behind:
  in SEED the inference thread waits, so the actors wait for their actions);
* a sample of ``b`` waits while ``credit - b < -error_buffer`` (the actors are
  behind), and always until ``min_size`` items were inserted.

So ``|credit|`` stays within ``error_buffer`` (plus one step) and ``sampled /
inserted`` tends to r however fast either side runs. Both sides can always go on
as long as ``2 * error_buffer >= r + b``; the constructor and
:meth:`can_sample` refuse settings that could wait forever. With r = 0 inserts
never wait and samples wait for ``min_size`` only.
"""

from __future__ import annotations


class SampleToInsertRatio:
    def __init__(self, samples_per_insert: float, min_size: int, error_buffer: float):
        if not samples_per_insert >= 0:
            raise ValueError(f"samples_per_insert must be >= 0 (0: no limit), "
                             f"got {samples_per_insert}")
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}")
        if samples_per_insert > 0 and not error_buffer >= samples_per_insert:
            raise ValueError(f"error_buffer ({error_buffer}) must be at least samples_per_insert "
                             f"({samples_per_insert}), or no insert could ever pass")
        self.samples_per_insert = float(samples_per_insert)
        self.min_size = int(min_size)
        self.error_buffer = float(error_buffer)

    def credit(self, inserted: int, sampled: int) -> float:
        return self.samples_per_insert * (inserted - self.min_size) - sampled

    def can_insert(self, inserted: int, sampled: int) -> bool:
        if self.samples_per_insert == 0 or inserted < self.min_size:
            return True
        return self.credit(inserted, sampled) + self.samples_per_insert <= self.error_buffer

    def can_sample(self, inserted: int, sampled: int, batch_size: int) -> bool:
        if self.samples_per_insert > 0 and 2 * self.error_buffer < \
                self.samples_per_insert + batch_size:
            raise ValueError(
                f"a batch of {batch_size} with samples_per_insert {self.samples_per_insert} "
                f"needs error_buffer >= {(self.samples_per_insert + batch_size) / 2}, got "
                f"{self.error_buffer}: inserts and samples could both wait forever")
        if inserted < self.min_size:
            return False
        if self.samples_per_insert == 0:
            return True
        return self.credit(inserted, sampled) - batch_size >= -self.error_buffer
