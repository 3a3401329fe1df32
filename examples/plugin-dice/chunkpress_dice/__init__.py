"""A third-party chunkpress scorer: merge the pair with the highest Dice coefficient.

Dice(s0, s1) = 2 k01 / (k0 + k1) is 1 when the two symbols only ever occur together. Install
with ``pip install examples/plugin-dice`` and use ``--scorer dice`` or, in a config::

    [scorer]
    name = "dice"
    params = { at_least = 3 }
"""

import attrs
import numpy as np

import chunkpress
from chunkpress.plugin.scoring import SplitScorer


@attrs.frozen(kw_only=True)
class DiceParams:
    at_least: int = attrs.field(default=2, validator=[attrs.validators.instance_of(int), attrs.validators.ge(2)])


class DiceScorer(SplitScorer):
    """loss = -2 k01 / (k0 + k1) for pairs seen ``at_least`` times; all of it in loss_b
    (loss_a = 0), so only changed pairs are rescored."""

    def __init__(self, params: DiceParams):
        self.at_least = params.at_least

    def loss_a(self, N, m, k01):
        return np.zeros(len(k01))

    def loss_b(self, k01, k0, k1, same):
        k01 = np.asarray(k01, float)
        dice = 2.0 * k01 / (np.asarray(k0, float) + np.asarray(k1, float))
        return np.where(k01 >= self.at_least, -dice, np.inf)  # rare pairs never win

    def stop(self, best_loss, k01):
        return not np.isfinite(best_loss)


@chunkpress.hookimpl
def register_scorers():
    return [
        chunkpress.ScorerInfo(
            name="dice", factory=DiceScorer, params=DiceParams, version="1.0",
            summary="highest Dice coefficient 2 k01 / (k0 + k1) (example plugin)",
        )
    ]
