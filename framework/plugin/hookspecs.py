"""The hook specifications: the only place where chunkpress's plugin hooks are defined.

Every component, built-in or third-party, reaches the framework through one of these hooks.
They are called once, when the registry is built; the merge loop never calls pluggy.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("chunkpress")
hookimpl = pluggy.HookimplMarker("chunkpress")


@hookspec
def register_scorers() -> list:
    """Return a list of :class:`chunkpress.ScorerInfo` descriptors.

    A scorer gets candidate pairs as numpy arrays and returns a loss per pair (lower is better).
    Give it ``loss_a`` / ``loss_b`` when the loss splits into a part of (N, m, k01) and a part of
    (k01, k0, k1): the engine then rescores only the pairs that changed. Example, a complete
    plugin module that adds the "most frequent pair, but only pairs seen 3 times" scorer::

        import attrs
        import numpy as np
        import chunkpress
        from chunkpress.plugin.scoring import SplitScorer

        @attrs.frozen(kw_only=True)
        class FrequentParams:
            at_least: int = attrs.field(default=3, validator=attrs.validators.ge(2))

        class Frequent(SplitScorer):
            uses_parts = False                    # loss_b ignores k0, k1
            def __init__(self, params):
                self.at_least = params.at_least
            def loss_a(self, N, m, k01):
                return -k01.astype(np.float64)
            def loss_b(self, k01, k0, k1, same):
                return np.zeros(len(k01))
            def stop(self, best_loss, k01):
                return k01 < self.at_least

        @chunkpress.hookimpl
        def register_scorers():
            return [chunkpress.ScorerInfo(name="frequent", factory=Frequent,
                                          params=FrequentParams, version="1.0",
                                          summary="most frequent pair seen at least N times")]

    Expose the module under the entry-point group ``chunkpress`` in your pyproject.toml::

        [project.entry-points.chunkpress]
        frequent = "my_package.frequent"
    """


@hookspec
def register_rewriters() -> list:
    """Return a list of :class:`chunkpress.RewriterInfo` descriptors.

    A rewriter owns the working string (see :class:`chunkpress.plugin.rewriting.Rewriter` for the
    methods it needs). Example, registering a rewriter class that subclasses the reference one::

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


@hookspec
def register_coders() -> list:
    """Return a list of :class:`chunkpress.CoderInfo` descriptors.

    A coder turns (rules, symbols) into bytes and back; its ``codec_id`` is written into every
    archive and must change whenever the byte format changes. Example, a coder that stores the
    symbols as raw little-endian uint32 (useful as a baseline)::

        import attrs
        import numpy as np
        import chunkpress

        class RawU32:
            def __init__(self, params):
                pass
            def encode(self, rules, symbols):
                head = np.array([len(rules), len(symbols)], "<u4").tobytes()
                return head + rules.astype("<u4").tobytes() + symbols.astype("<u4").tobytes()
            def decode(self, payload):
                r, n = np.frombuffer(payload[:8], "<u4")
                body = np.frombuffer(payload[8:], "<u4").astype(np.int64)
                return body[: 2 * r].reshape(-1, 2), body[2 * r : 2 * r + n]

        @chunkpress.hookimpl
        def register_coders():
            return [chunkpress.CoderInfo(name="raw-u32", codec_id="example.raw-u32.v1",
                                         factory=RawU32, summary="uint32 per symbol",
                                         version="1")]
    """
