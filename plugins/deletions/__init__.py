"""The built-in deletion policies, registered by reference: ``none`` (the default: a symbol
stays in the vocabulary) and ``picky`` (Picky BPE)."""

from chunkpress.plugin import DELETES_NOTHING, DeletionInfo, hookimpl

_HERE = "chunkpress.plugins.deletions"


@hookimpl
def register_deletion_policies():
    return [
        DeletionInfo(name=DELETES_NOTHING, factory="chunkpress.plugin:DeletionPolicy", version="1",
                     summary="no symbol leaves the vocabulary"),
        DeletionInfo(name="picky", factory=f"{_HERE}.picky:Picky", params=f"{_HERE}.picky:PickyParams", version="1",
                     summary="Picky BPE: a part that lives almost only inside the merged pair is removed"),
    ]
