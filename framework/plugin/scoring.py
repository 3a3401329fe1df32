"""The scorer role: a loss per candidate pair (lower is better) and a stop rule.

A scorer is a plain Python object working on numpy arrays; the engine calls it once or twice
per merge step with all the pairs that need a score, never once per pair. Two kinds:

* :class:`SplitScorer` — the loss is ``loss_a(N, m, k01) + loss_b(k01, k0, k1, same)``. The
  engine keeps pairs grouped by k01 with the minimum ``loss_b`` of each group, and only rescores
  pairs whose k01, k0 or k1 changed. Set ``uses_parts = False`` when ``loss_b`` ignores k0/k1,
  so pairs need no rescoring when a symbol count changes.
* :class:`Scorer` — any ``loss(N, m, k01, k0, k1, same)``; the engine rescores every pair each
  step (a full vectorized scan).

Selection rule (the reference program's): within a group of equal k01 the pair with the
smallest ``loss_b`` wins, then the smallest (s0, s1); across groups the smallest
``loss_a + loss_b`` wins, and on equal loss the lower k01.
"""

from __future__ import annotations

import numpy as np


class Scorer:
    """Base class of non-splittable scorers: implement :meth:`loss` and :meth:`stop`."""

    splits = False
    uses_parts = True
    #: Pairs with a smaller joint count always have a loss at which :meth:`stop` is true. The
    #: index then skips rescoring them on every merge and scores them once, when the run stops,
    #: so that the final (rejected) candidate is still exact.
    min_merge_count = 1
    #: Built-in scorers only: the name of the compiled twin of this loss in
    #: ``chunkpress.engine.compiled_losses`` (bit-identical, tested). The linked rewriter then runs the
    #: merge loop inside one kernel call per batch, with no Python per merge.
    compiled: str | None = None

    def loss(self, N: int, m: int, k01, k0, k1, same) -> np.ndarray:
        """Loss of merging each pair: arrays of joint count, part counts, and s0 == s1 flag."""
        raise NotImplementedError

    def stop(self, best_loss: float, k01: int) -> bool:
        """True when the best candidate (its loss and joint count) should not be merged."""
        return False


class SplitScorer(Scorer):
    """Base class of scorers whose loss is ``loss_a(N, m, k01) + loss_b(k01, k0, k1, same)``."""

    splits = True

    def loss_a(self, N: int, m: int, k01) -> np.ndarray:
        raise NotImplementedError

    def loss_b(self, k01, k0, k1, same) -> np.ndarray:
        raise NotImplementedError

    def loss(self, N, m, k01, k0, k1, same):
        return self.loss_a(N, m, k01) + self.loss_b(k01, k0, k1, same)
