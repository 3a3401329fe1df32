"""mdl on 100 KB, 1 MB and 10 MB prefixes of en_mix: how the dictionary and the code grow.

    .venv/bin/python examples/growth/run.py [--corpus DIR]

Writes, beside this file: stacked_<size>.png (the five code-length parts against the dictionary
size, as seed 1's "stacked" figures), factor.png (compression factor against dictionary size,
log x, one line per input size, as seed 1's factor figure) and growth.md (final figures).
"""

import argparse
import time
from pathlib import Path

from chunkpress.pipeline import Pipeline
from chunkpress.study.plots import plot_factor_vs_size, plot_stacked_parts

HERE = Path(__file__).parent
SIZES = {"100KB": 100_000, "1MB": 1_000_000, "10MB": 10_000_000}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(HERE.resolve().parents[1].parent / "shared" / "corpus"))
    args = parser.parse_args()
    text = (Path(args.corpus) / "en_mix_10MB.txt").read_bytes()
    runs = {}
    lines = ["| prefix | bytes | final m | final total bits | factor | learning s |", "|---|---|---|---|---|---|"]
    for label, size in SIZES.items():
        data = text[:size]
        t = time.perf_counter()
        trace = Pipeline.from_config(scorer="mdl").fit(data).trace
        seconds = time.perf_counter() - t
        runs[label] = (trace, len(data))
        plot_stacked_parts(trace, HERE / f"stacked_{label}.png", f"mdl on the first {label} of en_mix")
        total = int(trace["total_bits"][-1])
        lines.append(f"| {label} | {len(data):,} | {int(trace['m'][-1]):,} | {total:,} | {8 * len(data) / total:.4f} "
                     f"| {seconds:.1f} |")
        print(lines[-1], flush=True)
    plot_factor_vs_size(runs, HERE / "factor.png", "mdl: compression factor as the dictionary grows")
    (HERE / "growth.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
