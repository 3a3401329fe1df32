"""Write every coded decision of chunk-cm's -9 coder on one file: the tree node, the bit, the
model's final P(1) in 1/4096 and the chunk, with the chunk ranks (input to lstm_estimate.py).

Needs the coder patched to record them (``git apply examples/chunk-cm/recurrent/decisions.diff``,
made against commit 46e5820; revert it after):

    CHUNK_CM_DECISIONS=50000000 python dump_decisions.py en_mix_10MB.txt decisions.npz
"""

from __future__ import annotations

import sys

import numpy as np
from chunkpress.pipeline import Pipeline
from chunkpress.plugins.coders import chunk_cm
from chunkpress.plugins.coders.chunk_cm_model import layout


def main(path: str, out: str) -> None:
    data = open(path, "rb").read()
    pipe = Pipeline.from_config(level=9)
    fitted = pipe.fit(data, trace=False)
    coder = pipe.build_coder()
    made = {}
    new_scratch = layout.new_scratch

    def keep_scratch():
        made["scratch"] = new_scratch()
        return made["scratch"]

    layout.new_scratch = keep_scratch
    payload = coder.encode(fitted.rules, fitted.symbols)
    scratch = made["scratch"]
    if not hasattr(scratch, "dn") or scratch.dn.size < 2:
        sys.exit("dump_decisions.py: apply decisions.diff and set CHUNK_CM_DECISIONS first")
    rules = np.asarray(fitted.rules, dtype=np.int64).reshape(-1, 2)
    text = np.frombuffer(chunk_cm.expand(rules, np.asarray(fitted.symbols, dtype=np.int64)), dtype=np.uint8)
    ranked = chunk_cm.RankedDictionary(rules, text.size)
    n = int(scratch.cnt[0])
    if n == scratch.dn.size:
        sys.exit(f"dump_decisions.py: more than {n:,} decisions; raise CHUNK_CM_DECISIONS")
    np.savez(out, node=scratch.dn[:n], bit=scratch.dy[:n], p=scratch.dp[:n], chunk=scratch.dt[:n],
             ranks=ranked.parse(text), n_ranks=ranked.ranks.length.size)
    print(f"{path}: payload {len(payload):,} bytes, {n:,} decisions")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
