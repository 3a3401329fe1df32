"""Which pre-tokens should a level's dictionary be learned between? -6 ... -9 learn it between
GPT-2's pre-tokens and, on a text up to 1 MB (256 KB at -6), also between runs of non-space
(the "pretokenizer" trial of each record in ``chunkpress.levels.LEVELS``), keeping the smaller
archive. For each file and level: the
level's pipeline with each pre-tokenizer alone, what ``chunkpress -L`` writes (the trial's
choice), and whole processes of ``chunkpress.compress`` at that level with the trial and with it
switched off (the level's record without that trial), medians of 3 alternating runs.

    .venv/bin/python examples/benchmarks/pretokens.py [FILE ...] [--levels 9,6] [--runs 3]

Without files: the corpora in examples/data (en_mix_10MB left out: past 1 MB nothing is tried)
and GPL-3's text from tests/data. Writes examples/benchmarks/pretokens.md and prints the table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from chunkpress import compress
from chunkpress.pipeline import Pipeline

HERE = Path(__file__).parent
DEFAULT_FILES = (HERE.parent / "data" / "alice29.txt", HERE.parent / "data" / "en_mix_1MB.txt",
                 HERE.parent / "data" / "udhr_arb.txt", HERE.parent / "data" / "udhr_cmn_hans.txt",
                 HERE.parent.parent / "tests" / "data" / "gpl3.txt")
#: one whole process: compress FILE at LEVEL, with the trial or (a third argument) without it
PROCESS = """import sys, attrs, chunkpress, chunkpress.levels as levels
level = levels.LEVELS[int(sys.argv[2])]
if len(sys.argv) > 3:
    levels.LEVELS[level.number] = attrs.evolve(level, trials=tuple(t for t in level.trials if t.way != "pretokenizer"))
chunkpress.compress(open(sys.argv[1], "rb").read(), level=level.number)"""


def wall(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", PROCESS, *args], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, default=list(DEFAULT_FILES))
    parser.add_argument("--levels", default="9,6")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = ["| file | bytes | level | GPT-2's | runs of non-space | change | the level writes | "
            "s, trial off | s, trial on | time |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for path in args.files:
        text = path.read_bytes()
        for level in (int(x) for x in args.levels.split(",")):
            gpt2 = len(Pipeline.from_config(level=level).compress(text))
            runs = len(Pipeline.from_config(level=level, pretokenizer="whitespace").compress(text))
            written = len(compress(text, level=level))
            off, on = [], []
            for _ in range(args.runs):  # alternating, so that the machine's drift hits both
                off.append(wall([str(path), str(level), "off"]))
                on.append(wall([str(path), str(level)]))
            off_s, on_s = statistics.median(off), statistics.median(on)
            rows.append(f"| {path.name} | {len(text):,} | -{level} | {gpt2:,} | {runs:,} | "
                        f"{100 * (runs - gpt2) / gpt2:+.2f}% | {written:,} | {off_s:.2f} | {on_s:.2f} | "
                        f"{on_s / off_s:.2f}x |")
            print(rows[-1], flush=True)
    (HERE / "pretokens.md").write_text(
        "# Pre-tokens tried at -6 ... -9\n\n"
        f"Written by `examples/benchmarks/pretokens.py` on {date.today().isoformat()}: each level's pipeline "
        "with GPT-2's pre-tokens and with runs of non-space, what the level writes (the smaller, up to 1 MB; "
        "its plain back end and -6's trial of -5 too), and whole processes of `chunkpress.compress` with the "
        f"trial off and on (medians of {args.runs} alternating runs, warm numba cache). Files from outside the "
        "repository are described in examples/chunk-cm/NOTES.md.\n\n"
        + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
