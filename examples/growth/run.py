"""mdl on 100 KB, 1 MB and 10 MB prefixes of en_mix: how the dictionary and the code grow.

    .venv/bin/python examples/growth/run.py [--corpus DIR]

Writes, beside this file: stacked_<size>.png (the five code-length parts against the dictionary
size, as seed 1's "stacked" figures), factor.png (compression factor against dictionary size,
log x, one line per input size, as seed 1's factor figure), growth.md and growth.csv (final
figures) and curves.csv (each code-length part and the factor against m, at up to 500
log-spaced steps per prefix: the plotted data, for other tools).
"""

import argparse
import csv
import time
from pathlib import Path

import numpy as np
from chunkpress.engine.codelength import PART_NAMES
from chunkpress.pipeline import Pipeline
from chunkpress.study.plots import plot_factor_vs_size, plot_stacked_parts

HERE = Path(__file__).parent
SIZES = {"100KB": 100_000, "1MB": 1_000_000, "10MB": 10_000_000}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(HERE.resolve().parent / "data"))
    args = parser.parse_args()
    text = (Path(args.corpus) / "en_mix_10MB.txt").read_bytes()
    runs = {}
    finals = []
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
        finals.append({"prefix": label, "bytes": len(data), "final_m": int(trace["m"][-1]), "final_total_bits": total,
                       "factor": round(8 * len(data) / total, 6), "learning_seconds": round(seconds, 2)})
        print(lines[-1], flush=True)
    plot_factor_vs_size(runs, HERE / "factor.png", "mdl: compression factor as the dictionary grows")
    (HERE / "growth.md").write_text("\n".join(lines) + "\n")
    _write_csv(HERE / "growth.csv", finals)
    _write_csv(HERE / "curves.csv", [row for label, (trace, n) in runs.items() for row in _curve(label, trace, n)])


def _curve(label: str, trace, length: int, points: int = 500) -> list[dict]:
    """The trace at up to ``points`` log-spaced steps (the first and last included)."""
    at = np.unique(np.geomspace(1, len(trace), points).astype(int) - 1)
    return [{"prefix": label, "m": int(trace["m"][i]), **{p: int(trace[p][i]) for p in PART_NAMES},
             "total_bits": int(trace["total_bits"][i]), "factor": round(8 * length / int(trace["total_bits"][i]), 6)}
            for i in at]


def _write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
