"""WordPiece's merge score: f(ab) / (f(a) f(b)), the pair's count over the product of its parts'.

The loss is its negated logarithm, split as ``loss_a = -ln k01`` and ``loss_b = ln k0 + ln k1``.
Within a step N is fixed, so this orders pairs exactly as PMI does (-ln(k01 N / (k0 k1))); the
two differ only in how floats round near-ties. It favours pairs whose parts rarely occur
apart, so rare pairs of rare symbols score highest: a pair seen once is never merged (as
Re-Pair), and the run stops when no pair occurs twice.
"""

import math

from chunkpress.plugin import SplitScorer


class WordPieceScorer(SplitScorer):
    """loss = -ln(k01 / (k0 k1))."""

    min_merge_count = 2

    def __init__(self, params=None):
        pass

    @staticmethod
    def loss_a(N, m, k01):
        return -math.log(float(k01))

    @staticmethod
    def loss_b(k01, k0, k1, same):
        return math.log(float(k0)) + math.log(float(k1))
