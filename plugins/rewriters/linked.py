"""The fast rewriter: the engine's incremental linked string (see
:mod:`chunkpress.engine.linkedstring`), so the engine runs the whole merge loop compiled."""

from chunkpress.plugin import LinkedString, Rewriter


class LinkedRewriter(LinkedString, Rewriter):
    """Incremental rewriter; same semantics as ``scan``, cost proportional to the sites."""

    supports_weights = True
    supports_events = True

    def __init__(self, params=None):
        LinkedString.__init__(self)

    def linked_string(self):
        return self
