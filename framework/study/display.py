"""How names from results files are shown in tables and plots: bounded, one line, and a grid
variant's overrides as words ("wordpiece, 1,000 rules, cm"), also in results written before
studies named them so ("wordpiece, limits.max_rules=1000, coder=cm")."""

from __future__ import annotations

import re

#: one override as older studies named it: a config key (without ".name"), "=", the value
_OLD_OVERRIDE = re.compile(r"^([a-z_][\w.]*)=(.+)$")

#: the most characters of a name a table cell or plot label shows
WIDTH = 60


def readable_override(key: str, value) -> str:
    """One override as a reader says it: ``coder.name = "cm"`` is "cm", ``limits.max_rules =
    1000`` is "1,000 rules", ``coder.params.memory = 22`` is "memory 22"."""
    if key.endswith(".name") or key == "pretokenizer":
        return str(value)
    shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
    if key == "limits.max_rules":
        return f"{shown} rules"
    return f"{key.rsplit('.', 1)[-1].replace('_', ' ')} {shown}"


def _readable_part(part: str) -> str:
    found = _OLD_OVERRIDE.match(part.strip())
    if not found:
        return part.strip()
    key, value = found.groups()
    number = int(value) if value.isdigit() else value
    return readable_override(key if "." in key else key + ".name", number)


def display_name(value, width: int = WIDTH, *, markdown: bool = True) -> str:
    """``value`` as one line of at most ``width`` characters (a name from a results file may be
    a megabyte long or span lines: shown whole it made a report take a minute), with Markdown's
    cell separator escaped (unless ``markdown`` is false: plots, LaTeX)."""
    text = str(value)[: 4 * width]
    text = " ".join(text.split())
    if "=" in text and ", " in text:
        text = ", ".join(_readable_part(part) for part in text.split(", "))
    if markdown:
        text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"
