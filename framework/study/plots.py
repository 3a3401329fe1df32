"""Plots of learning traces (matplotlib, imported on use; ``pip install chunkpress[plots]``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..engine.codelength import PART_NAMES

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
