"""Would a capitalisation-aware parse pay? A case-flag transform in front of the levels: a
Capitalised word becomes a flag byte (0x01) and the word in lower case, a word in CAPITALS
(two letters or more) another flag (0x02) and the word in lower case, so that "The" and "the"
are one chunk. Measured as a transform of the input (reversed exactly, checked), with the
same levels on both texts, so the flags' cost is in the archives.

    .venv/bin/python examples/benchmarks/case_flag.py [--corpus DIR]

Writes examples/benchmarks/case_flag.md and prints the table.
"""

from __future__ import annotations

import argparse
import re
from datetime import date
from pathlib import Path

from chunkpress import compress

HERE = Path(__file__).parent
CORPORA = ("alice29.txt", "en_mix_1MB.txt", "udhr_arb.txt", "en_mix_10MB.txt")
LEVELS = (9, 6)
CAPITALISED, CAPITALS = b"\x01", b"\x02"


def flag_case(text: bytes) -> bytes:
    if CAPITALISED in text or CAPITALS in text:
        raise ValueError("the text holds a flag byte")

    def word(m: re.Match) -> bytes:
        w = m.group(0)
        if len(w) > 1 and w.isupper():
            return CAPITALS + w.lower()
        if w[:1].isupper() and w[1:].islower():
            return CAPITALISED + w.lower()
        return w

    return re.sub(rb"[A-Za-z]+", word, text)


def unflag_case(text: bytes) -> bytes:
    text = re.sub(CAPITALS + rb"([a-z]+)", lambda m: m.group(1).upper(), text)
    return re.sub(CAPITALISED + rb"([a-z])", lambda m: m.group(1).upper(), text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent / "data")
    args = parser.parse_args()
    rows = ["| corpus | level | archive bytes | with case flags | change |", "|---|---|---:|---:|---:|"]
    for name in CORPORA:
        text = (args.corpus / name).read_bytes()
        flagged = flag_case(text)
        assert unflag_case(flagged) == text
        for level in LEVELS:
            plain, case = len(compress(text, level=level)), len(compress(flagged, level=level))
            rows.append(f"| {name} | -{level} | {plain:,} | {case:,} | {100 * (case - plain) / plain:+.2f}% |")
            print(rows[-1], flush=True)
    (HERE / "case_flag.md").write_text(
        f"# A case-flag transform in front of the levels\n\nWritten by `examples/benchmarks/case_flag.py` on "
        f"{date.today()}: archive bytes of each level on the text and on its case-flagged form.\n\n"
        + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
