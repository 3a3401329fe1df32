"""The MDL loss of "Information Theoretic Chunking": change of total code length of a merge."""

import numpy as np

import chunkpress
from chunkpress.numerics import LOG2E, clog, elias_delta_bits, log_factorial
from chunkpress.scoring import SplitScorer


class MdlScorer(SplitScorer):
    """Change in data-plus-model bits; stops when no merge shortens the total (best loss > 0).

    The expressions follow the reference program's evaluation order term by term so that
    float rounding, and therefore every near-tie, comes out the same.
    """

    def __init__(self, params=None):
        pass

    def loss_a(self, N, m, k01):
        k01 = np.asarray(k01, dtype=np.int64)
        r = m - 256
        rule_bits = float(elias_delta_bits(r + 1) - elias_delta_bits(r)) + LOG2E * 2.0 * clog(m)
        length_bits = (elias_delta_bits(N - k01) - elias_delta_bits(N)).astype(np.float64)
        counts_bits = LOG2E * (
            log_factorial(N - k01 + m) - log_factorial(N + m - 1) - clog(m)
        )
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


@chunkpress.hookimpl
def register_scorers():
    return [
        chunkpress.ScorerInfo(
            name="mdl",
            factory=MdlScorer,
            summary="total code length of data plus model (Information Theoretic Chunking)",
            version="1",
        )
    ]
