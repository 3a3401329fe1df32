"""Timing whole processes, as a user runs them: wall time and peak RSS (GNU time's maximum
resident set, which covers the process and the workers it waits for)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def median_of(function, repeats: int = 3) -> float:
    """The median wall seconds of ``repeats`` calls of ``function`` in this process."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return sorted(times)[repeats // 2]


def timed(cmd: list[str], stdout=None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in bytes, the process's stderr) of ``cmd``; exits if it fails."""
    t = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=stdout, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    lines = proc.stderr.strip().splitlines()
    return seconds, int(lines[-1]) * 1024, "\n".join(lines[:-1])


def run(cmd: list[str], stdout=None) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of one process (``wait4``); raises if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()}")
    return wall, usage.ru_maxrss // 1024


#: the command line as a user runs it, in this interpreter
CHUNKPRESS = [sys.executable, "-m", "chunkpress.cli"]


def round_trip(flags: list[str], src: Path, archive: Path, back: Path) -> tuple[list[str], list[str]]:
    """(compress argv, decompress argv): ``src`` compressed with ``flags`` into ``archive``, and
    ``archive`` decompressed into ``back``, quietly, overwriting."""
    return ([*CHUNKPRESS, "compress", *flags, str(src), "-o", str(archive), "-f", "-q"],
            [*CHUNKPRESS, "decompress", str(archive), "-o", str(back), "-f", "-q"])


def medians(commands: list[list[str]], repeats: int) -> list[float]:
    """Median wall seconds of each command, the commands run in turn ``repeats`` times, so that a
    slow spell of the machine hits them all."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(repeats):
        for k, cmd in enumerate(commands):
            times[k].append(run(cmd)[0])
    return [statistics.median(t) for t in times]


# peers that live in Python packages run through these one-line programs (argv: in out)
ZPAQ_C = "import sys, zpaq; open(sys.argv[2], 'wb').write(zpaq.compress(open(sys.argv[1], 'rb').read(), level=5, threads=1))"
ZPAQ_D = "import sys, zpaq; open(sys.argv[2], 'wb').write(zpaq.decompress(open(sys.argv[1], 'rb').read()))"
PPMD_C = ("import sys, pyppmd; d = open(sys.argv[1], 'rb').read(); e = pyppmd.Ppmd8Encoder(8, 256 << 20); "
          "open(sys.argv[2], 'wb').write(len(d).to_bytes(8, 'little') + e.encode(d) + e.flush(endmark=False))")
PPMD_D = ("import sys, pyppmd; c = open(sys.argv[1], 'rb').read(); "
          "open(sys.argv[2], 'wb').write(pyppmd.Ppmd8Decoder(8, 256 << 20).decode(c[8:], int.from_bytes(c[:8], 'little')))")

BZ3_C = "import sys, bz3; open(sys.argv[2], 'wb').write(bz3.compress(open(sys.argv[1], 'rb').read(), 16 << 20))"
BZ3_D = "import sys, bz3; open(sys.argv[2], 'wb').write(bz3.decompress(open(sys.argv[1], 'rb').read()))"


def peers(src: Path, tmp: Path, tools=(("xz", "-9e", "xz"), ("xz", "-9", "xz9"), ("zstd", "-19", "zst"), ("zstd", "-3", "zst3"),
                                        ("bzip3", "-b 16", "bz3"))) -> list[tuple[str, list, list, Path]]:
    """(name, compress argv, decompress argv, archive path) of the peers installed here: zpaq -m5
    and PPMd order 8 (Python packages), the command-line ``tools`` found on PATH, and bzip3
    through its Python package (``bz3.compress(data, 16 << 20)``, one thread) where its command
    is not installed."""
    out = []
    py = sys.executable
    try:
        import zpaq  # noqa: F401

        out.append(("zpaq -m5 (libzpaq, 1 thread)", [py, "-c", ZPAQ_C, str(src), str(tmp / "z.zpaq")],
                    [py, "-c", ZPAQ_D, str(tmp / "z.zpaq"), str(tmp / "z.out")], tmp / "z.zpaq"))
    except ImportError:
        pass
    out.append(("PPMd var. I order 8, 256 MB (pyppmd)", [py, "-c", PPMD_C, str(src), str(tmp / "p.ppmd")],
                [py, "-c", PPMD_D, str(tmp / "p.ppmd"), str(tmp / "p.out")], tmp / "p.ppmd"))
    for tool, level, ext in tools:
        if shutil.which(tool):
            archive = tmp / f"t.{ext}"
            comp = ["sh", "-c", f"{tool} {level} -c < '{src}' > '{archive}'"]
            dec = ["sh", "-c", f"{tool} -d -c < '{archive}' > '{tmp / ('t.' + ext + '.out')}'"]
            out.append((f"{tool} {level}", comp, dec, archive))
    if not shutil.which("bzip3"):
        try:
            import bz3  # noqa: F401

            out.append(("bzip3 -b 16 (bz3 package, 1 thread)", [py, "-c", BZ3_C, str(src), str(tmp / "b.bz3")],
                        [py, "-c", BZ3_D, str(tmp / "b.bz3"), str(tmp / "b.out")], tmp / "b.bz3"))
        except ImportError:
            pass
    return out
