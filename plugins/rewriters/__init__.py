"""The built-in rewriters, registered by reference: a rewriter's module loads when a job uses it."""

from chunkpress.plugin import RewriterInfo, hookimpl

_HERE = "chunkpress.plugins.rewriters"


@hookimpl
def register_rewriters():
    return [
        RewriterInfo(name="linked", factory=f"{_HERE}.linked:LinkedRewriter", version="1",
                     summary="fast incremental rewriter: linked string, per-pair occurrence lists (numba)"),
        RewriterInfo(name="scan", factory=f"{_HERE}.scan:ScanRewriter", version="1",
                     summary="reference rewriter: numpy recount and rewrite of the whole string per merge"),
    ]
