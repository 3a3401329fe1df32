"""A study's rows summarized per cell (dataset x variant x config, and vocabulary size in a
sweep): medians over repeats with their min and max, as Markdown and LaTeX (booktabs) tables.
Rows that carry tokenizer metrics get a second table of them, on the studied text and on each
held-out text; the LaTeX tables set the best value of each column in bold, per dataset (and
vocabulary size).

A cell is keyed by the config's hash as well as the variant's name: two configs that share a
name (two studies that both call their variant "bpe") are two cells, labelled with the name
and a short hash, never one averaged line.
"""

from __future__ import annotations

import statistics
import unicodedata

import attrs

from .display import display_name

TIMES = ("learn_seconds", "encode_seconds", "decode_seconds")


@attrs.frozen(kw_only=True)
class Spread:
    """Median, min and max of a column over a cell's repeats."""

    median: float
    low: float
    high: float
    count: int


@attrs.frozen(kw_only=True)
class Cell:
    dataset: str
    variant: str
    config_hash: str
    label: str  # the variant's name, with a short config hash where the name is ambiguous
    rows: tuple  # rows without error
    errors: tuple  # rows with one
    vocab_size: int | None = None  # a sweep's vocabulary size

    @property
    def trained_on(self) -> str:
        """What the cell's dictionary was learned from (rows before this column: the dataset)."""
        found = next((r.get("trained_on") for r in self.rows if isinstance(r.get("trained_on"), str)), None)
        return found or self.dataset

    def spread(self, column: str, held_out: str | None = None) -> Spread | None:
        """``column`` over the repeats; ``held_out``: of that held-out text's metrics."""
        found = self.rows if held_out is None else [(r.get("held_out") or {}).get(held_out) or {} for r in self.rows]
        values = [r[column] for r in found if isinstance(r.get(column), (int, float))
                  and not isinstance(r.get(column), bool)]
        if not values:
            return None
        return Spread(median=statistics.median(values), low=min(values), high=max(values), count=len(values))

    def median(self, column: str, held_out: str | None = None) -> float | None:
        spread = self.spread(column, held_out)
        return None if spread is None else spread.median

    @property
    def name(self) -> str:
        """The label with the sweep's vocabulary size: "repair, 8,192 tokens"."""
        return self.label if self.vocab_size is None else f"{self.label}, {self.vocab_size:,} tokens"

    def compress_seconds(self) -> float | None:
        """Learning plus encoding: what a user waits for when compressing (median of repeats)."""
        totals = [r["learn_seconds"] + r["encode_seconds"] for r in self.rows
                  if isinstance(r.get("learn_seconds"), float) and isinstance(r.get("encode_seconds"), float)]
        return statistics.median(totals) if totals else None


def cells(rows: list[dict]) -> list[Cell]:
    """The rows grouped by (dataset, variant, config hash, vocabulary size), in first-seen order."""
    groups: dict = {}
    for row in rows:
        size = row.get("vocab_size")
        key = (row["dataset"], row["variant"], row.get("config_hash") or "",
               size if isinstance(size, int) and not isinstance(size, bool) else None)
        groups.setdefault(key, []).append(row)
    hashes: dict = {}
    for _, variant, config_hash, _ in groups:
        hashes.setdefault(variant, set()).add(config_hash)
    out = []
    for (dataset, variant, config_hash, size), members in groups.items():
        label = variant if len(hashes[variant]) == 1 else f"{variant} #{config_hash[:8]}"
        out.append(Cell(dataset=dataset, variant=variant, config_hash=config_hash, label=label,
                        rows=tuple(r for r in members if not r.get("error")),
                        errors=tuple(r for r in members if r.get("error")), vocab_size=size))
    return out


def _int(value) -> str:
    return "" if value is None else f"{value:,.0f}"


def _fixed(value, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _timing(spread: Spread | None, dash: str = "–") -> str:
    """``median`` alone for one repeat, ``median (min–max)`` for several."""
    if spread is None:
        return ""
    digits = 3 if spread.median < 1 else 2
    if spread.count == 1:
        return f"{spread.median:.{digits}f}"
    return f"{spread.median:.{digits}f} ({spread.low:.{digits}f}{dash}{spread.high:.{digits}f})"


def _megabytes(value) -> str:
    return "" if value is None else f"{value / 1e6:,.0f}"


_HEADER = ("dataset", "variant", "archive bytes", "dictionary bytes", "bits/byte", "factor", "rules",
           "learn s", "encode s", "decode s", "peak RSS MB", "verified")


def markdown_table(rows: list[dict]) -> str:
    """One line per cell; sizes are medians, times median (min–max) over the repeats."""
    lines = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    for cell in cells(rows):
        name = f"| {display_name(cell.dataset)} | {display_name(cell.name)} |"
        if not cell.rows:
            lines.append(f"{name} failed: {display_name(cell.errors[0]['error'], 200)} |" + "|" * (len(_HEADER) - 3))
            continue
        values = [_int(cell.median("archive_bytes")), _int(cell.median("dictionary_bytes")),
                  _fixed(cell.median("bits_per_byte"), 4), _fixed(cell.median("factor"), 4),
                  _int(cell.median("rules")), *(_timing(cell.spread(t)) for t in TIMES),
                  _megabytes(cell.median("peak_rss_bytes")), str(all(r.get("verified") is True for r in cell.rows))]
        lines.append(name + " " + " | ".join(values) + " |")
    note = ("\nTimes in seconds: median (min–max) over repeats; sizes are medians. "
            "Peak RSS: the measuring process's, from the OS.\n")
    return "\n".join(lines) + "\n" + note + _markdown_token_tables(rows)


#: the tokenizer metrics tables' columns: (row column, heading, digits, which way is better)
TOKEN_TABLE = (("tokens", "tokens", 0, min), ("bytes_per_token", "bytes/token", 3, max),
               ("chars_per_token", "chars/token", 3, max), ("tokens_per_word", "tokens/word", 3, min),
               ("renyi_efficiency", "Rényi eff. (α 2.5)", 4, max), ("shannon_efficiency", "Shannon eff.", 4, max),
               ("vocab_used", "tokens used", 0, None))


def _texts(rows: list[dict]) -> list[str | None]:
    """The texts tokenizer metrics were measured on: None (each row's dataset), then each
    held-out text by name; [] when no row has tokenizer metrics."""
    if not any(isinstance(r.get("tokens"), int) for r in rows if not r.get("error")):
        return []
    held = dict.fromkeys(name for r in rows for name in (r.get("held_out") or {}))
    return [None, *held]


def _metric_cells(texts_of: str | None, all_cells: list[Cell]) -> list[tuple[str, Cell]]:
    """(the text's name, cell) for every cell with metrics on that text."""
    out = []
    for cell in all_cells:
        if cell.rows and cell.median("tokens", texts_of) is not None:
            out.append((cell.dataset if texts_of is None else texts_of, cell))
    return out


def _best(found: list[tuple[str, Cell]], column: str, held_out: str | None, better) -> dict:
    """The best median of ``column`` per (text, dataset, vocabulary size) group, where there
    is a best: ``better`` says which way (None: neither, as for the tokens a text uses) and the
    group holds more than one value."""
    groups: dict = {}
    for text, cell in found:
        value = cell.median(column, held_out)
        if value is not None and better is not None:
            groups.setdefault((text, cell.dataset, cell.vocab_size), []).append(value)
    return {key: better(values) for key, values in groups.items() if len(values) > 1}


def _markdown_token_tables(rows: list[dict]) -> str:
    all_cells = cells(rows)
    out = []
    for held_out in _texts(rows):
        found = _metric_cells(held_out, all_cells)
        title = "the studied text" if held_out is None else f"held-out {display_name(held_out)} (never learned from)"
        head = ("text", "trained on", "variant", *(h for _, h, _, _ in TOKEN_TABLE))
        out += [f"\nTokenizer metrics on {title}: medians over repeats.\n", "| " + " | ".join(head) + " |",
                "|" + "---|" * len(head)]
        for text, cell in found:
            values = [_fixed(cell.median(c, held_out), d) if d else _int(cell.median(c, held_out))
                      for c, _, d, _ in TOKEN_TABLE]
            out.append(f"| {display_name(text)} | {display_name(cell.trained_on)} | {display_name(cell.name)} | "
                       + " | ".join(values) + " |")
    return "\n".join(out) + ("\n" if out else "")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


#: characters beyond ASCII that tables hold, as macros plain pdflatex knows without packages
_LATEX_MACROS = {"α": r"$\alpha$", "–": "--", "—": "---", "×": r"$\times$", "≤": r"$\le$", "≥": r"$\ge$",
                 "…": r"\ldots{}", "±": r"$\pm$", "µ": r"$\mu$", "▁": r"\_", "·": r"$\cdot$"}
#: accents as combining marks (what NFD splits an accented letter into) and their macros
_LATEX_ACCENTS = {"\u0301": "\\'", "\u0300": "\\`", "\u0302": "\\^", "\u0308": '\\"', "\u0303": "\\~",
                  "\u0327": "\\c", "\u030c": "\\v"}


def _latex_char(c: str) -> str:
    """One character as ASCII that pdflatex reads with no package for its script: an accented
    Latin letter as a macro (é as \\'{e}), a few symbols as math, anything else as ?."""
    if c in _LATEX_SPECIAL:
        return _LATEX_SPECIAL[c]
    if c.isascii():
        return c
    if c in _LATEX_MACROS:
        return _LATEX_MACROS[c]
    split = unicodedata.normalize("NFD", c)
    if len(split) == 2 and split[0].isascii() and split[1] in _LATEX_ACCENTS:
        return f"{_LATEX_ACCENTS[split[1]]}{{{split[0]}}}"
    return "?"


def latex_escape(text: str) -> str:
    """``text`` as LaTeX source in ASCII alone (see :func:`_latex_char`)."""
    return "".join(_latex_char(c) for c in text)


def _latex_label(caption: str) -> str:
    """A ``\\label`` from the caption's words: ``tab:study-sweep`` (LaTeX reads letters, digits, '-' and ':')."""
    words = "".join(c if c.isascii() and c.isalnum() else "-" for c in caption.lower()).split("-")
    return rf"\label{{tab:{'-'.join(w for w in words if w) or 'study'}}}"


def _head(names: tuple[str, ...], sweep: bool) -> tuple[str, ...]:
    """The header with the vocabulary size as its own column after the variant, in a sweep."""
    return (*names[:2], "Vocabulary", *names[2:]) if sweep else names


def latex_table(rows: list[dict], caption: str = "") -> str:
    """A booktabs table: one line per cell, a little space between datasets (one rule under the
    header); in a sweep the vocabulary size is a column of its own; times median (min--max)."""
    all_cells = cells(rows)
    sweep = any(c.vocab_size for c in all_cells)
    head = _head(("Dataset", "Variant", "Archive (B)", "Bits/byte", "Learn (s)", "Encode (s)", "Decode (s)",
                  "Peak RSS (MB)"), sweep)
    out = [r"% generated by chunkpress study from results.jsonl; needs \usepackage{booktabs}",
           r"\begin{table}[htbp]", r"\centering", r"\begin{tabular}{ll" + "r" * (len(head) - 2) + "}", r"\toprule",
           " & ".join(head) + r" \\", r"\midrule"]
    previous = None
    best = _best([(c.dataset, c) for c in all_cells if c.rows], "archive_bytes", None, min)
    for cell in all_cells:
        if previous is not None and cell.dataset != previous:
            out.append(r"\addlinespace")
        previous = cell.dataset
        name = [latex_escape(display_name(cell.dataset, markdown=False)),
                latex_escape(display_name(cell.label, markdown=False)),
                *([f"{cell.vocab_size:,}" if cell.vocab_size else ""] if sweep else [])]
        if not cell.rows:
            out.append(" & ".join(name) + rf" & \multicolumn{{{len(head) - len(name)}}}{{l}}{{failed}} \\")
            continue
        smallest = best.get((cell.dataset, cell.dataset, cell.vocab_size))
        size = cell.median("archive_bytes")
        values = [_bold(latex_escape(_int(size)), size == smallest), _fixed(cell.median("bits_per_byte"), 3),
                  *(latex_escape(_timing(cell.spread(t), dash="--")) for t in TIMES),
                  _megabytes(cell.median("peak_rss_bytes"))]
        out.append(" & ".join(name + values) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}",
            rf"\caption{{{latex_escape(caption)} Times: median (min--max) over repeats; the smallest archive of "
            rf"each dataset{' and vocabulary size' if sweep else ''} in bold.}}", _latex_label(caption),
            r"\end{table}"]
    return "\n".join(out) + "\n" + _latex_token_tables(all_cells, rows, caption)


def _bold(text: str, best: bool) -> str:
    return rf"\textbf{{{text}}}" if best and text else text


def _latex_token_tables(all_cells: list[Cell], rows: list[dict], caption: str) -> str:
    out = []
    sweep = any(c.vocab_size for c in all_cells)
    for held_out in _texts(rows):
        found = _metric_cells(held_out, all_cells)
        best = {c: _best(found, c, held_out, better) for c, _, _, better in TOKEN_TABLE}
        head = _head(("Text", "Variant", *(latex_escape(h) for _, h, _, _ in TOKEN_TABLE)), sweep)
        out += ["", r"\begin{table}[htbp]", r"\centering", r"\begin{tabular}{ll" + "r" * (len(head) - 2) + "}",
                r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
        previous = None
        for text, cell in found:
            if previous is not None and (text, cell.dataset) != previous[:2]:
                out.append(r"\addlinespace")
            previous = (text, cell.dataset, cell.vocab_size)
            values = []
            for column, _, digits, _ in TOKEN_TABLE:
                value = cell.median(column, held_out)
                shown = _fixed(value, digits) if digits else _int(value)
                values.append(_bold(latex_escape(shown), value is not None and value == best[column].get(previous)))
            size = [f"{cell.vocab_size:,}" if cell.vocab_size else ""] if sweep else []
            out.append(" & ".join([latex_escape(display_name(text, markdown=False)),
                                   latex_escape(display_name(cell.label, markdown=False)), *size, *values]) + r" \\")
        where = "the studied text" if held_out is None else f"held-out {held_out} (never learned from)"
        out += [r"\bottomrule", r"\end{tabular}",
                rf"\caption{{{latex_escape(caption)} Tokenizer metrics on {latex_escape(where)}, medians over "
                rf"repeats; the best of each column per text and vocabulary size in bold.}}",
                _latex_label(f"{caption} tokens {held_out or ''}"), r"\end{table}"]
    return "\n".join(out) + ("\n" if out else "")
