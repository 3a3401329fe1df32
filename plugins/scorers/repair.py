"""Re-Pair / BPE: merge the most frequent pair; stop when no pair occurs twice."""

import numpy as np

from ...plugin.hookspecs import hookimpl
from ...plugin.descriptors import ScorerInfo
from ...plugin.scoring import SplitScorer


class RepairScorer(SplitScorer):
    """loss = -k01. Depends on k01 alone, so symbol-count changes never trigger rescoring."""

    uses_parts = False
    #: The loss orders pairs exactly as "most frequent first" (ties: smallest (s0, s1)), which
    #: the fused loop finds with a pointer instead of evaluating losses.
    compiled = "most_frequent"
    stop_below = 2
    #: a pair seen once always stops the run, so the index keeps no heap for it
    min_merge_count = 2

    def __init__(self, params=None):
        pass

    def loss_a(self, N, m, k01):
        return -np.asarray(k01, dtype=np.float64)

    def loss_b(self, k01, k0, k1, same):
        return np.zeros(len(k01))

    def stop(self, best_loss, k01):
        return k01 < self.stop_below


@hookimpl
def register_scorers():
    return [
        ScorerInfo(
            name="repair",
            factory=RepairScorer,
            summary="most frequent pair (Re-Pair / BPE); stops when no pair occurs twice",
            version="1",
        )
    ]
