"""The fast end against bzip3 and the interpreter's own start-up (the bounds set for the fast end), as
whole processes a user runs, warm numba cache, medians of alternating runs:

* start-up: a 3-byte compress and its decompress against ``python -c "import numba"``;
* a level (the default unless ``--level``) against bzip3 (``bz3.compress(data, 16 << 20)``,
  one thread) on en_mix_10MB and en_mix_100MB: sizes, and compress and decompress times, the
  level and bzip3 run one after the other so that a slow spell of the machine hits both.

    .venv/bin/python examples/benchmarks/fast_end.py [--corpus DIR] [--level N] [--repeats N]

Writes examples/benchmarks/fast_end.md and prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from chunkpress.levels import DEFAULT_LEVEL
from processes import BZ3_C, BZ3_D, medians, round_trip, run

HERE = Path(__file__).parent
#: the inputs and the most each time may be, as a multiple of bzip3's (the bounds set for the fast end)
BOUNDS = (("en_mix_10MB.txt", 2.5), ("en_mix_100MB.txt", 1.5))
#: the most a 3-byte compress or decompress may take, as a multiple of importing numba
STARTUP_BOUND = 1.8


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    ap.add_argument("--level", type=int, default=DEFAULT_LEVEL)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    corpus = Path(a.corpus)
    flag = f"-{a.level}"
    py = sys.executable
    lines = [
        "# The fast end: start-up, and a level against bzip3",
        "",
        f"Written by `examples/benchmarks/fast_end.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache, medians of "
        f"{a.repeats} alternating runs (start-up: {a.repeats + 2}). bzip3 is `bz3.compress(data, 16 << 20)`, one "
        f"thread; chunkpress {flag} is one thread too (its kernels run on a helper thread while the main one waits).",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tiny, tiny_archive = tmp / "tiny.txt", tmp / "tiny.cpz"
        tiny.write_bytes(b"abc")
        tiny_c, tiny_d = round_trip([flag], tiny, tiny_archive, tmp / "tiny.out")
        run(tiny_c)
        numba_s, c_s, d_s = medians([[py, "-c", "import numba"], tiny_c, tiny_d], a.repeats + 2)
        lines += ["| start-up | seconds | × import numba | bound |", "|---|---:|---:|---|",
                  f"| `python -c \"import numba\"` | {numba_s:.2f} | 1.00 | |",
                  f"| compress {flag} of 3 bytes | {c_s:.2f} | {c_s / numba_s:.2f} | ≤ {STARTUP_BOUND} "
                  f"{'met' if c_s <= STARTUP_BOUND * numba_s else 'MISSED'} |",
                  f"| its decompress | {d_s:.2f} | {d_s / numba_s:.2f} | ≤ {STARTUP_BOUND} "
                  f"{'met' if d_s <= STARTUP_BOUND * numba_s else 'MISSED'} |", ""]
        print("\n".join(lines), file=sys.stderr, flush=True)
        lines += [f"| input | chunkpress {flag} bytes | bzip3 bytes | size ratio | compress s | bzip3's | × | "
                  "decompress s | bzip3's | × | bound on × | met |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for name, bound in BOUNDS:
            src = corpus / name
            if not src.exists():
                lines.append(f"| {name} | not here | | | | | | | | | | |")
                continue
            ours, back, theirs, theirs_back = tmp / "a.cpz", tmp / "a.out", tmp / "b.bz3", tmp / "b.out"
            c, d, pc, pd = medians([*round_trip([flag], src, ours, back),
                                    [py, "-c", BZ3_C, str(src), str(theirs)],
                                    [py, "-c", BZ3_D, str(theirs), str(theirs_back)]], a.repeats)
            if back.read_bytes() != src.read_bytes() or theirs_back.read_bytes() != src.read_bytes():
                raise SystemExit(f"{name}: a round trip differs")
            n, m = ours.stat().st_size, theirs.stat().st_size
            met = n <= m and c <= bound * pc and d <= bound * pd
            lines.append(f"| {name} | {n:,} | {m:,} | {n / m:.4f} | {c:.2f} | {pc:.2f} | {c / pc:.2f} | {d:.2f} | "
                         f"{pd:.2f} | {d / pd:.2f} | {bound} | {'yes' if met else 'NO'} |")
            print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    (HERE / "fast_end.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
