"""The tokenizer study's figures side by side, relative to BPE: summary.md beside this file.

    .venv/bin/python examples/tokenizers/summarize.py [results/results.jsonl]

For each text (the training text, each held-out one): tokens per method and vocabulary size as
a fraction of BPE's at the same size, and Rényi efficiency; for the training text, the archive
at the -6 and -9 coders as a fraction of BPE's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def read_rows(path: Path) -> list[dict]:
    """The study's rows that ran without an error."""
    return [r for r in map(json.loads, path.read_text().splitlines()) if not r.get("error")]


def _method(variant: str) -> tuple[str, str]:
    name, coder = variant.rsplit(", ", 1)
    return name, coder


def size_table(title: str, methods: list[str], sizes: list[int], cell, label: str = "method") -> list[str]:
    """A Markdown table, a row a method and a column a vocabulary size, ``cell(method, size)``
    in each."""
    out = [f"\n{title}\n", f"| {label} | " + " | ".join(f"{s // 1024}k" for s in sizes) + " |",
           "|---|" + "---|" * len(sizes)]
    for method in methods:
        out.append(f"| {method} | " + " | ".join(cell(method, s) for s in sizes) + " |")
    return out


def text_tables(rows: list[dict], row_of, methods: list[str], sizes: list[int], baseline: str, tokens_title: str,
                renyi_title: str, label: str = "method") -> list[str]:
    """For the training text and each held-out text, two tables: the tokens as a fraction of
    ``baseline``'s at the same size, and the Rényi efficiency. ``row_of(method, size)``: the
    row, or None; the titles name the text as ``{name}``."""
    texts = [None, *dict.fromkeys(name for r in rows for name in (r.get("held_out") or {}))]

    def metric(method, size, text, column):
        row = row_of(method, size)
        if row is None:
            return None
        return row[column] if text is None else (row.get("held_out") or {}).get(text, {}).get(column)

    out = []
    for text in texts:
        name = rows[0]["dataset"] + " (trained on)" if text is None else f"{text} (held out)"

        def tokens(method, size, text=text):
            mine, base = metric(method, size, text, "tokens"), metric(baseline, size, text, "tokens")
            return f"{mine / base:.3f}" if mine and base else ""

        def renyi(method, size, text=text):
            value = metric(method, size, text, "renyi_efficiency")
            return f"{value:.3f}" if value is not None else ""

        out += size_table(tokens_title.format(name=name), methods, sizes, tokens, label)
        out += size_table(renyi_title.format(name=name), methods, sizes, renyi, label)
    return out


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results" / "results.jsonl"
    rows = read_rows(path)
    by = {(*_method(r["variant"]), r["vocab_size"]): r for r in rows}
    methods = list(dict.fromkeys(_method(r["variant"])[0] for r in rows))
    sizes = sorted({r["vocab_size"] for r in rows})
    coders = list(dict.fromkeys(_method(r["variant"])[1] for r in rows))
    lines = [f"Tokenizer study ({path.relative_to(HERE) if path.is_relative_to(HERE) else path}): trained on "
             f"{rows[0]['dataset']}; each figure relative to BPE (repair) at the same vocabulary size."]
    lines += text_tables(rows, lambda method, size: by.get((method, coders[0], size)), methods, sizes, "BPE",
                         "Tokens on {name}, as a fraction of BPE's:", "Rényi efficiency (α = 2.5) on {name}:")
    for coder in coders:
        def archive(method, size, coder=coder):
            mine, bpe = by.get((method, coder, size)), by.get(("BPE", coder, size))
            return f"{mine['archive_bytes'] / bpe['archive_bytes']:.3f}" if mine and bpe else ""

        bpe_sizes = ", ".join(f"{by[('BPE', coder, s)]['archive_bytes']:,}" for s in sizes if ("BPE", coder, s) in by)
        lines += size_table(f"Archive of {rows[0]['dataset']} with the {coder} and each dictionary, as a fraction of "
                        f"BPE's ({bpe_sizes} B):", methods, sizes, archive)
    text = "\n".join(lines) + "\n"
    (HERE / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
