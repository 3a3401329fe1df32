"""The built-in segmenters, registered by reference: ``merges`` (the default for a dictionary
learned by merges: its rules replayed in order, as training parsed), ``longest-prefix`` (greedy
longest match, WordPiece's MaxMatch), ``fewest-tokens`` (the shortest path: the fewest tokens,
ties to the longest token, PathPiece's), ``likelihood`` (the most likely path under the
tokens' log-probabilities, Unigram LM's Viterbi), ``likelihood-f32`` (the same as
sentencepiece runs it, to the bit) and ``best-pair`` (sentencepiece's BPE: the
adjacent pair that spells the best-scored token joins first)."""

from chunkpress.plugin import REPLAYS_MERGES, SegmenterInfo, hookimpl

_HERE = "chunkpress.plugins.segmenters"


@hookimpl
def register_segmenters():
    return [
        SegmenterInfo(name=REPLAYS_MERGES, factory=f"{_HERE}.merges:ReplayMerges", version="1",
                      summary="the dictionary's merges replayed in order, as in training (BPE's inference)"),
        SegmenterInfo(name="longest-prefix", factory=f"{_HERE}.search:LongestPrefix", version="1",
                      summary="the longest token that starts the rest of the word, again and again (MaxMatch)"),
        SegmenterInfo(name="fewest-tokens", factory=f"{_HERE}.search:FewestTokens", version="1",
                      summary="the fewest tokens, ties to the longest last token (a shortest path: PathPiece)"),
        SegmenterInfo(name="likelihood", factory=f"{_HERE}.search:Likelihood", version="1",
                      summary="the most likely tokens under their log-probabilities (Viterbi: Unigram LM)"),
        SegmenterInfo(name="likelihood-f32", factory=f"{_HERE}.search:SentencepieceLikelihood", version="1",
                      summary="sentencepiece's unigram Viterbi to the bit: float32 sums along each whole text"),
        SegmenterInfo(name="best-pair", factory=f"{_HERE}.search:BestPair", version="1",
                      summary="from the characters, the adjacent pair spelling the best-scored token joins first "
                              "(sentencepiece's BPE)"),
    ]
