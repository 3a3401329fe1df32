"""Plots of learning traces and study results (matplotlib, imported on use; ``pip install chunkpress[plots]``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import numpy as np

from ..engine.codelength import PART_NAMES
from .display import display_name
from .tables import TOKEN_TABLE, Cell, cells

_LABELS = {"m_bits": "dictionary size", "rules_bits": "rules", "n_bits": "string length",
           "counts_bits": "symbol counts", "string_bits": "string"}


def _pyplot():
    import matplotlib  # optional: pip install 'chunkpress[plots]'

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after the backend is chosen

    return plt


def plot_stacked_parts(trace: np.ndarray, path: str | Path, title: str = "") -> None:
    """The five code-length parts stacked against the dictionary size m (seed 1's figures)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    m = trace["m"]
    ax.stackplot(m, *[trace[p] / 8000 for p in PART_NAMES], labels=[_LABELS[p] for p in PART_NAMES])
    ax.plot(m, trace["total_bits"] / 8000, color="black", linewidth=0.8, label="total")
    ax.set_xlabel("dictionary size m")
    ax.set_ylabel("code length (kB)")
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_factor_vs_size(runs: dict, path: str | Path, title: str = "") -> None:
    """Compression factor (8 * original bytes / total bits) against m, log x, one line per run.
    ``runs`` maps a label to (trace, original length in bytes)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, (trace, length) in runs.items():
        ax.plot(trace["m"], 8 * length / trace["total_bits"], label=label)
    ax.set_xscale("log")
    ax.set_xlabel("dictionary size m")
    ax.set_ylabel("compression factor")
    ax.set_title(title)
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: the formats every study plot is written in: PNG to look at, SVG and PDF for papers
FORMATS = ("png", "svg", "pdf")
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
_HATCHES = ("//", "..", "xx", "\\\\", "++", "oo", "--", "||", "**")


@attrs.frozen(kw_only=True)
class Style:
    """How one variant is drawn: a colour, a marker (points) and a hatch (bars)."""

    color: str
    marker: object
    hatch: str


def styles(count: int) -> list[Style]:
    """``count`` styles, no two alike for any count: the colour cycles through ten, and each
    round of ten after the first takes the next marker (a polygon with one more side) and the
    next hatch (denser once the patterns run out)."""
    out = []
    for i in range(count):
        round_, color = divmod(i, len(_COLORS))
        step, pattern = divmod(round_ - 1, len(_HATCHES))
        hatch = "" if round_ == 0 else _HATCHES[pattern] * (1 + step)
        marker = "o" if round_ == 0 else (round_ + 2, 0, 0)  # circle, triangle, square, pentagon, ...
        out.append(Style(color=_COLORS[color], marker=marker, hatch=hatch))
    return out


def _save(fig, path: Path) -> list[Path]:
    """``fig`` in every format of FORMATS, beside ``path`` (its suffix replaced)."""
    written = []
    for fmt in FORMATS:
        target = path.with_suffix("." + fmt)
        fig.savefig(target, dpi=110, metadata=_METADATA.get(fmt))
        written.append(target)
    return written


#: no creation date in vector files: a rerun that changes nothing changes no byte
_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}


def _label(text, width: int = 60) -> str:
    return display_name(text, width, markdown=False)


def _cell_styles(all_cells, by_size: bool = False) -> dict:
    """A style per variant (``by_size``: per variant and vocabulary size, each a bar of its own)."""
    labels = list(dict.fromkeys(c.name if by_size else c.label for c in all_cells))
    return dict(zip(labels, styles(len(labels)), strict=False))


def plot_factors(rows: list[dict], path: Path) -> list[Path]:
    """Grouped bars: compression factor (median over repeats) of each variant (at each
    vocabulary size of a sweep) on each dataset."""
    found = [c for c in cells(rows) if c.rows and c.median("factor") is not None]
    if not found:
        return []
    plt = _pyplot()
    datasets = list(dict.fromkeys(c.dataset for c in found))
    drawn = _cell_styles(found, by_size=True)
    fig, ax = plt.subplots(figsize=(min(14, 4 + 0.6 * len(drawn) * len(datasets)) + 4, max(4, 1 + 0.2 * len(drawn))),
                           layout="constrained")
    width = 0.8 / len(drawn)
    for i, (label, style) in enumerate(drawn.items()):
        ys = [next((c.median("factor") for c in found if c.dataset == d and c.name == label), 0) for d in datasets]
        ax.bar([j + i * width for j in range(len(datasets))], ys, width, label=_label(label),
               color=style.color, hatch=style.hatch, edgecolor="black", linewidth=0.4)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(datasets))], [_label(d, 30) for d in datasets])
    ax.set_ylabel("compression factor (original / archive)")
    # bars from just below the smallest factor, not from 0: a small difference stays visible
    # (the axis says where it starts)
    factors = [f for c in found if (f := c.median("factor")) is not None]
    low, high = min(factors), max(factors)
    ax.set_ylim(max(0.0, low - 0.15 * (high - low) - 0.02 * high), high + 0.05 * (high - low) + 0.01 * high)
    fig.legend(fontsize="small", loc="outside right upper")
    try:
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_size_against_time(rows: list[dict], path: Path) -> list[Path]:
    """Archive size against compress time (learn + encode, log scale), one point per variant,
    one panel per dataset: the trade-off compressor papers plot."""
    found = [c for c in cells(rows) if c.rows and c.compress_seconds() is not None]
    if not found:
        return []
    plt = _pyplot()
    datasets = list(dict.fromkeys(c.dataset for c in found))
    drawn = _cell_styles(found)
    columns = min(3, len(datasets))
    lines = -(-len(datasets) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.5 * columns + 3, 3.6 * lines), squeeze=False,
                             layout="constrained")
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        seconds = []
        sized: dict = {}
        for cell in (c for c in found if c.dataset == dataset):
            style = drawn[cell.label]
            seconds.append(max(cell.compress_seconds() or 0.0, 1e-4))
            ax.scatter([seconds[-1]], [cell.median("archive_bytes")], color=style.color,
                       marker=style.marker, s=45, edgecolors="black", linewidths=0.4, label=_label(cell.label))
            if cell.vocab_size is not None:  # a sweep's sizes: each point named, a variant's joined
                ax.annotate(_vocab_label(cell.vocab_size), (seconds[-1], cell.median("archive_bytes")),
                            xytext=(4, 3), textcoords="offset points", fontsize="x-small")
                sized.setdefault(cell.label, []).append((cell.vocab_size, seconds[-1], cell.median("archive_bytes")))
        for label, points in sized.items():
            _, xs, ys = zip(*sorted(points), strict=True)
            ax.plot(xs, ys, color=drawn[label].color, linewidth=0.8, alpha=0.6)
        _log_axis(plt, ax.xaxis, seconds)
        ax.set_title(_label(dataset, 40), fontsize="medium")
        ax.set_xlabel("compress time (s, learn + encode)")
        ax.set_ylabel("archive bytes")
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value:,.0f}"))
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    handles = [plt.Line2D([], [], linestyle="", marker=s.marker, color=s.color, markeredgecolor="black",
                          markeredgewidth=0.4, label=_label(label)) for label, s in drawn.items()]
    fig.legend(handles=handles, fontsize="small", loc="outside right upper")
    try:
        return _save(fig, path)
    finally:
        plt.close(fig)


def _log_axis(plt, axis, values) -> None:
    """A scale for positive ``values`` whose labels are readable and never overlap: log with
    the decades labelled where the values span one or more; within a decade, log labelled at
    1, 2 and 5 times a power of ten (or at each step 1-9) where two such ticks fall among the
    values; else linear (a log axis there would show no label at all)."""
    from matplotlib.ticker import FixedLocator, LogLocator, MaxNLocator, NullFormatter  # _pyplot ran

    low, high = min(values), max(values)
    scale = axis.axes.set_xscale if axis is axis.axes.xaxis else axis.axes.set_yscale
    if high >= 10 * low:
        scale("log")
        axis.set_major_locator(LogLocator(base=10, numticks=6))
        axis.set_minor_formatter(NullFormatter())
        return
    decades = range(math.floor(math.log10(low)), math.floor(math.log10(high)) + 1)
    for steps in ((1, 2, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [m * 10.0**k for k in decades for m in steps if low <= m * 10.0**k <= high]
        if len(ticks) >= 2:
            scale("log")
            axis.set_major_locator(FixedLocator(ticks))
            axis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())
            return
    axis.set_major_locator(MaxNLocator(nbins=4))


def _vocab_label(size: float, _=None) -> str:
    return f"{size / 1024:g}k" if size >= 1024 and size % 1024 == 0 else f"{size:,.0f}"


def _runs(found: list[Cell]) -> dict:
    """The cells of a sweep by learning run (the config without its coder): variants that differ
    only in their coder learned one dictionary, so they draw one line, named by the start their
    names share ("SuperBPE, -6 coder" and "SuperBPE, -9 coder" are "SuperBPE")."""
    runs: dict = {}
    for cell in found:
        config = dict(cell.rows[0].get("config") or {})
        config.pop("coder", None)
        runs.setdefault((cell.dataset, json.dumps(config, sort_keys=True)), []).append(cell)
    named: dict = {}
    for (dataset, _), members in runs.items():
        labels = list(dict.fromkeys(c.label for c in members))
        shared = labels[0]
        for other in labels[1:]:
            while not other.startswith(shared):
                shared = shared[:-1]
        label = shared.rstrip(" ,;:-(") if len(labels) > 1 and shared.strip(" ,;:-(") else " / ".join(labels)
        named.setdefault((dataset, label), []).extend(c for c in members if c.label == labels[0])
    return named


#: the sweep plot's panels beside the tokenizer metrics: the archive's bits per byte
_SWEEP_PANELS = tuple((c, h) for c, h, _, _ in TOKEN_TABLE if c != "vocab_used")


def plot_vocab_sweep(rows: list[dict], path: Path) -> list[Path]:
    """A figure per text (the studied dataset, each held-out text): each tokenizer metric
    against the vocabulary size, a panel per metric (and the archive's bits per byte on the
    studied text), a line per learning run. Written as ``path``'s stem plus ``_<text>``."""
    found = [c for c in cells(rows) if c.rows and c.vocab_size is not None and c.median("tokens") is not None]
    if not found:
        return []
    plt = _pyplot()
    runs = _runs(found)
    drawn = dict(zip(dict.fromkeys(label for _, label in runs), styles(len(runs)), strict=False))
    held = list(dict.fromkeys(name for c in found for r in c.rows for name in (r.get("held_out") or {})))
    sizes = sorted({c.vocab_size for c in found if c.vocab_size is not None})
    written = []
    for held_out in [None, *held]:
        panels = [*_SWEEP_PANELS, *([("bits_per_byte", "archive bits/byte")] if held_out is None else [])]
        for dataset in dict.fromkeys(c.dataset for c in found):
            columns = 3
            lines = -(-len(panels) // columns)
            fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns + 3, 3.2 * lines), squeeze=False,
                                     layout="constrained")
            for ax, (column, heading) in zip(axes.flat, panels, strict=False):
                for (trained, label), members in runs.items():
                    if trained != dataset:
                        continue
                    points = sorted((c.vocab_size, c.median(column, held_out)) for c in members
                                    if c.median(column, held_out) is not None)
                    if points:
                        style = drawn[label]
                        ax.plot(*zip(*points, strict=True), color=style.color, marker=style.marker, markersize=4,
                                markeredgecolor="black", markeredgewidth=0.3, linewidth=1, label=_label(label))
                ax.set_xscale("log", base=2)
                ax.set_xticks(sizes)  # the sizes the study used, and no others
                ax.xaxis.set_major_formatter(plt.FuncFormatter(_vocab_label))
                ax.xaxis.set_minor_formatter(plt.NullFormatter())
                ax.set_xlabel("vocabulary size")
                ax.set_title(heading, fontsize="medium")
                if column == "tokens":
                    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value:,.0f}"))
                ax.grid(True, alpha=0.3)
            for ax in list(axes.flat)[len(panels):]:
                ax.set_visible(False)
            text = dataset if held_out is None else held_out
            fig.suptitle(f"{_label(text, 40)}" + ("" if held_out is None else f" (held out; learned on {dataset})"))
            handles = [plt.Line2D([], [], marker=s.marker, color=s.color, markeredgecolor="black",
                                  markeredgewidth=0.4, label=_label(label)) for label, s in drawn.items()]
            fig.legend(handles=handles, fontsize="small", loc="outside right upper")
            name = f"{path.stem}_{text}" if held_out is None or len(dict.fromkeys(c.dataset for c in found)) == 1 \
                else f"{path.stem}_{text}_from_{dataset}"
            try:
                written += _save(fig, path.with_name(_file_name(name) + path.suffix))
            finally:
                plt.close(fig)
    return written


def _file_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
