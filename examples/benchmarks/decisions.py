"""What the level table's decision costs and buys: whole processes, warm numba cache, medians of
alternating runs, bzip3 and xz timed in the same run.

    .venv/bin/python examples/benchmarks/decisions.py [--corpus DIR] [--repeats 3] [--levels 1,...,9]

* no cliff at a megabyte: each level on the first 1,048,575 and 1,048,577 bytes of en_mix_10MB
  (sizes), and the CPU a byte there against en_mix_10MB's (the process's user + system time,
  less a 3-byte compress's at the level: start-up and the kernels' loading);
* files nobody tuned to, built from this machine's own (a log, JSON, man pages, prose, a tar of
  Python sources, a shared library, 2 MB of random bytes): the default level's size against
  xz -9's and bzip3's, and its compress time against bzip3's;
* ``-T0`` and ``-T 2`` against one process on a file of 8 MB or more: time and the same bytes.

Writes examples/benchmarks/decisions.md and prints it.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import io
import lzma
import os
import platform
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
CLI = [sys.executable, "-m", "chunkpress.cli"]
BZ3 = "import sys, bz3; open(sys.argv[2], 'wb').write(bz3.compress(open(sys.argv[1], 'rb').read(), 16 << 20))"


def run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, user + system CPU seconds) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-500:]}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def medians(commands: list[list[str]], repeats: int) -> list[tuple[float, float]]:
    """Median (wall, CPU) of each command, the commands run in turn, each repeat starting one
    later, so that no command always runs first (or always right after another)."""
    got: list[list] = [[] for _ in commands]
    for r in range(repeats):
        for step in range(len(commands)):
            k = (r + step) % len(commands)
            got[k].append(run(commands[k]))
    return [(statistics.median(w for w, _ in g), statistics.median(c for _, c in g)) for g in got]


def machine_files(folder: Path) -> dict[str, Path]:
    """Files of kinds a user compresses, from this machine (none of them tuned to)."""
    made = {}

    def put(name: str, data: bytes) -> None:
        if data:
            (folder / name).write_bytes(data)
            made[name] = folder / name

    pages = sorted(glob.glob("/usr/share/man/man1/*.gz"))[:400]
    put("man pages (English)", b"".join(gzip.open(p).read() for p in pages)[:2_000_000])
    logs = b"".join(Path(p).read_bytes() for p in ("/var/log/dpkg.log", "/var/log/apt/history.log",
                                                   "/var/log/apt/term.log", "/var/log/alternatives.log")
                    if os.path.exists(p))
    put("log", logs[:800_000])
    site = Path(os.__file__).parent
    put("JSON", b"\n".join(Path(p).read_bytes() for p in sorted(glob.glob(f"{sys.prefix}/lib/**/*.json",
                                                                            recursive=True)))[:1_500_000])
    prose = HERE.parents[1] / "tests" / "data" / "alice29.txt"
    put("prose (alice29 x2)", prose.read_bytes() * 2)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for p in sorted(site.glob("*.py"))[:150]:
            t.add(p, arcname=p.name)
    put("tar of Python sources", buf.getvalue()[:3_000_000])
    libraries = [p for p in sorted(glob.glob(f"{sys.prefix}/lib/**/*.so", recursive=True))
                 if 500_000 < os.path.getsize(p) < 4_000_000]
    if libraries:
        put("shared library", Path(libraries[0]).read_bytes())
    put("random bytes (2 MB)", os.urandom(2_000_000))
    return made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "data"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--levels", default="1,2,3,4,5,6,7,8,9")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    big = (Path(a.corpus) / "en_mix_10MB.txt").read_bytes()
    lines = ["# The level table's decisions", "",
             f"Written by `examples/benchmarks/decisions.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
             f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, warm numba cache, "
             f"medians of {a.repeats} alternating runs; CPU is the process's user + system time.", "",
             "## No cliff at a megabyte", "",
             "| level | 1,048,575 B → | 1,048,577 B → | larger by | CPU µs/B at 1 MB | at 10 MB | × |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        under, over, whole, tiny = tmp / "under.txt", tmp / "over.txt", tmp / "whole.txt", tmp / "tiny.txt"
        under.write_bytes(big[: (1 << 20) - 1])
        over.write_bytes(big[: (1 << 20) + 1])
        whole.write_bytes(big)
        tiny.write_bytes(big[:3])
        for level in levels:
            out = {p: tmp / f"{p.stem}.{level}.cpz" for p in (under, over, whole, tiny)}
            cmds = [[*CLI, f"-{level}", "-q", "-f", "-o", str(out[p]), str(p)] for p in (under, over, whole, tiny)]
            (_, cpu_under), _, (_, cpu_whole), (_, cpu_tiny) = medians(cmds, a.repeats)
            small, large = out[under].stat().st_size, out[over].stat().st_size
            per_under = 1e6 * (cpu_under - cpu_tiny) / len(under.read_bytes())
            per_whole = 1e6 * (cpu_whole - cpu_tiny) / len(big)
            lines.append(f"| -{level} | {small:,} | {large:,} | {100 * (large / small - 1):+.2f}% | {per_under:.2f} | "
                         f"{per_whole:.2f} | {per_under / per_whole:.2f} |")
            print(lines[-1], file=sys.stderr, flush=True)
        lines += ["", "## Files nobody tuned to, at the default level", "",
                  "| file | bytes | default | xz -9 | bzip3 | ≤ xz -9 | compress s | bzip3's | ≤ 3× + 0.5 s |",
                  "|---|---:|---:|---:|---:|---|---:|---:|---|"]
        for name, path in machine_files(tmp).items():
            data = path.read_bytes()
            ours, theirs = tmp / "ours.cpz", tmp / "theirs.bz3"
            (c, _), (b, _) = medians([[*CLI, "-q", "-f", "-o", str(ours), str(path)],
                                      [sys.executable, "-c", BZ3, str(path), str(theirs)]], a.repeats)
            n, x, z = ours.stat().st_size, len(lzma.compress(data, preset=9)), theirs.stat().st_size
            bound = 2 * b + 0.5 if name.startswith("random") else 3 * b + 0.5
            lines.append(f"| {name} | {len(data):,} | {n:,} | {x:,} | {z:,} | {'yes' if n <= x else 'NO'} | {c:.2f} | "
                         f"{b:.2f} | {'yes' if c <= bound else 'NO'} ({bound:.2f}) |")
            print(lines[-1], file=sys.stderr, flush=True)
        lines += ["", "## Workers on a file of 8 MB or more", "", "| level | run | seconds | same bytes |", "|---|---|---:|---|"]
        for level in (1, 5):
            outs = {t: tmp / f"t{t}.cpz" for t in ("1", "0", "2")}
            times = medians([[*CLI, f"-{level}", "-q", "-f", "-T", t, "-o", str(outs[t]), str(whole)] for t in outs],
                            a.repeats)
            for (t, path), (wall, _) in zip(outs.items(), times, strict=True):
                same = path.read_bytes() == outs["1"].read_bytes()
                lines.append(f"| -{level} | -T {t} | {wall:.2f} | {same} |")
                print(lines[-1], file=sys.stderr, flush=True)
    lines.append(f"\nPeak RSS of this script's children: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10} MB.")
    text = "\n".join(lines) + "\n"
    (HERE / "decisions.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
