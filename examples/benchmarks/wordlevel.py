"""Word-level BPE at corpus scale: chunkpress train with pre-tokens counted over shards on
Dask workers, against HF tokenizers' trainer on the same file and cores, in the same run.

The input is en_mix_100MB twice (200 MB). Both learn a 32,768-token byte-level BPE with GPT-2
pre-tokens (chunkpress: repair = most frequent pair, `--vocab-size 32768`; HF: BpeTrainer,
min_frequency 2, the full byte alphabet). Whole processes, warm numba cache; peak RSS is GNU
time's (the process and the workers it waits for). The serial run (whole file in memory) is
timed too, and its rules must equal the sharded ones.

    .venv/bin/python examples/benchmarks/wordlevel.py [--corpus DIR] [--workers 2]

Writes examples/benchmarks/wordlevel.md and prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from engine import HF_CHILD
from processes import timed

HERE = Path(__file__).parent
CHUNKPRESS = str(Path(sys.executable).with_name("chunkpress"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    from chunkpress.format.rulesfile import load_rules

    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        big = Path(tmp) / "in200.txt"
        with open(big, "wb") as fh:
            for _ in range(2):
                fh.write((Path(a.corpus) / "en_mix_100MB.txt").read_bytes())
        common = ["train", str(big), "--scorer", "repair", "--pretokenizer", "gpt2", "--vocab-size", "32768", "-q", "-f"]
        rows = []
        hf_s, hf_rss, _ = timed([sys.executable, "-c", HF_CHILD, str(big), "32768"])
        rows.append((f"HF tokenizers BpeTrainer ({os.cpu_count()} threads)", hf_s, hf_rss, 32768))
        sharded, serial = Path(tmp) / "sharded.rules", Path(tmp) / "serial.rules"
        s_s, s_rss, _ = timed([CHUNKPRESS, *common, "--workers", str(a.workers), "--rules", str(sharded)])
        rows.append((f"chunkpress train --workers {a.workers} (shards of 16 MB)", s_s, s_rss,
                     256 + len(load_rules(sharded.read_bytes())[0])))
        w_s, w_rss, _ = timed([CHUNKPRESS, *common, "--rules", str(serial)])
        rows.append(("chunkpress train (serial, whole file in memory)", w_s, w_rss,
                     256 + len(load_rules(serial.read_bytes())[0])))
        same = (load_rules(sharded.read_bytes())[0] == load_rules(serial.read_bytes())[0]).all()
        size = big.stat().st_size
    lines = [
        "# Word-level BPE 32k on 200 MB: chunkpress against HF tokenizers",
        "",
        f"Written by `examples/benchmarks/wordlevel.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache, same run; "
        f"input {size:,} bytes (en_mix_100MB twice), GPT-2 pre-tokens, 32,768 tokens.",
        "",
        "| trainer | seconds | x HF | peak RSS MB | vocabulary |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, sec, rss, vocab in rows:
        lines.append(f"| {name} | {sec:.1f} | {sec / hf_s:.2f} | {rss / 1e6:,.0f} | {vocab:,} |")
    lines += ["", f"Sharded and serial rules identical: {'yes' if same else 'NO'}."]
    text = "\n".join(lines) + "\n"
    (HERE / "wordlevel.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
