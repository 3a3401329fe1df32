"""Writes the golden archives once per codec id. Never regenerate an existing file: the test
that decodes them proves old archives stay readable. Run: python tests/golden/make_golden.py"""

from pathlib import Path

from chunkpress.pipeline import Pipeline

HERE = Path(__file__).parent
SOURCE = HERE.parent / "data" / "udhr_cmn_hans.txt"

# the stored archive (container version 2): what the compressor writes where no coder shrinks the data
STORED = HERE / "udhr_cmn_hans.chunkpress.stored.v1.cpz"
if not STORED.exists():
    from chunkpress.format.container import pack_stored

    STORED.write_bytes(pack_stored(SOURCE.read_bytes()))
    print("wrote", STORED.name)

for coder in ("varint-zstd", "varint-zlib", "varint-lzma", "varint-bz2", "combinatorial", "raw-zlib", "raw-lzma",
              "raw-zstd", "raw-bz2", "raw-ppmd", "varint-ppmd", "cm", "chunk-cm-v1", "chunk-cm-v2", "chunk-cm-v3", "chunk-cm-v4",
              "chunk-cm", "bwt-cm"):
    pipe = Pipeline.from_config(scorer="mdl", coder=coder)
    target = HERE / f"udhr_cmn_hans.{pipe._infos['coder'].codec_id}.cpz"
    if not target.exists():
        target.write_bytes(pipe.compress(SOURCE.read_bytes()))
        print("wrote", target.name)

# model 5 with the direct probabilities, the indirect contexts, the expected chunk's context and
# the opener's -9 turns on: the same codec, "direct" (and "indirect", "expect", "opener") in the header
for suffix, params in (("direct", {"direct": True}), ("direct.indirect", {"direct": True, "indirect": True}),
                       ("direct.indirect.expect", {"direct": True, "indirect": True, "expect": True}),
                       ("direct.indirect.expect.opener",
                        {"direct": True, "indirect": True, "expect": True, "opener": True})):
    target = HERE / f"udhr_cmn_hans.chunkpress.chunk-cm.v5.{suffix}.cpz"
    if not target.exists():
        pipe = Pipeline.from_config(scorer="mdl", coder={"name": "chunk-cm", "params": params})
        target.write_bytes(pipe.compress(SOURCE.read_bytes()))
        print("wrote", target.name)
