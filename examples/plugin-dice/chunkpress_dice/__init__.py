"""A third-party chunkpress plugin with two scorers, written as the hook spec documents.

* ``dice``: merge the pair with the highest Dice coefficient 2 k01 / (k0 + k1), which is 1
  when the two symbols only ever occur together. It splits (``loss_a = 0``), so the engine
  rescores only the pairs whose counts changed.
* ``jaccard``: k01 / (k0 + k1 - k01), written as one ``loss`` that does not split; it
  ignores N and m (``uses_totals = False``), so the engine still rescores only changed pairs.
* ``tscore``: the collocation t-score (k01 - k0 k1 / N) / sqrt(k01). It reads N, so it does
  not split: the engine scores every candidate at every step.

Both losses are plain functions of one pair; the engine compiles them with numba and runs them
in its fused loop, as fast as a built-in scorer. Install with ``pip install
examples/plugin-dice`` and use ``--scorer dice`` or, in a config::

    [scorer]
    name = "dice"
    params = { at_least = 3 }
"""

import math

import attrs
from chunkpress import Scorer, ScorerInfo, SplitScorer, hookimpl


@attrs.frozen(kw_only=True)
class AtLeast:
    at_least: int = attrs.field(default=2, validator=[attrs.validators.instance_of(int), attrs.validators.ge(2)])


class DiceScorer(SplitScorer):
    """loss = -2 k01 / (k0 + k1); pairs seen fewer than ``at_least`` times never merge."""

    def __init__(self, params: AtLeast):
        self.min_merge_count = params.at_least

    @staticmethod
    def loss_a(N, m, k01):
        return 0.0

    @staticmethod
    def loss_b(k01, k0, k1, same):
        return -2.0 * k01 / (k0 + k1)


class JaccardScorer(Scorer):
    """loss = -k01 / (k0 + k1 - k01): the share of the parts' occurrences that are the pair."""

    uses_totals = False  # the loss reads neither N nor m

    def __init__(self, params: AtLeast):
        self.min_merge_count = params.at_least

    @staticmethod
    def loss(N, m, k01, k0, k1, same):
        if same:
            return -k01 / (k0 - k01)
        return -k01 / (k0 + k1 - k01)


class TScoreScorer(Scorer):
    """loss = -(k01 - k0 k1 / N) / sqrt(k01): pairs seen more often than chance predicts."""

    def __init__(self, params: AtLeast):
        self.min_merge_count = params.at_least

    @staticmethod
    def loss(N, m, k01, k0, k1, same):
        return -(k01 - k0 * (k1 / N)) / math.sqrt(k01)


@hookimpl
def register_scorers():
    return [
        ScorerInfo(name="dice", factory=DiceScorer, params=AtLeast, version="2.0",
                   summary="highest Dice coefficient 2 k01 / (k0 + k1) (example plugin)"),
        ScorerInfo(name="jaccard", factory=JaccardScorer, params=AtLeast, version="1.0",
                   summary="highest Jaccard index k01 / (k0 + k1 - k01) (example plugin)"),
        ScorerInfo(name="tscore", factory=TScoreScorer, params=AtLeast, version="1.0",
                   summary="highest t-score (k01 - k0 k1 / N) / sqrt(k01) (example plugin)"),
    ]
