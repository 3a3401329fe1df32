"""What each version of chunk-cm's model is (:data:`MODELS`): its contexts, tree, runs and the
params it offers. Archives name their model in the codec (``chunkpress.chunk-cm.v5``), and the
compiled loop reads these choices from the tables, so every version runs the same kernel."""

from __future__ import annotations

import attrs

from ..mixing.states import COUNT_LIMIT
from . import layout


@attrs.frozen(kw_only=True)
class Model:
    """What one version of chunk-cm's model is: the only place the versions differ."""

    version: int
    #: the hashed contexts, in mixer order (a coder's ``contexts`` param keeps the first few)
    orders: tuple[int, ...]
    #: the tree: shaped by the ranks' weight classes, coded first (else the complete trie)
    weighted: bool
    #: and split where spellings part soonest, near the weight's half (else at the half)
    prefix_splits: bool = False
    #: the run model's keys: contexts whose last rank it follows, and ids hashed for one more
    run_contexts: tuple[int, ...] = ()
    run_ids: int = 0
    #: log2 of the two hashed APMs' contexts at most (fewer in small tables): they are read at
    #: every coded bit and miss the cache when large, so fewer bits trade a little size for time
    apm_bits: int = 16
    #: the bit histories' count limits (``cm_model.bit_history_states``)
    count_limit: tuple[int, ...] = COUNT_LIMIT
    #: a flag input a context: its bit history is empty
    empty_flags: bool = False
    #: ids keyed by the match model's second lookup (0: none)
    long_match: int = 0
    #: every mixer weight's start (1/65536)
    mixer_init: int = 1 << 14
    #: the mixers' weight sets picked by the node itself near the root (``layout.PATH1_NODES``...)
    path_sets: bool = False
    #: the contexts given direct probabilities (``mixing.direct``) where the ``direct`` param asks
    direct: tuple[int, ...] = ()
    #: the text-indirect contexts added after the others where the ``indirect`` param asks
    indirect: tuple[int, ...] = ()
    #: the context the expected chunk's takes the place of where the ``expect`` param asks (-1:
    #: the model has no ``expect``)
    expected_replaces: int = -1
    #: the context the opener's takes the place of where the ``opener`` param asks (-1: the
    #: model has no ``opener``)
    opener_replaces: int = -1
    #: whether mixer 1's sets can also be picked by the structure where the ``structure`` param asks
    structure_sets: bool = False
    #: the contexts the scoped ones take the places of, in order, where the ``scoped`` param asks
    #: (empty: the model has no ``scoped``)
    scoped_replaces: tuple[int, ...] = ()

    @property
    def codec_id(self) -> str:
        return f"chunkpress.chunk-cm.v{self.version}"

    @property
    def runs(self) -> int:
        """How many runs the model has: one a context, one more for the ids."""
        return len(self.run_contexts) + (self.run_ids > 0)


MODELS = {
    1: Model(version=1, orders=layout.MODEL1_ORDER, weighted=False),
    2: Model(version=2, orders=layout.MODEL2_ORDER, weighted=True),
    3: Model(version=3, orders=layout.MODEL3_ORDER, weighted=True, run_contexts=layout.MODEL3_RUN_CONTEXTS,
             run_ids=layout.MODEL3_RUN_IDS, apm_bits=14),
    4: Model(version=4, orders=layout.MODEL3_ORDER, weighted=True, prefix_splits=True,
             run_contexts=layout.MODEL3_RUN_CONTEXTS, run_ids=layout.MODEL3_RUN_IDS, apm_bits=14,
             count_limit=layout.MODEL4_COUNT_LIMIT, empty_flags=True, long_match=layout.MODEL4_LONG_MATCH,
             mixer_init=1 << 13),
}
MODELS[5] = attrs.evolve(MODELS[4], version=5, path_sets=True, direct=layout.DIRECT_CONTEXTS,
                         indirect=layout.INDIRECT_CONTEXTS, expected_replaces=layout.EXPECTED_REPLACES,
                         opener_replaces=layout.OPENER_REPLACES, structure_sets=True,
                         scoped_replaces=layout.SCOPED_REPLACES)
#: model 6 is model 5 with -9's pieces always on (its params class holds them as constants):
#: one version where model 5 had eight params to turn them on
MODELS[6] = attrs.evolve(MODELS[5], version=6)
