"""The top-down and segmenter study side by side, relative to BPE cut by its merges:
summary_top_down.md beside this file.

    .venv/bin/python examples/tokenizers/summarize_top_down.py [results_top_down/results.jsonl]

For each text (the training text, each held-out one): tokens per vocabulary and segmenter as a
fraction of BPE's (merges) at the same size, Rényi efficiency and bytes per token; then the
archive of the training text with the -6 and -9 coders as a fraction of BPE's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from summarize import read_rows, size_table, text_tables  # beside this script (its folder is on the path)

HERE = Path(__file__).resolve().parent
BASELINE = "BPE, merges"
NINE = ", -9 coder"
LABEL = "vocabulary, segmenter"


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results_top_down" / "results.jsonl"
    rows = read_rows(path)
    six = {(r["variant"], r["vocab_size"]): r for r in rows if not r["variant"].endswith(NINE)}
    nine = {(r["variant"][: -len(NINE)], r["vocab_size"]): r for r in rows if r["variant"].endswith(NINE)}
    methods = list(dict.fromkeys(v for v, _ in six))
    sizes = sorted({s for _, s in six})
    lines = [f"Top-down learners and segmenters ({path.relative_to(HERE) if path.is_relative_to(HERE) else path}): "
             f"trained on {rows[0]['dataset']}; tokens relative to {BASELINE} at the same vocabulary size."]
    lines += text_tables(rows, lambda method, size: six.get((method, size)), methods, sizes, BASELINE,
                         "Tokens on {name}, as a fraction of BPE's (merges):",
                         "Rényi efficiency (α = 2.5, over the types used) on {name}:", LABEL)

    def archive(table, base_name):
        def cell(method, size):
            mine, base = table.get((method, size)), table.get((base_name, size))
            return f"{mine['archive_bytes'] / base['archive_bytes']:.3f}" if mine and base else ""
        return cell

    for label, table, base_name in (("-6", six, BASELINE), ("-9", nine, "BPE")):
        present = list(dict.fromkeys(v for v, _ in table))
        base = ", ".join(f"{table[(base_name, s)]['archive_bytes']:,}" for s in sizes if (base_name, s) in table)
        lines += size_table(f"Archive of {rows[0]['dataset']} with the {label} coder and each vocabulary, as a fraction "
                        f"of BPE's ({base} B; the coder parses the text itself, so a segmenter leaves it as it is):",
                        present, sizes, archive(table, base_name), LABEL)
    text = "\n".join(lines) + "\n"
    (HERE / "summary_top_down.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
