"""Plain-text tables for people: numbers with thousands separators, floats to four places."""

from __future__ import annotations

from collections.abc import Sequence


def cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def key_values(info: dict, title: str | None = None) -> str:
    """``key  value`` lines, after a ``title:`` line if one is given."""
    width = max(len(k) for k in info)
    lines = [f"{title}:"] if title is not None else []
    return "\n".join(lines + [f"{key:<{width}}  {cell(value)}" for key, value in info.items()])


def columns(rows: Sequence[dict], names: Sequence[str]) -> str:
    """The rows under a header of ``names``, the first column left-aligned, the others right."""
    cells = [list(names)] + [[cell(r[c]) for c in names] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(names))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
                     for row in cells)
