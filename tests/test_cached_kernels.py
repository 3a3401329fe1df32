"""The chunkpress program loads cached kernels without numba's registries (what a compile needs,
most of a warm start): the same archives, first-class scorer functions still typed, a compile
still possible, and a library import left as numba made it."""

import subprocess
import sys

import chunkpress
import pytest
from support import read

TEXT = read("alice29.txt")[:40_000]

# the program as the console script runs it, counting numba's registry refreshes
PROGRAM = """
import sys
import numba.core.base as base
full = base.BaseContext.refresh
seen = [0]
def refresh(self):
    seen[0] += 1
    return full(self)
base.BaseContext.refresh = refresh
import atexit
atexit.register(lambda: print("refreshes", seen[0], file=sys.stderr))
from chunkpress.cli import entry
sys.argv = ["chunkpress", *sys.argv[1:]]
entry()
"""


def _program(*args) -> tuple[bytes, int]:
    done = subprocess.run([sys.executable, "-c", PROGRAM, *args], capture_output=True, check=True)
    refreshes = int(done.stderr.decode().split("refreshes")[-1].split()[0])
    return done.stdout, refreshes


@pytest.mark.slow
@pytest.mark.parametrize("level", [5, 2])  # bwt-cm; a learner whose scorer is a cfunc argument
def test_the_program_loads_cached_kernels_without_the_registries_and_writes_the_same_archive(tmp_path, level):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    _program(f"-{level}", "-q", "-c", str(source))  # the kernels are in the cache from here on
    archive, refreshes = _program(f"-{level}", "-q", "-c", str(source))
    assert refreshes == 0
    assert archive == chunkpress.compress(TEXT, level=level)
    (tmp_path / "in.cpz").write_bytes(archive)
    back, refreshes = _program("-d", "-q", "-c", str(tmp_path / "in.cpz"))
    assert back == TEXT and refreshes == 0


@pytest.mark.slow
def test_a_library_import_keeps_numba_s_own_cache_loads():
    done = subprocess.run([sys.executable, "-c", "import chunkpress, numba.core.caching as c; "
                           "print(getattr(c.Cache.load_overload, 'light', False))"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
