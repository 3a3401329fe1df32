"""Compression levels -1 ... -9 and the default: size, compress and decompress time, peak RSS,
each a whole `chunkpress` process (warm numba cache), with zpaq -m5, PPMd order 8, xz, zstd and
bzip3 in the same run; sizes of every level on the other corpora, to check that no level is
larger than the one below; a size-against-time plot (PNG and SVG) of levels and peers; and, as
one run on a shared machine varies by 10-30%, medians of alternating runs for the three claims
that rest on time (-5 against bzip3, -6 within 3x PPMd's time, -9 no slower than zpaq -m5).

    .venv/bin/python examples/benchmarks/levels.py [--corpus DIR] [--quick]

Writes examples/benchmarks/levels.md, levels.png and levels.svg, and prints the table.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from chunkpress.levels import DEFAULT_LEVEL, LEVELS
from processes import CHUNKPRESS, medians, peers, round_trip, run

HERE = Path(__file__).parent
#: the corpora whose sizes must not grow from one level to the next (en_mix_10MB: strictly fall)
OTHERS = ("en_mix_1MB.txt", "alice29.txt", "udhr_arb.txt", "udhr_cmn_hans.txt")
#: (level, peer) pairs timed again in alternating runs, and how many
ALTERNATING = ((5, "bzip3"), (6, "PPMd"), (9, "zpaq"))
REPEATS = 3


def describe(level: int) -> str:
    raw = LEVELS[level].pipeline
    coder = raw["coder"]
    params = ", ".join(f"{k}={v}" for k, v in coder["params"].items())
    limits = raw.get("limits", {})
    if limits.get("max_rules") == 0:
        return f"no dictionary, the bytes + {coder['name']} ({params})"
    return (f"{raw['scorer']['name']}, {raw['pretokenizer']['name']} pre-tokens, {limits.get('max_rules')} rules"
            f"{', min_count ' + str(limits['min_count']) if 'min_count' in limits else ''} + {coder['name']} ({params})")


def level_flag(level) -> list[str]:
    return [] if level is None else [f"-{level}"]


def level_commands(src: Path, tmp: Path, level) -> tuple[list[str], list[str], Path, Path]:
    """(compress argv, decompress argv, archive, decoded file) of a level on ``src``."""
    archive, back = tmp / "a.cpz", tmp / "back"
    return (*round_trip(level_flag(level), src, archive, back), archive, back)


def measure(src: Path, tmp: Path, level) -> tuple[int, float, float, int, bool]:
    comp, dec, archive, back = level_commands(src, tmp, level)
    c_s, c_mb = run(comp)
    d_s, d_mb = run(dec)
    return archive.stat().st_size, c_s, d_s, max(c_mb, d_mb), back.read_bytes() == src.read_bytes()


def alternating(src: Path, tmp: Path, level: int, peer: tuple, repeats: int) -> list[float]:
    """Medians of (our compress, our decompress, the peer's compress, its decompress), the four
    run one after the other ``repeats`` times."""
    comp, dec, _, _ = level_commands(src, tmp, level)
    return medians([comp, dec, peer[1], peer[2]], repeats)


def plot(rows: list, size: int, out: Path) -> None:
    """Size against compress time, levels joined in order, peers as labelled points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    levels = [r for r in rows if r[0].startswith("-")]
    ax.plot([r[3] for r in levels], [8 * r[2] / size for r in levels], "o-", color="tab:blue", label="chunkpress -1 ... -9")
    for r in levels:
        ax.annotate(r[0], (r[3], 8 * r[2] / size), textcoords="offset points", xytext=(4, 4), fontsize=8)
    for r in rows:
        if r[0] == "default":
            ax.plot(r[3], 8 * r[2] / size, "*", color="tab:blue", markersize=12, label=f"chunkpress (default, -{DEFAULT_LEVEL})")
        elif not r[0].startswith("-"):
            ax.plot(r[3], 8 * r[2] / size, "s", color="tab:gray")
            ax.annotate(r[0].split(" (")[0], (r[3], 8 * r[2] / size), textcoords="offset points", xytext=(4, -10),
                        fontsize=8, color="dimgray")
    ax.set_xscale("log")
    ax.set_xlabel("compress time, s (whole process, log scale)")
    ax.set_ylabel("bits per byte")
    ax.set_title("en_mix_10MB: size against time")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out.with_suffix(f".{ext}"), dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    ap.add_argument("--quick", action="store_true", help="en_mix_1MB instead of en_mix_10MB, no other corpora")
    a = ap.parse_args()
    corpus = Path(a.corpus)
    src = corpus / ("en_mix_1MB.txt" if a.quick else "en_mix_10MB.txt")
    size = src.stat().st_size
    rows = []
    sizes: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        warm = tmp / "warm.txt"
        warm.write_bytes(src.read_bytes()[:20_000])
        for level in range(1, 10):  # compile every kernel once: timings are of warm runs
            measure(warm, tmp, level)
        for name, comp, dec, path in peers(src, tmp):
            c_s, c_mb = run(comp)
            d_s, d_mb = run(dec)
            rows.append((name, "", path.stat().st_size, c_s, d_s, max(c_mb, d_mb), True))
            print(rows[-1], file=sys.stderr, flush=True)
        for level in [None, *range(1, 10)]:
            n, c_s, d_s, mb, same = measure(src, tmp, level)
            rows.append(("default" if level is None else f"-{level}",
                         f"= -{DEFAULT_LEVEL}" if level is None else describe(level), n, c_s, d_s, mb, same))
            print(rows[-1], file=sys.stderr, flush=True)
        medians = []
        for level, peer_name in () if a.quick else ALTERNATING:
            peer = next(p for p in peers(src, tmp) if p[0].startswith(peer_name))
            medians.append((level, peer[0], alternating(src, tmp, level, peer, REPEATS)))
            print(medians[-1], file=sys.stderr, flush=True)
        for name in () if a.quick else OTHERS:
            sizes[name] = []
            for level in range(1, 10):
                archive = tmp / "o.cpz"
                run([*CHUNKPRESS, "compress", f"-{level}", str(corpus / name), "-o", str(archive), "-f", "-q"])
                sizes[name].append(archive.stat().st_size)
            print(name, sizes[name], file=sys.stderr, flush=True)
    lines = [
        f"# Compression levels on {src.name}",
        "",
        f"Written by `examples/benchmarks/levels.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache, same run; "
        f"input {size:,} bytes; peak RSS is the larger of the two processes'.",
        "",
        "| level | pipeline | archive bytes | bits/byte | compress s | decompress s | peak RSS MB | round trip |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, what, n, c_s, d_s, mb, same in sorted(rows, key=lambda r: -r[2]):
        lines.append(f"| {name} | {what} | {n:,} | {8 * n / size:.3f} | {c_s:.1f} | {d_s:.1f} | {mb:,} "
                     f"| {'exact' if same else 'DIFFERS'} |")
    ours = [r[2] for r in rows if r[0].startswith("-")]
    lines += ["", f"Sizes fall strictly from -1 to -9: {all(b < a for a, b in zip(ours, ours[1:], strict=False))}."]
    if sizes:
        lines += ["", "Archive bytes of every level on the other corpora (no level may be larger than the one below):", "",
                  "| corpus | " + " | ".join(f"-{n}" for n in range(1, 10)) + " | never larger |",
                  "|---|" + "---:|" * 9 + "---|"]
        for name, values in sizes.items():
            ok = all(b <= a for a, b in zip(values, values[1:], strict=False))
            lines.append(f"| {name} | " + " | ".join(f"{v:,}" for v in values) + f" | {ok} |")
    if medians:
        lines += ["", f"Medians of {REPEATS} alternating runs (level, peer, level, peer, ...), same run:", "",
                  "| level | peer | compress s | peer's | ratio | decompress s | peer's | ratio |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
        for level, peer_name, (c, d, pc, pd) in medians:
            lines.append(f"| -{level} | {peer_name} | {c:.2f} | {pc:.2f} | {c / pc:.2f}x | {d:.2f} | {pd:.2f} | {d / pd:.2f}x |")
    text = "\n".join(lines) + "\n"
    (HERE / "levels.md").write_text(text)
    plot(rows, size, HERE / "levels.png")
    print(text)


if __name__ == "__main__":
    main()
