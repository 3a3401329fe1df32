"""Seed 3's Table I from the study rows: sizes as % of the original and the gain in points.

    .venv/bin/python examples/frequency-ordered/summarize.py

Reads results/results.csv beside this file and writes table.md.
"""

import csv
from pathlib import Path

HERE = Path(__file__).parent
PAPER = {"zlib -9": 7.08, "xz -9e": 1.69, "zstd -22": 0.76}  # gains in points on enwik8


def main():
    rows = list(csv.DictReader(open(HERE / "results" / "results.csv")))
    size = {}
    for r in rows:
        if r["error"]:
            continue
        kind, compressor = (s.strip() for s in r["variant"].split("|"))
        size[r["dataset"], kind, compressor] = 100 * float(r["archive_bytes"]) / float(r["original_bytes"])
    lines = [
        "| dataset | compressor | raw % | BPE word + freq. order % | gain (pp) | BPE raw + freq. order % | gain (pp) "
        "| ablation: BPE word, id order % | paper's gain on enwik8 (pp) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for dataset in sorted({k[0] for k in size}):
        for compressor in dict.fromkeys(k[2] for k in size if k[0] == dataset):
            get = lambda kind, dataset=dataset, compressor=compressor: size.get((dataset, kind, compressor))  # noqa: E731
            raw, word = get("raw"), get("BPE word + frequency order")
            braw, ablation = get("BPE raw + frequency order"), get("BPE word + id order")
            fmt = lambda v: f"{v:.2f}" if v is not None else "—"  # noqa: E731
            gain = lambda v, raw=raw: f"{raw - v:+.2f}" if v is not None and raw is not None else "—"  # noqa: E731
            paper = f"+{PAPER[compressor]:.2f}" if compressor in PAPER else ""
            lines.append(f"| {dataset} | {compressor} | {fmt(raw)} | {fmt(word)} | {gain(word)} | {fmt(braw)} "
                         f"| {gain(braw)} | {fmt(ablation)} | {paper} |")
    text = "\n".join(lines) + "\n"
    (HERE / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
