"""The built-in boundary policies, registered by reference: ``pretokens`` (no pair ever crosses
a pre-token, as in BPE: the default) and ``superbpe`` (SuperBPE's curriculum)."""

from chunkpress.plugin import BoundaryInfo, hookimpl

_HERE = "chunkpress.plugins.boundaries"


@hookimpl
def register_boundary_policies():
    return [
        BoundaryInfo(name="pretokens", factory="chunkpress.plugin:BoundaryPolicy", version="1",
                     summary="no pair crosses a pre-token boundary (BPE)"),
        BoundaryInfo(name="superbpe", factory=f"{_HERE}.superbpe:SuperBpe", params=f"{_HERE}.superbpe:SuperBpeParams",
                     version="1", summary="SuperBPE: words first, then pairs across the spaces between words"),
    ]
