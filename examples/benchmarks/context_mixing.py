"""Whole-process benchmark: ``chunkpress compress --config best.toml`` and ``decompress`` against zpaq -m5,
PPMd, xz -9e, zstd -19 and bzip3, each run as its own process on the same file in the same run.

Run from the project root (zpaq comes with ``pip install -e '.[baselines]'``; bzip3,
xz and zstd are used when they are on PATH):

    .venv/bin/python examples/benchmarks/context_mixing.py [--input ../shared/corpus/en_mix_10MB.txt]

Each row is one process, timed from start to exit as a user would run it; peak memory is that
process's maximum RSS (``wait4``). The numba cache is warmed first (one small compress), as on
any run after the first. Every decompressed output is compared with the input. Writes
examples/context-mixing/benchmark.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from processes import peers, run  # beside this script (its folder is on the path)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BEST = ROOT / "examples" / "context-mixing" / "best.toml"
CHUNKPRESS = [sys.executable, "-m", "chunkpress.cli"]



def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", default=str(ROOT / "examples" / "data" / "en_mix_10MB.txt"))
    parser.add_argument("--out", default=str(ROOT / "examples" / "context-mixing" / "benchmark.md"))
    args = parser.parse_args()
    src = Path(args.input)
    size = src.stat().st_size
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        warm = tmp / "warm.txt"
        warm.write_bytes(src.read_bytes()[:20000])
        run(CHUNKPRESS + ["compress", "--config", str(BEST), str(warm), "-o", str(tmp / "warm.cpz")])
        run(CHUNKPRESS + ["decompress", str(tmp / "warm.cpz"), "-o", str(tmp / "warm.out")])
        archive, restored = tmp / "best.cpz", tmp / "best.out"
        c_s, c_mb = run(CHUNKPRESS + ["compress", "--config", str(BEST), str(src), "-o", str(archive)])
        d_s, d_mb = run(CHUNKPRESS + ["decompress", str(archive), "-o", str(restored)])
        assert restored.read_bytes() == src.read_bytes(), "chunkpress did not restore the input"
        rows.append(("chunkpress --config best.toml (= -9: BPE 1k + chunk-cm)", archive.stat().st_size, c_s, d_s,
                     max(c_mb, d_mb)))
        print(rows[-1], file=sys.stderr)
        for name, comp, dec, path in peers(src, tmp):
            c_s, c_mb = run(comp)
            d_s, d_mb = run(dec)
            rows.append((name, path.stat().st_size, c_s, d_s, max(c_mb, d_mb)))
            print(rows[-1], file=sys.stderr)
    lines = [
        f"# Context mixing: whole processes on {src.name} ({size:,} bytes)",
        "",
        f"Written by `examples/benchmarks/context_mixing.py` on {time.strftime('%Y-%m-%d')}, "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. One process per "
        "cell, all in the same run; peak RSS is the larger of the two processes'.",
        "",
        "| compressor | archive bytes | bits/byte | compress s | decompress s | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, nbytes, c_s, d_s, mb in sorted(rows, key=lambda r: r[1]):
        lines.append(f"| {name} | {nbytes:,} | {8 * nbytes / size:.4f} | {c_s:.1f} | {d_s:.1f} | {mb:,} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
