"""Re-Pair / BPE: merge the most frequent pair; stop when no pair occurs twice."""
from chunkpress.plugin import SplitScorer


class RepairScorer(SplitScorer):
    """loss = -k01. Depends on k01 alone, so symbol-count changes never trigger rescoring."""

    uses_parts = False
    #: the loss orders pairs exactly as "most frequent first" (ties: smallest (s0, s1))
    by_count = True
    #: a pair seen once is never merged: the run stops when no pair occurs twice
    min_merge_count = 2

    def __init__(self, params=None):
        pass

    @staticmethod
    def loss_a(N, m, k01):
        return -float(k01)

    @staticmethod
    def loss_b(k01, k0, k1, same):
        return 0.0
