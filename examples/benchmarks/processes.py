"""Timing whole processes, as a user runs them: wall time and peak RSS (GNU time's maximum
resident set, which covers the process and the workers it waits for)."""

from __future__ import annotations

import subprocess
import time


def timed(cmd: list[str], stdout=None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in bytes, the process's stderr) of ``cmd``; exits if it fails."""
    t = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=stdout, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    lines = proc.stderr.strip().splitlines()
    return seconds, int(lines[-1]) * 1024, "\n".join(lines[:-1])
