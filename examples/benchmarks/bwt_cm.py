"""bwt-cm against bzip3 by size, file by file: the check behind every change to the block-sorting
coder (keep what helps across the files, not on one).

    .venv/bin/python examples/benchmarks/bwt_cm.py [FILE ...] [--out PATH]

Without files: the texts in examples/data (en_mix_100MB as two held-out 4 MB slices, from 50 and
85 MB). Prints a table of bytes, bwt-cm's ratio to bzip3 (``bz3.compress(data, 16 << 20)``) and
the geometric mean; ``--out`` writes it as Markdown too. Payload sizes, no archive header.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from chunkpress.plugins.coders.blocksort import BlockSortCoder, BlockSortParams

DATA = Path(__file__).parent.parent / "data"
#: held-out slices of the 100 MB file: (start, length) in MiB
SLICES = ((50, 4), (85, 4))


def inputs(paths: list[str]) -> list[tuple[str, bytes]]:
    if paths:
        return [(Path(p).name, Path(p).read_bytes()) for p in paths]
    out = [(p.name, p.read_bytes()) for p in sorted(DATA.glob("*.txt")) if p.name != "en_mix_100MB.txt" and p.exists()]
    big = DATA / "en_mix_100MB.txt"
    if big.exists():
        with big.open("rb") as f:
            for start, length in SLICES:
                f.seek(start << 20)
                out.append((f"en_mix_100MB[{start}:{start + length} MiB]", f.read(length << 20)))
    return out


def main() -> None:
    import bz3  # the peer: pip install bzip3

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out")
    a = ap.parse_args()
    coder = BlockSortCoder(BlockSortParams())
    rows = ["| input | bytes | bzip3 | bwt-cm | ratio |", "|---|---:|---:|---:|---:|"]
    logs = []
    for name, data in inputs(a.files):
        ours = len(coder.encode(np.zeros((0, 2), dtype=np.int64), np.frombuffer(data, dtype=np.uint8)))
        theirs = len(bz3.compress(data, 16 << 20))
        logs.append(math.log(ours / theirs))
        rows.append(f"| {name} | {len(data):,} | {theirs:,} | {ours:,} | {ours / theirs:.4f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    rows.append(f"| geometric mean | | | | {math.exp(sum(logs) / len(logs)):.4f} |")
    text = "\n".join(rows) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
