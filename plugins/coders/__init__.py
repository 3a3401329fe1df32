"""The built-in coders, registered as a third party registers one, by reference: a coder's
module, and its compiled kernels, load when a job writes or reads its archives. Each names its
codec id here, and building it checks that the class writes that id."""

from chunkpress.plugin import STORED_CODEC, CoderInfo, FirstCompile, hookimpl

from .backends import family_coders

_HERE = "chunkpress.plugins.coders"
#: chunk-cm's current model, and the older ones kept to read (and write) their archives
CHUNK_CM_MODEL = 6
_CHUNK_CM_READERS = {
    1: "chunk-cm's first model (each rank's bits down a complete trie): reads older archives",
    2: "chunk-cm's second model (no run model): reads its archives",
    3: "chunk-cm's third model (its tree split at the weight's half): reads its archives",
    4: "chunk-cm's fourth model (weight sets by bit position): reads its archives",
    5: "chunk-cm's fifth model (-9's pieces as params): -6 to -8 write it, and it reads -9's older archives",
}


#: chunk-cm's coding loop, which every model of it runs: compiled ahead on a spare core where
#: numba's cache lacks it (the coder waits for it by this reference)
CHUNK_CM_LOOP = FirstCompile(kernel=f"{_HERE}.chunk_cm_model.model:code_chunks", seconds=15, ahead=True)


def _chunk_cm(version: int) -> str:
    return f"chunkpress.chunk-cm.v{version}"


@hookimpl
def register_coders():
    return [
        *family_coders("varint", f"{_HERE}.varint"),
        *family_coders("raw", f"{_HERE}.raw"),
        CoderInfo(name="stored", factory=f"{_HERE}.raw:StoredCoder", codec_id=STORED_CODEC, version="1",
                  summary="the bytes as they are (no compression; what incompressible data is stored as)"),
        CoderInfo(name="combinatorial", factory=f"{_HERE}.combinatorial:CombinatorialCoder",
                  codec_id="chunkpress.combinatorial.v1", version="1",
                  summary="exact coder of the MDL model: Elias-delta, uniform rules, stars and bars, urn"),
        CoderInfo(name="cm", factory=f"{_HERE}.cm:CmCoder", params=f"{_HERE}.cm:CmParams", codec_id="chunkpress.cm.v1",
                  version="1",
                  summary="context mixing over the text and its chunk parse (orders 1-6, word, match, chunk contexts)"),
        CoderInfo(name="bwt-cm", factory=f"{_HERE}.blocksort:BlockSortCoder",
                  params=f"{_HERE}.blocksort:BlockSortParams", codec_id="chunkpress.bwt-cm.v1", version="1",
                  first_compile=FirstCompile(kernel=f"{_HERE}.blocksort_model:code_sorted", seconds=5),
                  summary="LZP, block sorting (Burrows-Wheeler) and a context-mixing coder over the bytes"),
        CoderInfo(name="chunk-cm", factory=f"{_HERE}.chunk_cm:ChunkCmCoder",
                  params=f"{_HERE}.chunk_cm:ChunkCmCoder.params_class",
                  codec_id=_chunk_cm(CHUNK_CM_MODEL), version=str(CHUNK_CM_MODEL), first_compile=CHUNK_CM_LOOP,
                  summary=("context mixing over chunk ids (one event per chunk down a frequency-shaped tree; "
                           "text, word and id contexts, runs, match model)")),
        *(CoderInfo(name=f"chunk-cm-v{v}", factory=f"{_HERE}.chunk_cm_legacy:ChunkCmV{v}Coder",
                    params=f"{_HERE}.chunk_cm_legacy:ChunkCmV{v}Coder.params_class", codec_id=_chunk_cm(v), version=str(v),
                    first_compile=CHUNK_CM_LOOP,
                    summary=summary) for v, summary in _CHUNK_CM_READERS.items()),
    ]
