"""The MDL loss of "Information Theoretic Chunking": change of total code length of a merge."""

import numpy as np

from ...plugin.hookspecs import hookimpl
from ...plugin.descriptors import ScorerInfo
from ...engine.numerics import (
    LOG2E,
    clog_scalar,
    elias_delta_bits,
    elias_delta_bits_scalar,
    log_factorial,
    log_factorial_scalar,
)
from ...plugin.scoring import SplitScorer


class MdlScorer(SplitScorer):
    """Change in data-plus-model bits; stops when no merge shortens the total (best loss > 0).

    The expressions follow the reference program's evaluation order term by term so that
    float rounding, and therefore every near-tie, comes out the same.
    """

    #: A pair seen once has loss >= log2(m) - 3 > 0 (one rule costs 2 log2 m, the counts gain
    #: log2 m, the length field at most 3 bits, and loss_b >= 0): it can never be merged.
    min_merge_count = 2
    compiled = "mdl"

    def __init__(self, params=None):
        pass

    def loss_a(self, N, m, k01):
        k01 = np.asarray(k01, dtype=np.int64)
        r = m - 256
        log_m = clog_scalar(float(m))
        rule_bits = float(elias_delta_bits_scalar(r + 1) - elias_delta_bits_scalar(r)) + LOG2E * 2.0 * log_m
        length_bits = (elias_delta_bits(N - k01) - elias_delta_bits_scalar(N)).astype(np.float64)
        counts_bits = LOG2E * (log_factorial(N - k01 + m) - log_factorial_scalar(N + m - 1) - log_m)
        return rule_bits + length_bits + counts_bits

    def loss_b(self, k01, k0, k1, same):
        k01 = np.asarray(k01, dtype=np.int64)
        k0 = np.asarray(k0, dtype=np.int64)
        k1 = np.asarray(k1, dtype=np.int64)
        lf = log_factorial
        distinct = LOG2E * (lf(k0) + lf(k1) - lf(k0 - k01) - lf(np.maximum(k1 - k01, 0)) - lf(k01))
        equal = LOG2E * (lf(k0) - lf(np.maximum(k0 - 2 * k01, 0)) - lf(k01))
        return np.where(same, equal, distinct)

    def stop(self, best_loss, k01):
        return best_loss > 0.0


@hookimpl
def register_scorers():
    return [
        ScorerInfo(
            name="mdl",
            factory=MdlScorer,
            summary="total code length of data plus model (Information Theoretic Chunking)",
            version="1",
        )
    ]
