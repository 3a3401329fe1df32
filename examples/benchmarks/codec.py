"""Codec benchmark: the combinatorial coder on mdl results against gzip -9, zstd -19 and xz -9.

Run from the project root:

    .venv/bin/python examples/benchmarks/codec.py [--corpus DIR] [--files en_mix_1MB.txt,en_mix_10MB.txt]

For each file: learn with mdl (to its stopping point), encode and decode with `combinatorial`
(timed, and the decoded string checked), compare the payload with the trace's final
total_bits, and compress the same file with gzip -9, zstd -19 and xz -9 (timed). Writes
examples/benchmarks/codec.md.
"""

from __future__ import annotations

import argparse
import gzip
import lzma
import sys
import time
from pathlib import Path

import numpy as np
import zstandard
from chunkpress.pipeline import Pipeline
from chunkpress.plugins.coders.combinatorial import CombinatorialCoder

HERE = Path(__file__).parent


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parents[1] / "data"))
    parser.add_argument("--files", default="en_mix_1MB.txt,en_mix_10MB.txt")
    parser.add_argument("--out", default=str(HERE / "codec.md"))
    args = parser.parse_args()
    coder = CombinatorialCoder()
    coder.decode(coder.encode(np.zeros((0, 2), np.int64), np.arange(3)))  # load compiled kernels
    size_rows, speed_rows = [], []
    for name in args.files.split(","):
        data = (Path(args.corpus) / name).read_bytes()
        mb = len(data) / 1e6
        result, learn_s = timed(Pipeline.from_config(scorer="mdl").fit, data)
        payload, enc_s = timed(coder.encode, result.rules, result.symbols)
        (rules, symbols), dec_s = timed(coder.decode, payload)
        assert np.array_equal(symbols, result.symbols) and np.array_equal(rules, result.rules)
        model = int(result.trace["total_bits"][-1])
        written = 8 * len(payload)
        archive = Pipeline.from_config().encode(result.rules, result.symbols, data)
        gz, gz_s = timed(gzip.compress, data, 9)
        zs, zs_s = timed(zstandard.ZstdCompressor(level=19).compress, data)
        xz, xz_s = timed(lzma.compress, data, lzma.FORMAT_XZ, -1, 9)
        _, zs_d = timed(zstandard.ZstdDecompressor().decompress, zs)
        _, xz_d = timed(lzma.decompress, xz)
        factor = lambda n, data=data: f"{len(data) / n:.3f}"  # noqa: E731
        size_rows.append(
            f"| {name} | {len(data):,} | {m_of(result):,} | {model:,} | {written:,} | {written - model:+,} "
            f"| {len(archive):,} ({factor(len(archive))}) | {len(gz):,} ({factor(len(gz))}) "
            f"| {len(zs):,} ({factor(len(zs))}) | {len(xz):,} ({factor(len(xz))}) |"
        )
        speed_rows.append(
            f"| {name} | {learn_s:.1f} s | {enc_s:.3f} s ({mb / enc_s:.0f} MB/s) | {dec_s:.3f} s ({mb / dec_s:.0f} MB/s) "
            f"| {zs_s:.2f} s / {zs_d:.3f} s | {xz_s:.2f} s / {xz_d:.3f} s |"
        )
        print(size_rows[-1], speed_rows[-1], sep="\n", flush=True)
    text = (
        "Sizes: the `mdl` result coded by `combinatorial` (payload bits against the trace's final "
        "total_bits), and the whole archive (header included) next to gzip -9, zstd -19, xz -9 "
        "(compression factor = original / compressed in parentheses).\n\n"
        "| file | bytes | final m | model bits | written bits | written - model | chunkpress archive "
        "| gzip -9 | zstd -19 | xz -9 |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(size_rows) + "\n\n"
        "Speed (MB/s of original text; decode includes the canonical re-encode check):\n\n"
        "| file | mdl learning | combinatorial encode | combinatorial decode | zstd -19 comp / decomp | xz -9 comp / decomp |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(speed_rows) + "\n"
    )
    Path(args.out).write_text(text)
    print(text)
    return 0


def m_of(result) -> int:
    return 256 + len(result.rules)


if __name__ == "__main__":
    sys.exit(main())
