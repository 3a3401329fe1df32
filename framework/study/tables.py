"""A study's rows summarized per cell (dataset x variant x config): medians over repeats with
their min and max, as a Markdown table and a LaTeX (booktabs) table.

A cell is keyed by the config's hash as well as the variant's name: two configs that share a
name (two studies that both call their variant "bpe") are two cells, labelled with the name
and a short hash, never one averaged line.
"""

from __future__ import annotations

import statistics

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

    def spread(self, column: str) -> Spread | None:
        values = [r[column] for r in self.rows if isinstance(r.get(column), (int, float))
                  and not isinstance(r.get(column), bool)]
        if not values:
            return None
        return Spread(median=statistics.median(values), low=min(values), high=max(values), count=len(values))

    def median(self, column: str) -> float | None:
        spread = self.spread(column)
        return None if spread is None else spread.median

    def compress_seconds(self) -> float | None:
        """Learning plus encoding: what a user waits for when compressing (median of repeats)."""
        totals = [r["learn_seconds"] + r["encode_seconds"] for r in self.rows
                  if isinstance(r.get("learn_seconds"), float) and isinstance(r.get("encode_seconds"), float)]
        return statistics.median(totals) if totals else None


def cells(rows: list[dict]) -> list[Cell]:
    """The rows grouped by (dataset, variant, config hash), in first-seen order."""
    groups: dict = {}
    for row in rows:
        groups.setdefault((row["dataset"], row["variant"], row.get("config_hash") or ""), []).append(row)
    hashes: dict = {}
    for _, variant, config_hash in groups:
        hashes.setdefault(variant, set()).add(config_hash)
    out = []
    for (dataset, variant, config_hash), members in groups.items():
        label = variant if len(hashes[variant]) == 1 else f"{variant} #{config_hash[:8]}"
        out.append(Cell(dataset=dataset, variant=variant, config_hash=config_hash, label=label,
                        rows=tuple(r for r in members if not r.get("error")),
                        errors=tuple(r for r in members if r.get("error"))))
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
        name = f"| {display_name(cell.dataset)} | {display_name(cell.label)} |"
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
    return "\n".join(lines) + "\n" + note


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def latex_table(rows: list[dict], caption: str = "") -> str:
    """A booktabs table: one line per cell, a rule between datasets; times median (min--max)."""
    head = ("Dataset", "Variant", "Archive (B)", "Bits/byte", "Learn (s)", "Encode (s)", "Decode (s)",
            "Peak RSS (MB)")
    out = [r"% generated by chunkpress study from results.jsonl; needs \usepackage{booktabs}",
           r"\begin{table}[htbp]", r"\centering", r"\begin{tabular}{ll" + "r" * (len(head) - 2) + "}", r"\toprule",
           " & ".join(head) + r" \\", r"\midrule"]
    previous = None
    for cell in cells(rows):
        if previous is not None and cell.dataset != previous:
            out.append(r"\midrule")
        previous = cell.dataset
        name = [latex_escape(display_name(cell.dataset, markdown=False)),
                latex_escape(display_name(cell.label, markdown=False))]
        if not cell.rows:
            out.append(" & ".join(name) + rf" & \multicolumn{{{len(head) - 2}}}{{l}}{{failed}} \\")
            continue
        values = [_int(cell.median("archive_bytes")), _fixed(cell.median("bits_per_byte"), 3),
                  *(_timing(cell.spread(t), dash="--") for t in TIMES), _megabytes(cell.median("peak_rss_bytes"))]
        out.append(" & ".join(name + [latex_escape(v) for v in values]) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}",
            rf"\caption{{{latex_escape(caption)} Times: median (min--max) over repeats.}}", r"\end{table}"]
    return "\n".join(out) + "\n"
