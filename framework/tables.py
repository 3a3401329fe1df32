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
    if isinstance(value, dict):  # a coder's params: key=value, as on a command line
        return " ".join(f"{k}={cell(v)}" for k, v in value.items()) or "-"
    return str(value)


def key_values(info: dict, title: str | None = None) -> str:
    """``key  value`` lines, after a ``title:`` line if one is given."""
    width = max(len(k) for k in info)
    lines = [f"{title}:"] if title is not None else []
    return "\n".join(lines + [f"{key:<{width}}  {cell(value)}" for key, value in info.items()])


def columns(rows: Sequence[dict], names: Sequence[str], left: Sequence[str] | None = None) -> str:
    """The rows under a header of ``names``, the columns named in ``left`` (default: the first)
    left-aligned, the others right."""
    left = names[:1] if left is None else left
    cells = [list(names)] + [[cell(r[c]) for c in names] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(names))]
    return "\n".join("  ".join(c.ljust(w) if n in left else c.rjust(w) for n, c, w in zip(names, row, widths, strict=True))
                     .rstrip() for row in cells)


#: what ``chunkpress -l`` shows of each archive, one row each
LIST_COLUMNS = ("compressed", "uncompressed", "ratio", "codecs", "blocks", "file")


def list_row(name: str, info: dict) -> dict:
    """An archive's row of ``chunkpress -l`` from what ``Decompressor.describe`` says of it."""
    packed = info.get("archive_bytes")
    original = info.get("original_bytes")
    codecs = info.get("codecs") or info.get("codec") or "-"
    short = ", ".join(c.removeprefix("chunkpress.") for c in str(codecs).split(", "))
    return {"compressed": packed, "uncompressed": original, "file": name, "codecs": short,
            "ratio": f"{100 * packed / original:.2f}%" if packed is not None and original else "-",
            "blocks": info.get("blocks", 1)}
