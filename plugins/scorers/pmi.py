"""Pointwise mutual information scorers: PMI and count-scaled PMI (SPMI).

PMI of a pair is ln(k01 N / (k0 k1)); the loss is its negation (SPMI: times k01). It splits as
``loss_a = -(ln k01 + ln N)`` and ``loss_b = ln k0 + ln k1``, the form (and float evaluation
order) of the reference program, which decides its near-ties. They have no natural stop: set
``max_rules`` or ``min_count``.
"""

import math

from chunkpress.plugin import SplitScorer


class PmiScorer(SplitScorer):
    """loss = -PMI: favours pairs whose parts rarely occur apart, however rare the pair."""

    def __init__(self, params=None):
        pass

    @staticmethod
    def loss_a(N, m, k01):
        return -(math.log(float(k01)) + math.log(float(N)))

    @staticmethod
    def loss_b(k01, k0, k1, same):
        return math.log(float(k0)) + math.log(float(k1))


class SpmiScorer(SplitScorer):
    """loss = -k01 * PMI: PMI scaled by the count, between Re-Pair and PMI."""

    def __init__(self, params=None):
        pass

    @staticmethod
    def loss_a(N, m, k01):
        k = float(k01)
        return k * -(math.log(k) + math.log(float(N)))

    @staticmethod
    def loss_b(k01, k0, k1, same):
        return float(k01) * (math.log(float(k0)) + math.log(float(k1)))
