"""Block mode at scale: a 200 MB input on 2 workers against xz -9 -T2, and the ratio cost of
blocks on en_mix_100MB. Whole processes, timed in the same run; peak RSS is the largest of the
process and its workers (GNU time's maximum resident set).

    .venv/bin/python examples/benchmarks/blocks.py [--corpus DIR] [--quick]

Writes examples/benchmarks/blocks.md and prints it.
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


def timed(cmd: list[str], stdout=None) -> tuple[float, int]:
    return run_process(cmd, stdout)[:2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    src = Path(a.corpus) / "en_mix_100MB.txt"
    lines = [
        "# Block mode at scale",
        "",
        f"Written by `examples/benchmarks/blocks.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache, same run.",
        "",
    ]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        big = Path(tmp) / "in200.txt"
        with open(big, "wb") as fh:
            for _ in range(2):
                fh.write(src.read_bytes())
        xz_s, xz_rss = timed(["xz", "-9", "-T2", "-k", "-c", str(big)], stdout=open(Path(tmp) / "x.xz", "wb"))
        xz_size = (Path(tmp) / "x.xz").stat().st_size
        archive, back = Path(tmp) / "in.cpz", Path(tmp) / "back.txt"
        c_s, c_rss = timed([CHUNKPRESS, "compress", str(big), "--workers", str(a.workers), "-o", str(archive), "-f"])
        d_s, d_rss = timed([CHUNKPRESS, "decompress", str(archive), "-o", str(back), "-f"])
        same = back.read_bytes() == big.read_bytes()
        lines += [
            f"## 200 MB (en_mix_100MB twice), default config, 32 MB blocks, `--workers {a.workers}`",
            "",
            "| run | seconds | peak RSS MB | bytes |",
            "|---|---:|---:|---:|",
            f"| `xz -9 -T2` | {xz_s:.1f} | {xz_rss / 1e6:,.0f} | {xz_size:,} |",
            f"| chunkpress compress | {c_s:.1f} ({c_s / xz_s:.2f}x xz) | {c_rss / 1e6:,.0f} | {archive.stat().st_size:,} |",
            f"| chunkpress decompress | {d_s:.1f} | {d_rss / 1e6:,.0f} | round trip {'exact' if same else 'DIFFERS'} |",
            "",
            f"## Ratio cost of blocks on en_mix_100MB (default config, `--workers {a.workers}`)",
            "",
            "| block size | archive bytes | vs one block | seconds | peak RSS MB |",
            "|---|---:|---:|---:|---:|",
        ]
        results = []
        for label, size in (("8M", "8M"), ("32M", "32M"), ("one block (100 MB)", "128M")):
            out = Path(tmp) / f"b{size}.cpz"
            s, rss = timed([CHUNKPRESS, "compress", str(src), "--block-size", size, "--workers", str(a.workers),
                            "-o", str(out), "-f"])
            results.append((label, out.stat().st_size, s, rss))
        one = results[-1][1]
        for label, n, s, rss in results:
            lines.append(f"| {label} | {n:,} | {100 * (n - one) / one:+.2f}% | {s:.1f} | {rss / 1e6:,.0f} |")
    text = "\n".join(lines) + "\n"
    (HERE / "blocks.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
