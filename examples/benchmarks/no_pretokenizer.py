"""BPE with no pre-tokenizer (DNA, protein, text with no spaces): the whole input one string.

en_mix_10MB with its line breaks made spaces, cut to 1 MB and to 10 MB, is one line. Each
size is learned to 8,000 tokens by ``chunkpress train --vocab-size 8000`` (repair, BPE's
counts, no pre-tokenizer: the merge engine works on the whole string) and by HF tokenizers'
``BpeTrainer`` with no pre-tokenizer, fed the same line. HF counts words, and with no
pre-tokenizer the line is one word, so it is given at most ``--cap`` seconds. Whole processes
are timed once each (wall seconds and peak RSS).

    .venv/bin/python examples/benchmarks/no_pretokenizer.py [--corpus DIR] [--cap 600]

Writes examples/benchmarks/no_pretokenizer.md and prints it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from processes import CHUNKPRESS

HERE = Path(__file__).parent
HF_TRAIN = ("import sys; from tokenizers import Tokenizer, models, trainers; "
            "t = Tokenizer(models.BPE()); "
            "t.train_from_iterator([open(sys.argv[1], encoding='utf-8').read()], "
            "trainers.BpeTrainer(vocab_size=8000, show_progress=False)); print(t.get_vocab_size())")


def timed(cmd: list[str], cap: float) -> tuple[float | None, int | None]:
    """(wall seconds, peak RSS in MB) of one process; (None, None) where it ran past ``cap``."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while True:
        waited, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if waited:
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-400:]}")
            return time.perf_counter() - started, usage.ru_maxrss // 1024
        if time.perf_counter() - started > cap:
            proc.kill()
            proc.wait()
            return None, None
        time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    ap.add_argument("--cap", type=float, default=600.0)
    a = ap.parse_args()
    text = (Path(a.corpus) / "en_mix_10MB.txt").read_bytes().replace(b"\n", b" ").replace(b"\r", b" ")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (1_000_000, 10_000_000):
            line = Path(tmp) / f"line{size}.txt"
            cut = text[:size]
            line.write_bytes(cut[: len(cut.decode("utf-8", "ignore").encode())])  # whole characters
            ours = timed([*CHUNKPRESS, "train", str(line), "--vocab-size", "8000", "--rules",
                          str(Path(tmp) / "r.rules"), "-q", "-f"], a.cap)
            theirs = timed([sys.executable, "-c", HF_TRAIN, str(line)], a.cap)
            rows.append((size, ours, theirs))
    out = ["# BPE with no pre-tokenizer: one line", "",
           f"Written by `examples/benchmarks/no_pretokenizer.py` on {datetime.date.today()}; {platform.machine()}, "
           f"Python {platform.python_version()}. Whole processes, once each, 8,000 tokens; a run past "
           f"{a.cap:.0f} s is stopped.", "",
           "| one line of | chunkpress train s | peak MB | HF BpeTrainer s | peak MB |", "|---:|---:|---:|---:|---:|"]
    for size, (s1, m1), (s2, m2) in rows:
        out.append(f"| {size / 1e6:g} MB | {s1:.1f} | {m1:,} | "
                   f"{'over ' + format(a.cap, '.0f') if s2 is None else format(s2, '.1f')} | "
                   f"{'' if m2 is None else format(m2, ',')} |")
    report = "\n".join(out) + "\n"
    (HERE / "no_pretokenizer.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
