"""Plots of learning traces and study results (matplotlib, imported on use; ``pip install chunkpress[plots]``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..engine.codelength import PART_NAMES
from .display import display_name

_LABELS = {"m_bits": "dictionary size", "rules_bits": "rules", "n_bits": "string length",
           "counts_bits": "symbol counts", "string_bits": "string"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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


def plot_factors(rows: list[dict], path: Path) -> None:
    """Grouped bars: compression factor of each variant on each dataset."""
    plt = _pyplot()
    ok = [r for r in rows if not r["error"]]
    datasets = list(dict.fromkeys(r["dataset"] for r in ok))
    variants = list(dict.fromkeys(r["variant"] for r in ok))
    if not ok:
        return
    fig, ax = plt.subplots(figsize=(min(14, 4 + 0.6 * len(variants) * len(datasets)), 4))
    width = 0.8 / max(len(variants), 1)
    for i, v in enumerate(variants):
        ys = []
        for d in datasets:
            vals = [r["factor"] for r in ok if r["dataset"] == d and r["variant"] == v
                    and isinstance(r["factor"], (int, float)) and not isinstance(r["factor"], bool)]
            ys.append(sum(vals) / len(vals) if vals else 0)
        ax.bar([j + i * width for j in range(len(datasets))], ys, width, label=display_name(v))
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(datasets))], [display_name(d, 30) for d in datasets])
    ax.set_ylabel("compression factor (original / archive)")
    ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
