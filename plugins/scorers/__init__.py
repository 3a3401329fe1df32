"""The built-in scorers, registered as a third party registers one, by reference: a scorer's
module, and its compiled loss, load when a job uses it."""

from chunkpress.plugin import ScorerInfo, hookimpl

_HERE = "chunkpress.plugins.scorers"


@hookimpl
def register_scorers():
    return [
        ScorerInfo(name="repair", factory=f"{_HERE}.repair:RepairScorer", version="1",
                   summary="most frequent pair (Re-Pair / BPE); stops when no pair occurs twice"),
        ScorerInfo(name="mdl", factory=f"{_HERE}.mdl:MdlScorer", version="1",
                   summary="total code length of data plus model (Information Theoretic Chunking)"),
        ScorerInfo(name="pmi", factory=f"{_HERE}.pmi:PmiScorer", version="1",
                   summary="pointwise mutual information -ln(k01 N / (k0 k1)); needs max_rules"),
        ScorerInfo(name="spmi", factory=f"{_HERE}.pmi:SpmiScorer", version="1",
                   summary="count-scaled PMI -k01 ln(k01 N / (k0 k1)); needs max_rules"),
        ScorerInfo(name="wordpiece", factory=f"{_HERE}.wordpiece:WordPieceScorer", version="1",
                   summary="WordPiece's score k01 / (k0 k1); stops when no pair occurs twice"),
        ScorerInfo(name="length-max", factory=f"{_HERE}.length_max:LengthMaxScorer", version="1",
                   summary="Length-MAX's objective as a merge score: k01 times the pair's bytes"),
    ]
