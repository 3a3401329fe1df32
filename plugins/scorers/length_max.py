"""Length-MAX as a greedy merge score: f(ab) |ab|, the pair's count times the bytes it spells.

The Length-MAX tokenizer maximises frequency times length over the whole vocabulary with a
graph partition; this is its objective for one merge at a time, which the engine's greedy loop
can run: it merges the pair that covers the most bytes of the text (most frequent first when
lengths are equal). A pair seen once is never merged; the run stops when no pair occurs twice.
How far its vocabularies are from the paper's: examples/tokenizers/README.md.
"""

from chunkpress.plugin import SplitScorer


class LengthMaxScorer(SplitScorer):
    """loss = -k01 (n0 + n1), n0 and n1 the byte lengths of the pair's symbols."""

    min_merge_count = 2
    uses_parts = False  # the counts of the parts do not enter: rescored when k01 changes
    uses_lengths = True

    def __init__(self, params=None):
        pass

    @staticmethod
    def loss_a(N, m, k01):
        return 0.0

    @staticmethod
    def loss_b(k01, k0, k1, same, n0, n1):
        return -float(k01) * float(n0 + n1)
