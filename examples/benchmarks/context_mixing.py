"""Whole-process benchmark: ``chunkpress compress -c best.toml`` and ``decompress`` against zpaq -m5,
PPMd, xz -9e, zstd -19 and bzip3, each run as its own process on the same file in the same run.

Run from the project root (zpaq and pyppmd come with ``pip install -e '.[baselines]'``; bzip3,
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
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BEST = ROOT / "examples" / "context-mixing" / "best.toml"
CHUNKPRESS = [sys.executable, "-m", "chunkpress.cli"]

# peers that live in Python packages run through these one-line programs (argv: in out)
ZPAQ_C = "import sys, zpaq; open(sys.argv[2], 'wb').write(zpaq.compress(open(sys.argv[1], 'rb').read(), level=5, threads=1))"
ZPAQ_D = "import sys, zpaq; open(sys.argv[2], 'wb').write(zpaq.decompress(open(sys.argv[1], 'rb').read()))"
PPMD_C = ("import sys, pyppmd; d = open(sys.argv[1], 'rb').read(); e = pyppmd.Ppmd8Encoder(8, 256 << 20); "
          "open(sys.argv[2], 'wb').write(len(d).to_bytes(8, 'little') + e.encode(d) + e.flush(endmark=False))")
PPMD_D = ("import sys, pyppmd; c = open(sys.argv[1], 'rb').read(); "
          "open(sys.argv[2], 'wb').write(pyppmd.Ppmd8Decoder(8, 256 << 20).decode(c[8:], int.from_bytes(c[:8], 'little')))")


def run(cmd: list[str], stdout=None) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of one process; raises if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()}")
    return wall, usage.ru_maxrss // 1024


def peers(src: Path, tmp: Path) -> list[tuple[str, list, list, Path]]:
    """(name, compress argv, decompress argv, archive path): those installed."""
    out = []
    py = sys.executable
    try:
        import zpaq  # noqa: F401

        out.append(("zpaq -m5 (libzpaq, 1 thread)", [py, "-c", ZPAQ_C, str(src), str(tmp / "z.zpaq")],
                    [py, "-c", ZPAQ_D, str(tmp / "z.zpaq"), str(tmp / "z.out")], tmp / "z.zpaq"))
    except ImportError:
        pass
    try:
        import pyppmd  # noqa: F401

        out.append(("PPMd var. I order 8, 256 MB (pyppmd)", [py, "-c", PPMD_C, str(src), str(tmp / "p.ppmd")],
                    [py, "-c", PPMD_D, str(tmp / "p.ppmd"), str(tmp / "p.out")], tmp / "p.ppmd"))
    except ImportError:
        pass
    for tool, level, ext in (("xz", "-9e", "xz"), ("zstd", "-19", "zst"), ("bzip3", "-b 16", "bz3")):
        if shutil.which(tool):
            archive = tmp / f"t.{ext}"
            comp = ["sh", "-c", f"{tool} {level} -c < '{src}' > '{archive}'"]
            dec = ["sh", "-c", f"{tool} -d -c < '{archive}' > '{tmp / ('t.' + ext + '.out')}'"]
            out.append((f"{tool} {level}", comp, dec, archive))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", default=str(ROOT.parent / "shared" / "corpus" / "en_mix_10MB.txt"))
    parser.add_argument("--out", default=str(ROOT / "examples" / "context-mixing" / "benchmark.md"))
    args = parser.parse_args()
    src = Path(args.input)
    size = src.stat().st_size
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        warm = tmp / "warm.txt"
        warm.write_bytes(src.read_bytes()[:20000])
        run(CHUNKPRESS + ["compress", "-c", str(BEST), str(warm), "-o", str(tmp / "warm.cpz")])
        run(CHUNKPRESS + ["decompress", str(tmp / "warm.cpz"), "-o", str(tmp / "warm.out")])
        archive, restored = tmp / "best.cpz", tmp / "best.out"
        c_s, c_mb = run(CHUNKPRESS + ["compress", "-c", str(BEST), str(src), "-o", str(archive)])
        d_s, d_mb = run(CHUNKPRESS + ["decompress", str(archive), "-o", str(restored)])
        assert restored.read_bytes() == src.read_bytes(), "chunkpress did not restore the input"
        rows.append(("chunkpress -c best.toml (BPE 4k + cm)", archive.stat().st_size, c_s, d_s, max(c_mb, d_mb)))
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
