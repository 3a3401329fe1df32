"""Third-party scorers against a built-in one: whole `chunkpress train` processes, same run.

The example plugin (examples/plugin-dice: dice and jaccard, which the engine rescores only
where counts change, and tscore, which reads N and is scored in full every step) is timed
against the built-in pmi run to the same number of rules as dice. Each command runs once to
warm numba's cache, then ``--repeats`` times; the median wall time and peak RSS are reported.

    pip install -e examples/plugin-dice
    .venv/bin/python examples/benchmarks/scorers.py [--corpus DIR] [--repeats 3]

Writes examples/benchmarks/scorers.md and prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from processes import timed as run_process

HERE = Path(__file__).parent
CHUNKPRESS = str(Path(sys.executable).with_name("chunkpress"))


def run(args: list[str], out: Path) -> dict:
    """Wall time, peak RSS and the rule count of one ``chunkpress train`` process."""
    seconds, rss, err = run_process([CHUNKPRESS, "train", *args, "--rules", str(out), "-f"])
    rules = int(re.match(r"([\d,]+) rules", err.splitlines()[-1]).group(1).replace(",", ""))
    return {"seconds": seconds, "rss_mb": rss / 2**20, "rules": rules}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    ap.add_argument("--file", default="en_mix_1MB.txt")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    path = str(Path(a.corpus) / a.file)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.rules"

        def timed(name, args):
            run(args, out)  # warm numba's cache (and the page cache)
            runs = [run(args, out) for _ in range(a.repeats)]
            row = {"name": name, "args": " ".join(args[1:]), "rules": runs[0]["rules"],
                   "seconds": statistics.median(r["seconds"] for r in runs),
                   "runs": [r["seconds"] for r in runs], "rss_mb": max(r["rss_mb"] for r in runs)}
            rows.append(row)
            return row

        dice = timed("dice (third-party, split)", [path, "--scorer", "dice"])
        pmi = timed("pmi (built-in) to as many rules", [path, "--scorer", "pmi", "--max-rules", str(dice["rules"])])
        timed("jaccard (third-party, non-split, ignores N)", [path, "--scorer", "jaccard"])
        timed("tscore (third-party, non-split, reads N)", [path, "--scorer", "tscore"])
    lines = [
        f"# Third-party scorers vs a built-in one ({a.file})",
        "",
        f"Written by `examples/benchmarks/scorers.py` on {time.strftime('%Y-%m-%d')}; "
        f"{platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole `chunkpress train` processes, warm numba cache, "
        f"median of {a.repeats} runs.",
        "",
        "| scorer | options | rules | seconds (median) | runs | x pmi | peak RSS MB |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['name']} | `{r['args']}` | {r['rules']:,} | {r['seconds']:.2f} | "
                     f"{', '.join(f'{s:.2f}' for s in r['runs'])} | {r['seconds'] / pmi['seconds']:.2f} | {r['rss_mb']:.0f} |")
    text = "\n".join(lines) + "\n"
    (HERE / "scorers.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
