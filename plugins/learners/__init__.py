"""The built-in learners, registered by reference: ``merges`` (the default: the merge engine,
bottom-up, with the scorer and rewriter of the config), ``unigram`` (Unigram LM, as
sentencepiece trains it), ``pathpiece`` (PathPiece: the fewest tokens, pruned top-down) and
``mdl-prune`` (pruned by description length, the ``mdl`` scorer's top-down counterpart)."""

from chunkpress.plugin import LEARNS_BY_MERGES, LearnerInfo, hookimpl

_HERE = "chunkpress.plugins.learners"


@hookimpl
def register_learners():
    return [
        LearnerInfo(name=LEARNS_BY_MERGES, factory=f"{_HERE}.merges:MergeEngine", version="1",
                    summary="bottom-up: the scorer picks a merge, the rewriter applies it, one rule at a time"),
        # 2: sentencepiece's seeds (right-maximal, one script a piece), where 1 took every frequent substring
        LearnerInfo(name="unigram", factory=f"{_HERE}.unigram:Unigram", params=f"{_HERE}.unigram:UnigramParams",
                    version="2", summary="Unigram LM (Kudo 2018) as sentencepiece trains it: seeds, EM, pruning"),
        LearnerInfo(name="pathpiece", factory=f"{_HERE}.pathpiece:PathPiece",
                    params=f"{_HERE}.pathpiece:PathPieceParams", version="1",
                    summary="PathPiece (Schmidt et al. 2024): the fewest tokens, pruned top-down from n-grams or BPE"),
        LearnerInfo(name="mdl-prune", factory=f"{_HERE}.mdl_prune:MdlPrune", params=f"{_HERE}.mdl_prune:MdlPruneParams",
                    version="1", summary="the tokens whose removal shortens the description length most go first "
                                         "(mdl's top-down counterpart)"),
    ]
