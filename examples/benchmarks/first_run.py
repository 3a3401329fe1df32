"""A new user's first run: the README's first command on a fresh clone, and whole commands on an
empty numba cache (cold) and a filled one (warm), medians of alternating runs.

    .venv/bin/python examples/benchmarks/first_run.py [--repeats 3] [--skip-clone]

* the README's first command (install, compress alice29, inspect) in a fresh clone of this
  repository with an empty ``NUMBA_CACHE_DIR``; the compress alone, timed inside it;
* cold: the default compress of alice29, ``-d`` of a -5 and a -9 archive, -9 of alice29, each
  with a new empty cache; where the kernels' compile goes (numba's compile events: each
  kernel's own seconds, and LLVM's share);
* warm: a 3-byte compress against ``python -c "import numba"``.

Writes examples/benchmarks/first_run.md and prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
ALICE = ROOT / "tests" / "data" / "alice29.txt"
CLI = [sys.executable, "-m", "chunkpress.cli"]
#: the issue's bounds, in seconds (the README's command and each cold command)
BOUNDS = {"readme": 30, "compress": 10, "d5": 5, "d9": 15, "c9": 30}
#: a warm 3-byte compress against importing numba
STARTUP_BOUND = 1.8


def timed(cmd, env=None, cwd=None, shell=False) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, shell=shell, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def readme_command() -> str:
    """The README's first set-up command, as the README writes it."""
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(python3 -m venv .venv[^\n]*)\n```", text)[0]


def fresh_clone_runs(repeats: int) -> tuple[list[float], list[float]]:
    """(the whole README command, its compress alone) in fresh clones, empty caches."""
    whole, compress = [], []
    command = readme_command()
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            clone = Path(tmp) / "chunkpress"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
            env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"))
            env.pop("VIRTUAL_ENV", None)
            # the compress inside the command, timed by the shell that runs it
            timing = command.replace(".venv/bin/chunkpress compress",
                                     "/usr/bin/time -f %e -o compress.s .venv/bin/chunkpress compress")
            whole.append(timed(timing, env=env, cwd=clone, shell=True))
            compress.append(float((clone / "compress.s").read_text().split()[-1]))
    return whole, compress


def cold(cmd: list[str], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            times.append(timed(cmd, env=dict(os.environ, NUMBA_CACHE_DIR=cache)))
    return times


def compile_breakdown(args: list[str]) -> list[str]:
    """Each kernel's own compile seconds (nested compiles taken out) and LLVM's share, from
    numba's compile events, for one cold command."""
    probe = f"""
import sys, time, collections
from numba.core import event
own, stack, llvm = collections.Counter(), [], [0.0]
class Listen(event.Listener):
    def on_start(self, ev):
        stack.append([ev.data["dispatcher"].py_func.__qualname__, time.perf_counter(), 0.0])
    def on_end(self, ev):
        name, t0, child = stack.pop()
        dt = time.perf_counter() - t0
        own[name] += dt - child
        if stack:
            stack[-1][2] += dt
event.register("numba:compile", Listen())
with event.install_timer("numba:llvm_lock", lambda dt: llvm.__setitem__(0, llvm[0] + dt)):
    from chunkpress.cli import main
    main({args!r})
print(f"total {{sum(own.values()):.1f}} llvm {{llvm[0]:.1f}}")
for name, s in own.most_common(6):
    print(f"{{name}} {{s:.1f}}")
"""
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, NUMBA_CACHE_DIR=cache),
                             capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-clone", action="store_true", help="leave out the fresh clones")
    ap.add_argument("--clone-only", action="store_true", help="the fresh clones alone (the README's first command); "
                    "the other rows of first_run.md are kept")
    a = ap.parse_args()
    med = statistics.median
    lines = ["# The first run", "",
             f"Written by `examples/benchmarks/first_run.py` on {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
             f"{os.cpu_count()} cores, Python {platform.python_version()}. Whole processes, medians of {a.repeats} "
             "(each cold run with a new empty `NUMBA_CACHE_DIR`).", "",
             "| run | seconds (median) | runs | bound |", "|---|---:|---|---:|"]

    def row(label, times, bound=None):
        met = "" if bound is None else f"{bound} {'met' if med(times) <= bound else 'MISSED'}"
        lines.append(f"| {label} | {med(times):.1f} | {', '.join(f'{t:.1f}' for t in times)} | {met} |")
        print(lines[-1], file=sys.stderr, flush=True)

    if not a.skip_clone:
        whole, compress = fresh_clone_runs(a.repeats)
        row("the README's first command, fresh clone (install, compress, inspect)", whole, BOUNDS["readme"])
        row("its compress of alice29 (the default level)", compress, BOUNDS["compress"])
    if a.clone_only:  # the two rows replace theirs in the file; the rest stays as measured before
        old = (HERE / "first_run.md").read_text().splitlines()
        kept = [line for line in old if not line.startswith(("| the README's first command", "| its compress"))]
        at = next(k for k, line in enumerate(kept) if line.startswith("|---|"))
        text = "\n".join(kept[:at + 1] + lines[-2:] + kept[at + 1:]) + "\n"
        (HERE / "first_run.md").write_text(text)
        print(text)
        return
    with tempfile.TemporaryDirectory() as tmp:
        a5, a9 = Path(tmp) / "a5.cpz", Path(tmp) / "a9.cpz"
        subprocess.run([*CLI, "-5", "-q", "-c", str(ALICE)], stdout=a5.open("wb"), check=True)
        subprocess.run([*CLI, "-9", "-q", "-c", str(ALICE)], stdout=a9.open("wb"), check=True)
        runs = {"compress": ([*CLI, "-q", "-c", str(ALICE)], "cold: compress alice29 at the default level"),
                "d5": ([*CLI, "-d", "-q", "-c", str(a5)], "cold: `-d` of a -5 archive"),
                "d9": ([*CLI, "-d", "-q", "-c", str(a9)], "cold: `-d` of a -9 archive"),
                "c9": ([*CLI, "-9", "-q", "-c", str(ALICE)], "cold: `-9` of alice29")}
        for key, (cmd, label) in runs.items():
            row(label, cold(cmd, a.repeats), BOUNDS[key])
        tiny = Path(tmp) / "tiny.txt"
        tiny.write_bytes(b"abc")
        numba_s, tiny_s = [], []
        timed([*CLI, "-q", "-c", str(tiny)])
        for _ in range(a.repeats + 2):
            numba_s.append(timed([sys.executable, "-c", "import numba"]))
            tiny_s.append(timed([*CLI, "-q", "-c", str(tiny)]))
        row('warm: `python -c "import numba"`', numba_s)
        row(f"warm: compress of 3 bytes ({med(tiny_s) / med(numba_s):.2f}x import numba, bound "
            f"{STARTUP_BOUND}x {'met' if med(tiny_s) <= STARTUP_BOUND * med(numba_s) else 'MISSED'})", tiny_s)
        lines += ["", "Where a cold command's compile goes (seconds of each kernel's own compile, nested ones "
                  "taken out; LLVM's share of the total):", ""]
        for label, args in (("-9 of alice29", ["-9", "-q", "-f", "-o", os.devnull, str(ALICE)]),
                            ("-d of a -9 archive", ["-d", "-q", "-f", "-o", os.devnull, str(a9)]),
                            ("-5 of alice29", ["-5", "-q", "-f", "-o", os.devnull, str(ALICE)])):
            found = compile_breakdown(args)
            lines.append(f"- {label}: {found[0]}; most: " + ", ".join(found[1:]))
            print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    (HERE / "first_run.md").write_text(text)
    print(text)
    shutil.rmtree(HERE / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
