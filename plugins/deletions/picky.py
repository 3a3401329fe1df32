"""Picky BPE (Chizhov et al. 2024, arXiv 2409.04599): after a merge of (a, b), a part whose
Intersection over Self, IoS(x) = f(ab) / f(x) with f(x) its count before the merge, exceeds
the threshold tau lives almost only inside ab: it leaves the vocabulary, its remaining
occurrences split back into what it was made of, and its place goes to a new merge.

As the authors' code: IoS > tau (the paper writes >=; with > tau = 1 is plain BPE); bytes are
never removed; f(x) before the merge is k_x + k_ab after it (for a pair (x, x), k_x + 2 k_ab,
the code's count: IoS is then k_ab / (k_x + k_ab)); the parts are checked left first, and a
removed symbol splits into the symbols it was made of that are still in the vocabulary. Our
choice: a later merge that makes a removed symbol's string gets a new id (the authors' code
gives back the old one), which changes no segmentation.
"""

import attrs
from chunkpress.plugin import DeletionPolicy


@attrs.frozen(kw_only=True)
class PickyParams:
    """``tau``: the IoS above which a part is removed, in (0, 1]; 1 removes nothing."""

    tau: float = attrs.field(default=0.9, validator=[attrs.validators.instance_of((int, float)),
                                                     attrs.validators.gt(0), attrs.validators.le(1)])


class Picky(DeletionPolicy):
    """Removes a part x of a merge into z when k_z / (k_z + k_x) > tau."""

    def __init__(self, params: PickyParams):
        tau = float(params.tau)

        def removes(k_z, k_part):
            return float(k_z) > tau * float(k_z + k_part)

        self.removes = removes
