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
              "chunk-cm-v5", "chunk-cm", "bwt-cm"):
    pipe = Pipeline.from_config(scorer="mdl", coder=coder)
    target = HERE / f"udhr_cmn_hans.{pipe._infos['coder'].codec_id}.cpz"
    if not target.exists():
        target.write_bytes(pipe.compress(SOURCE.read_bytes()))
        print("wrote", target.name)

# model 5 with the params -9 turns on, one by one: the same codec, the params in the header (the
# files up to hash_per_byte were written in container version 1, with a JSON header)
for suffix, params in (("direct", {"direct": True}), ("direct.indirect", {"direct": True, "indirect": True}),
                       ("direct.indirect.expect", {"direct": True, "indirect": True, "expect": True}),
                       ("direct.indirect.expect.opener",
                        {"direct": True, "indirect": True, "expect": True, "opener": True}),
                       ("direct.indirect.expect.opener.structure",
                        {"direct": True, "indirect": True, "expect": True, "opener": True, "structure": True}),
                       ("direct.indirect.expect.opener.structure.scoped",
                        {"direct": True, "indirect": True, "expect": True, "opener": True, "structure": True,
                         "scoped": True}),
                       ("direct.indirect.expect.opener.structure.scoped.hash_per_byte",
                        {"direct": True, "indirect": True, "expect": True, "opener": True, "structure": True,
                         "scoped": True, "hash_per_byte": 256}),
                       ("direct.indirect.expect.opener.structure.scoped.hash_per_byte.indirect_history",
                        {"direct": True, "indirect": True, "expect": True, "opener": True, "structure": True,
                         "scoped": True, "hash_per_byte": 256, "indirect_history": 3})):
    target = HERE / f"udhr_cmn_hans.chunkpress.chunk-cm.v5.{suffix}.cpz"
    if not target.exists():
        pipe = Pipeline.from_config(scorer="mdl", coder={"name": "chunk-cm-v5", "params": params})
        target.write_bytes(pipe.compress(SOURCE.read_bytes()))
        print("wrote", target.name)

# container version 3 (the compact header): -9's archive
target = HERE / "udhr_cmn_hans.container3.level9.cpz"
if not target.exists():
    target.write_bytes(Pipeline.from_config(level=9).compress(SOURCE.read_bytes()))
    print("wrote", target.name)
