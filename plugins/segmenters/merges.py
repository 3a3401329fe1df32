"""``merges``: a dictionary's rules replayed in order, as training parsed its text (BPE's
inference). The tokenizer replays them itself, with its boundary and deletion events, so this
segmenter only says so (``replays_merges``)."""

import chunkpress.plugin as cp


class ReplayMerges(cp.Segmenter):
    replays_merges = True

    def segment(self, vocabulary, buf, offsets, out):
        raise cp.PluginError("segmenter 'merges' replays the rules: a tokenizer does, with no vocabulary search")
