"""The MDL loss of "Information Theoretic Chunking": change of total code length of a merge."""

import math

from chunkpress.plugin import LOG2E, SplitScorer, elias_delta_bits_scalar, log_factorial_scalar

lf = log_factorial_scalar
ed = elias_delta_bits_scalar


class MdlScorer(SplitScorer):
    """Change in data-plus-model bits; stops when no merge shortens the total (best loss > 0).

    The expressions follow the reference program's evaluation order term by term so that
    float rounding, and therefore every near-tie, comes out the same.
    """

    #: A pair seen once has loss >= log2(m) - 3 > 0 (one rule costs 2 log2 m, the counts gain
    #: log2 m, the length field at most 3 bits, and loss_b >= 0): it can never be merged.
    min_merge_count = 2

    def __init__(self, params=None):
        pass

    @staticmethod
    def loss_a(N, m, k01):
        r = m - 256
        log_m = math.log(float(m))
        rule_bits = float(ed(r + 1) - ed(r)) + LOG2E * 2.0 * log_m
        length_bits = float(ed(N - k01) - ed(N))
        counts_bits = LOG2E * (lf(N - k01 + m) - lf(N + m - 1) - log_m)
        return rule_bits + length_bits + counts_bits

    @staticmethod
    def loss_b(k01, k0, k1, same):
        if same:
            return LOG2E * (lf(k0) - lf(max(k0 - 2 * k01, 0)) - lf(k01))
        return LOG2E * (lf(k0) + lf(k1) - lf(k0 - k01) - lf(max(k1 - k01, 0)) - lf(k01))

    @staticmethod
    def stop(best_loss, k01):
        return best_loss > 0.0
