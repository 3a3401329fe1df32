"""The fast rewriter: the engine's incremental linked string (see
:mod:`chunkpress.engine.linkedstring`), so the engine runs the whole merge loop compiled."""

from chunkpress.plugin import LinkedString, Rewriter, RewriterInfo, hookimpl


class LinkedRewriter(LinkedString, Rewriter):
    """Incremental rewriter; same semantics as ``scan``, cost proportional to the sites."""

    supports_weights = True

    def __init__(self, params=None):
        LinkedString.__init__(self)

    def linked_string(self):
        return self


@hookimpl
def register_rewriters():
    return [
        RewriterInfo(
            name="linked",
            factory=LinkedRewriter,
            summary="fast incremental rewriter: linked string, per-pair occurrence lists (numba)",
            version="1",
        )
    ]
