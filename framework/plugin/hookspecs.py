"""The hook specifications: the only place where chunkpress's plugin hooks are defined.

Every component, built-in or third-party, reaches the framework through one of these hooks.
They are called once, when the registry is built; the merge loop never calls pluggy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .descriptors import (
        BoundaryInfo,
        CoderInfo,
        DeletionInfo,
        LearnerInfo,
        NormalizerInfo,
        PreTokenizerInfo,
        RewriterInfo,
        ScorerInfo,
        SegmenterInfo,
    )

hookspec = pluggy.HookspecMarker("chunkpress")
hookimpl = pluggy.HookimplMarker("chunkpress")


@hookspec
def register_scorers() -> list[ScorerInfo]:
    """Return a list of :class:`chunkpress.ScorerInfo` descriptors.

    A scorer is a :class:`chunkpress.Scorer` or :class:`chunkpress.SplitScorer` whose loss
    (lower is better) is written for ONE pair, with scalar arguments, in numpy/math style. The
    engine compiles it with numba and calls it from its fused merge loop, exactly as it calls the
    built-in losses. Split the loss into ``loss_a(N, m, k01)`` + ``loss_b(k01, k0, k1, same)``
    when you can: the engine then rescores only the pairs whose counts changed. Params reach a
    loss through a closure (numba freezes the values as constants). Example, a complete plugin
    module that adds smoothed PMI::

        import math
        import attrs
        import chunkpress

        @attrs.frozen(kw_only=True)
        class SmoothedParams:
            alpha: float = attrs.field(default=0.5, validator=attrs.validators.gt(0))
            at_least: int = attrs.field(default=3, validator=attrs.validators.ge(2))

        class SmoothedPmi(chunkpress.SplitScorer):
            # -ln((k01 + alpha) N / (k0 k1)): PMI that trusts rare pairs less
            def __init__(self, params):
                self.min_merge_count = params.at_least   # rarer pairs never merge
                alpha = params.alpha                     # a constant to the compiled loss
                def loss_a(N, m, k01):
                    return -(math.log(k01 + alpha) + math.log(N))
                self.loss_a = loss_a
            @staticmethod
            def loss_b(k01, k0, k1, same):
                return math.log(k0) + math.log(k1)

        @chunkpress.hookimpl
        def register_scorers():
            return [chunkpress.ScorerInfo(name="smoothed-pmi", factory=SmoothedPmi,
                                          params=SmoothedParams, version="1.0",
                                          summary="PMI with add-alpha smoothing of the pair count")]

    Expose the module under the entry-point group ``chunkpress`` in your pyproject.toml::

        [project.entry-points.chunkpress]
        smoothed_pmi = "my_package.smoothed_pmi"
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_rewriters() -> list[RewriterInfo]:
    """Return a list of :class:`chunkpress.RewriterInfo` descriptors.

    A rewriter is a :class:`chunkpress.Rewriter`: it owns the working string (see the base class
    for the methods it needs; ``replay`` has a default). Example, registering a rewriter class that subclasses the reference one::

        import chunkpress
        from chunkpress.plugins.rewriters.scan import ScanRewriter

        class LoudScan(ScanRewriter):
            def apply(self, s0, s1):
                report = super().apply(s0, s1)
                print("merged", s0, s1, "at", report.sites, "sites")
                return report

        @chunkpress.hookimpl
        def register_rewriters():
            return [chunkpress.RewriterInfo(name="loud-scan", factory=lambda params: LoudScan(),
                                            summary="scan, printing every merge", version="1")]
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_coders() -> list[CoderInfo]:
    """Return a list of :class:`chunkpress.CoderInfo` descriptors.

    A coder is a :class:`chunkpress.Coder`: it turns (rules, symbols) into bytes and back; its
    ``codec_id`` is written into every archive and must change whenever the byte format changes.
    The framework validates the header, bounds the string (``max_symbols``), caps memory while
    ``decode`` runs and turns its exceptions into a FormatError. Example, a coder that stores
    the symbols as raw little-endian uint32 (useful as a baseline)::

        import numpy as np
        import chunkpress

        class RawU32(chunkpress.Coder):
            codec_id = "example.raw-u32.v1"
            def encode(self, rules, symbols, *, dictionary_size=None):
                head = np.array([len(rules), len(symbols)], "<u4").tobytes()
                return head + rules.astype("<u4").tobytes() + symbols.astype("<u4").tobytes()
            def decode(self, payload, *, dictionary_size=None, max_symbols=None):
                r, n = np.frombuffer(payload[:8], "<u4")
                body = np.frombuffer(payload[8:], "<u4").astype(np.int64)
                return body[: 2 * r].reshape(-1, 2), body[2 * r : 2 * r + n]

        @chunkpress.hookimpl
        def register_coders():
            return [chunkpress.CoderInfo(name="raw-u32", factory=RawU32,
                                         summary="uint32 per symbol", version="1")]
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_boundary_policies() -> list[BoundaryInfo]:
    """Return a list of :class:`chunkpress.plugin.BoundaryInfo` descriptors.

    A boundary policy is a :class:`chunkpress.plugin.BoundaryPolicy`: for every pre-token
    boundary of a text it says from which step pairs across it are candidates, or never. The
    engine opens each group of boundaries at its step, counting the new pairs where they are
    (no recount of the text), and encoding does the same. Example, a policy that lets every
    word join the next after ``after`` rules, except across a newline::

        import numpy as np
        import attrs
        import chunkpress.plugin as cp

        @attrs.frozen(kw_only=True)
        class Params:
            after: int = attrs.field(default=1000, validator=attrs.validators.ge(0))

        class AllSpaces(cp.BoundaryPolicy):
            def opening_steps(self, data, breaks):
                steps = np.full(data.size, self.params.after, dtype=np.int64)
                newline = (data == 10) | (np.roll(data, -1) == 10)  # a newline on either side
                steps[newline] = -1
                return steps

        @cp.hookimpl
        def register_boundary_policies():
            return [cp.BoundaryInfo(name="all-spaces", factory=AllSpaces, params=Params, version="1",
                                    summary="every boundary but a newline opens after `after` rules")]

    A policy must keep each unit of text that never opens split the same on its own as in
    context (see ``opening_steps``): encoding splits new text into those units first.
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_deletion_policies() -> list[DeletionInfo]:
    """Return a list of :class:`chunkpress.plugin.DeletionInfo` descriptors.

    A deletion policy is a :class:`chunkpress.plugin.DeletionPolicy` whose ``removes(k_z,
    k_part)``, compiled like a scorer's loss, says after each merge whether a part of the merged
    pair leaves the vocabulary. Example, Picky BPE's rule with its threshold as a param::

        import attrs
        import chunkpress.plugin as cp

        @attrs.frozen(kw_only=True)
        class Params:
            tau: float = attrs.field(default=0.9, validator=[attrs.validators.gt(0), attrs.validators.le(1)])

        class Picky(cp.DeletionPolicy):
            def __init__(self, params):
                tau = params.tau  # a constant to the compiled function
                def removes(k_z, k_part):
                    return k_z > tau * (k_z + k_part)  # IoS = k_z / (k_z + k_part) > tau
                self.removes = removes

        @cp.hookimpl
        def register_deletion_policies():
            return [cp.DeletionInfo(name="my-picky", factory=Picky, params=Params, version="1",
                                    summary="Picky BPE's intersection over self")]
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_segmenters() -> list[SegmenterInfo]:
    """Return a list of :class:`chunkpress.plugin.SegmenterInfo` descriptors.

    A segmenter is a :class:`chunkpress.plugin.Segmenter`: a tokenizer's inference, which cuts
    each unit of text (a pre-token) into tokens of a :class:`chunkpress.plugin.Vocabulary`, a
    byte trie it walks with ``trie_child``. Compile the walk: a tokenizer calls ``segment`` once
    on all the distinct units of a text. Example, the shortest tokens first (every byte alone,
    where a byte is a token, as it always is)::

        import numpy as np
        import chunkpress.plugin as cp

        @cp.kernel
        def _bytes(buf, offsets, out, counts):
            for u in range(offsets.size - 1):
                for k in range(offsets[u], offsets[u + 1]):
                    out[k] = buf[k]
                counts[u] = offsets[u + 1] - offsets[u]

        class Bytes(cp.Segmenter):
            def segment(self, vocabulary, buf, offsets, out):
                counts = np.zeros(offsets.size - 1, dtype=np.int64)
                _bytes(buf, offsets, out, counts)
                return counts

        @cp.hookimpl
        def register_segmenters():
            return [cp.SegmenterInfo(name="bytes", factory=Bytes, version="1",
                                     summary="every byte a token of its own")]

    Test it with :func:`chunkpress.testing.check_segmenter`.
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_learners() -> list[LearnerInfo]:
    """Return a list of :class:`chunkpress.plugin.LearnerInfo` descriptors.

    A learner is a :class:`chunkpress.plugin.Learner`: it learns a vocabulary top-down from a
    text's word counts, as Unigram LM and PathPiece do, where the built-in ``merges`` learns one
    bottom-up. ``chunkpress train --learner NAME`` runs it and writes the rules file; ``train
    --vocab-size V,V,...`` asks for a sweep, which ``learn_sizes`` answers (by default ``learn``
    once a size; a pruning learner overrides it to answer every size from one run). Example,
    the most frequent whole words (as long as they are) and nothing else::

        import attrs
        import numpy as np
        import chunkpress.plugin as cp

        @attrs.frozen(kw_only=True)
        class Params:
            longest: int = attrs.field(default=16, validator=attrs.validators.ge(2))

        class Words(cp.Learner):
            segmenter = "longest-prefix"

            def learn(self, buf, offsets, counts, vocab_size, bottom_up):
                words = [buf[offsets[w]:offsets[w + 1]].tobytes() for w in range(counts.size)]
                order = np.argsort(-counts, kind="stable")
                kept = [words[w] for w in order if 1 < len(words[w]) <= self.params.longest]
                return kept[: vocab_size - cp.BYTE_SYMBOLS], None

        @cp.hookimpl
        def register_learners():
            return [cp.LearnerInfo(name="words", factory=Words, params=Params, version="1",
                                   summary="the most frequent whole words")]
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_pretokenizers() -> list[PreTokenizerInfo]:
    """Return a list of :class:`chunkpress.plugin.PreTokenizerInfo` descriptors.

    A pre-tokenizer is a :class:`chunkpress.plugin.PreTokenizer`: it cuts text into the words
    that no merge joins and no token crosses, as HF's pre-tokenizers do; ``--pretokenizer
    NAME`` (or ``pretokenizer = "NAME"`` in a config) picks it for training, compressing and
    encoding, and a rules file records it. ``split`` marks the byte that ends each word; the
    text's pieces (its lines, as ``train`` reads a file) are cut each on its own. Compile the
    loop: a tokenizer calls it once on all of its text. Example, every line break a word of its
    own and the rest between them one word::

        import numpy as np
        import chunkpress.plugin as cp

        @cp.kernel
        def _around_newlines(data, breaks):
            for i in range(data.size - 1):
                if data[i] == 10 or data[i + 1] == 10:
                    breaks[i] = True

        class Lines(cp.PreTokenizer):
            def split(self, data, ends, breaks):
                _around_newlines(data, breaks)

        @cp.hookimpl
        def register_pretokenizers():
            return [cp.PreTokenizerInfo(name="lines", factory=Lines, version="1",
                                        summary="each line break a word, each run between them another")]

    Test it with :func:`chunkpress.testing.check_pretokenizer`.
    """
    return []  # a spec: pluggy calls the implementations, never this body


@hookspec
def register_normalizers() -> list[NormalizerInfo]:
    """Return a list of :class:`chunkpress.plugin.NormalizerInfo` descriptors.

    A normalizer is a :class:`chunkpress.plugin.Normalizer`: it rewrites text before it is cut,
    as HF's normalizers and sentencepiece's rules do. ``--normalizer NAME`` picks it for
    ``train`` and a rules file records it, so ``encode`` rewrites the text the same way. It
    loses the original bytes, so ``compress`` refuses it. Example, full-width ASCII (as East
    Asian text writes it) folded to ASCII::

        import chunkpress.plugin as cp

        class HalfWidth(cp.Normalizer):
            def normalize(self, text):
                return "".join(chr(ord(c) - 0xFEE0) if "\\uff01" <= c <= "\\uff5e" else c
                               for c in text.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

        @cp.hookimpl
        def register_normalizers():
            return [cp.NormalizerInfo(name="half-width", factory=HalfWidth, version="1",
                                      summary="full-width ASCII folded to ASCII")]
    """
    return []  # a spec: pluggy calls the implementations, never this body
