"""Where a row ran and with what: the machine and the installed versions, recorded in every row
so that a published figure says what produced it."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version

from ..plugin.registry import ROLES, Registry
from ..version import __version__

#: the libraries whose versions change what a row measures
LIBRARIES = ("numpy", "numba", "zstandard")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    if platform.system() == "Darwin":
        try:
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                  text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine()


@functools.cache
def machine() -> dict:
    """CPU model, cores the process may use, OS and Python."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 0
    return {"cpu": _cpu_model(), "cores": cores, "os": platform.platform(),
            "python": f"{platform.python_implementation()} {platform.python_version()}"}


def versions(registry: Registry, config) -> dict:
    """chunkpress's and the libraries' versions, and for each of the config's plugins the
    installed distribution that provides it and that distribution's version."""
    out: dict = {"chunkpress": __version__}
    for package in LIBRARIES:
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    for role in ROLES:
        name = config.name_of(role)
        out[f"{role}:{name}"] = registry.distribution(role, name)
    return out
