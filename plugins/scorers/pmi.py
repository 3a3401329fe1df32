"""Pointwise mutual information scorers: PMI and count-scaled PMI (SPMI).

PMI of a pair is ln(k01 N / (k0 k1)); the loss is its negation (SPMI: times k01). It splits as
``loss_a = -(ln k01 + ln N)`` and ``loss_b = ln k0 + ln k1``, the form (and float evaluation
order) of the reference program, which decides its near-ties. They have no natural stop: set
``max_rules`` or ``min_count``.
"""

import numpy as np

from ...plugin.hookspecs import hookimpl
from ...plugin.descriptors import ScorerInfo
from ...engine.numerics import clog
from ...plugin.scoring import SplitScorer


class PmiScorer(SplitScorer):
    """loss = -PMI: favours pairs whose parts rarely occur apart, however rare the pair."""

    compiled = "pmi"

    def __init__(self, params=None):
        pass

    def loss_a(self, N, m, k01):
        return -(clog(k01) + clog(float(N)))

    def loss_b(self, k01, k0, k1, same):
        return clog(k0) + clog(k1)


class SpmiScorer(SplitScorer):
    """loss = -k01 * PMI: PMI scaled by the count, between Re-Pair and PMI."""

    compiled = "spmi"

    def __init__(self, params=None):
        pass

    def loss_a(self, N, m, k01):
        k = np.asarray(k01, dtype=np.float64)
        return k * -(clog(k) + clog(float(N)))

    def loss_b(self, k01, k0, k1, same):
        return np.asarray(k01, dtype=np.float64) * (clog(k0) + clog(k1))


@hookimpl
def register_scorers():
    return [
        ScorerInfo(
            name="pmi",
            factory=PmiScorer,
            summary="pointwise mutual information -ln(k01 N / (k0 k1)); needs max_rules",
            version="1",
        ),
        ScorerInfo(
            name="spmi",
            factory=SpmiScorer,
            summary="count-scaled PMI -k01 ln(k01 N / (k0 k1)); needs max_rules",
            version="1",
        ),
    ]
