"""Compression levels -1 ... -9 on en_mix_10MB: size, compress and decompress time, peak RSS,
each a whole `chunkpress` process (warm numba cache), xz -9 and zstd -19 in the same run.

    .venv/bin/python examples/benchmarks/levels.py [--corpus DIR]

Writes examples/benchmarks/levels.md and prints it.
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

from chunkpress.config import PRESETS

HERE = Path(__file__).parent
CHUNKPRESS = str(Path(sys.executable).with_name("chunkpress"))


def timed(cmd: list[str], stdout=None) -> tuple[float, int]:
    return run_process(cmd, stdout)[:2]


def describe(level: int) -> str:
    raw = PRESETS[level]
    coder = raw["coder"]
    params = ", ".join(f"{k}={v}" for k, v in coder["params"].items())
    limits = raw.get("limits", {})
    return (f"{raw['scorer']['name']}, {raw['pretokenizer']['name']} pre-tokens, {limits.get('max_rules')} rules"
            f"{', min_count ' + str(limits['min_count']) if 'min_count' in limits else ''} + {coder['name']} ({params})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parents[2] / "shared" / "corpus"))
    a = ap.parse_args()
    src = Path(a.corpus) / "en_mix_10MB.txt"
    size = src.stat().st_size
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in (("xz -9", ["xz", "-9", "-c", str(src)]), ("zstd -19", ["zstd", "-19", "-c", str(src)])):
            out = Path(tmp) / "peer"
            with open(out, "wb") as fh:
                s, rss = timed(cmd, stdout=fh)
            rows.append((name, "", out.stat().st_size, s, None, rss, True))
        for level in [None, *range(1, 10)]:
            archive, back = Path(tmp) / "a.cpz", Path(tmp) / "back"
            flag = [] if level is None else [f"-{level}"]
            c_s, c_rss = timed([CHUNKPRESS, "compress", *flag, str(src), "-o", str(archive), "-f", "-q"])
            d_s, d_rss = timed([CHUNKPRESS, "decompress", str(archive), "-o", str(back), "-f", "-q"])
            rows.append(("no level" if level is None else f"-{level}",
                         "mdl + combinatorial (the defaults)" if level is None else describe(level),
                         archive.stat().st_size, c_s, d_s, max(c_rss, d_rss),
                         back.read_bytes() == src.read_bytes()))
    lines = [
        "# Compression levels on en_mix_10MB",
        "",
        f"Written by `examples/benchmarks/levels.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache, same run; "
        f"input {size:,} bytes.",
        "",
        "| level | pipeline | archive bytes | bits/byte | compress s | decompress s | peak RSS MB | round trip |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, what, n, c_s, d_s, rss, same in rows:
        lines.append(f"| {name} | {what} | {n:,} | {8 * n / size:.3f} | {c_s:.1f} | {'' if d_s is None else f'{d_s:.1f}'} "
                     f"| {rss / 1e6:,.0f} | {'exact' if same else 'DIFFERS'} |")
    text = "\n".join(lines) + "\n"
    (HERE / "levels.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
