"""How names from results files are shown in tables and plots: bounded, one line."""

from __future__ import annotations

#: the most characters of a name a table cell or plot label shows
WIDTH = 60


def display_name(value, width: int = WIDTH, *, markdown: bool = True) -> str:
    """``value`` as one line of at most ``width`` characters (a name from a results file may be
    a megabyte long or span lines: shown whole it made a report take a minute), with Markdown's
    cell separator escaped (unless ``markdown`` is false: plots, LaTeX)."""
    text = str(value)[: 4 * width]
    text = " ".join(text.split())
    if markdown:
        text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"
