"""``merges``: the framework's merge engine, bottom-up: the config's scorer picks each merge and
its rewriter applies it, one rule at a time, until the scorer or the size stops it. The
pipeline runs the engine itself (compiled, with the boundary and deletion policies), so this
learner only says so (``bottom_up``)."""

import chunkpress.plugin as cp


class MergeEngine(cp.Learner):
    bottom_up = True
    segmenter = cp.REPLAYS_MERGES

    def learn(self, buf, offsets, counts, vocab_size, bottom_up):
        raise cp.PluginError("learner 'merges' is the merge engine: a pipeline runs it, with its scorer and rewriter")
