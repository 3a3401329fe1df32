"""Periodic and degenerate input: default compress as whole processes, against en_mix_10MB.

`ab` and `abcd` repeated to 10 MB and one byte repeated to 50 MB, compressed with the built-in
defaults (mdl + linked + combinatorial) and decompressed, each a fresh `chunkpress` process
(numba cache warm); peak RSS per input byte and the round trip are checked. en_mix_10MB is
compressed in the same run as the yardstick.

    .venv/bin/python examples/benchmarks/degenerate.py [--corpus DIR]

Writes examples/benchmarks/degenerate.md and prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from processes import timed as run_process

HERE = Path(__file__).parent
CHUNKPRESS = str(Path(sys.executable).with_name("chunkpress"))


def timed(args: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one chunkpress process."""
    return run_process([CHUNKPRESS, *args])[:2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    a = ap.parse_args()
    inputs = {
        "en_mix_10MB (text)": Path(a.corpus) / "en_mix_10MB.txt",
        "`ab` x 5,000,000": b"ab" * 5_000_000,
        "`abcd` x 2,500,000": b"abcd" * 2_500_000,
        "`a` x 50,000,000": b"a" * 50_000_000,
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        timed(["--version"])  # load the interpreter and package once
        for name, source in inputs.items():
            path = source if isinstance(source, Path) else Path(tmp) / "in.txt"
            if not isinstance(source, Path):
                path.write_bytes(source)
            size = path.stat().st_size
            archive, restored = Path(tmp) / "a.cpz", Path(tmp) / "out"
            c_s, c_rss = timed(["compress", str(path), "-o", str(archive), "--force"])
            d_s, d_rss = timed(["decompress", str(archive), "-o", str(restored), "--force"])
            same = restored.read_bytes() == path.read_bytes()
            rows.append((name, size, c_s, c_rss, d_s, d_rss, archive.stat().st_size, same))
    base = rows[0][2]
    lines = [
        "# Periodic and degenerate input (default compress)",
        "",
        f"Written by `examples/benchmarks/degenerate.py` on {time.strftime('%Y-%m-%d')}; "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache.",
        "",
        "| input | bytes | compress s | x en_mix_10MB | peak RSS MB | RSS B / input byte | decompress s | archive bytes "
        "| round trip |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, size, c_s, c_rss, d_s, _d_rss, out, same in rows:
        lines.append(f"| {name} | {size:,} | {c_s:.2f} | {c_s / base:.2f} | {c_rss / 1e6:,.0f} | {c_rss / size:.1f} | "
                     f"{d_s:.2f} | {out:,} | {'exact' if same else 'DIFFERS'} |")
    text = "\n".join(lines) + "\n"
    (HERE / "degenerate.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
