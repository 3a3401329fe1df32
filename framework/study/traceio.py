"""Trace tables as CSV, with the reference program's column names first."""

from __future__ import annotations

import io

import numpy as np


def trace_to_csv(trace: np.ndarray) -> str:
    """CSV text: the reference columns (loss to 2 decimals) then N and seconds."""
    out = io.StringIO()
    names = trace.dtype.names or ()
    out.write(",".join(names) + "\n")
    for row in trace.tolist():
        cells = []
        for name, value in zip(names, row, strict=False):
            if name == "loss":
                cells.append("nan" if value != value else f"{value:.2f}")
            elif name == "seconds":
                cells.append(f"{value:.4f}")
            else:
                cells.append(str(value))
        out.write(",".join(cells) + "\n")
    return out.getvalue()


def read_trace_csv(path) -> np.ndarray:
    """A trace CSV (ours or the reference program's) as a structured array."""
    return np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
