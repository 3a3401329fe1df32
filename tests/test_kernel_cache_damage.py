"""numba's kernel cache is a disposable copy: a cache file cut short, emptied, garbled or with a
bit flipped is compiled again, with one line on stderr, and the program's results are those of
a clean cache (never an error blamed on the user's data)."""

import os
import subprocess
import sys

import pytest
from support import read

#: a kernel of its own in a module of its own, cached as every chunkpress kernel is
MODULE = '''
import numba, numpy as np

@numba.njit(cache=True)
def checksum(a):
    total = np.int64(0)
    for k in range(a.size):
        total = total * 31 + a[k]
    return total
'''

PROGRAM = "import chunkpress, numpy as np, kernelmod; print(kernelmod.checksum(np.arange(1000, dtype=np.int64)))"


def _damage(folder, how: str, suffix: str) -> int:
    """Damage every cache file of ``suffix`` under ``folder``; how many there were."""
    damaged = 0
    for root, _, names in os.walk(folder):
        for name in names:
            if not name.endswith(suffix):
                continue
            path = os.path.join(root, name)
            data = bytearray(open(path, "rb").read())
            if how == "truncated":
                data = data[: len(data) // 2]
            elif how == "emptied":
                data = bytearray()
            elif how == "garbled":
                data[len(data) // 3: len(data) // 3 + 64] = os.urandom(64)
            else:  # one bit flipped in the middle: what a bad sync leaves
                data[len(data) // 2] ^= 0x10
            open(path, "wb").write(bytes(data))
            damaged += 1
    return damaged


def _run(tmp_path, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(tmp_path))
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("suffix", [".nbc", ".nbi"])
@pytest.mark.parametrize("how", ["truncated", "emptied", "garbled", "bit-flipped"])
def test_a_damaged_cache_file_is_compiled_again_with_one_line(tmp_path, how, suffix):
    (tmp_path / "kernelmod.py").write_text(MODULE)
    cache = tmp_path / "cache"
    clean = _run(tmp_path, cache)
    assert clean.returncode == 0 and clean.stderr == ""
    assert _damage(cache, how, suffix) >= 1
    again = _run(tmp_path, cache)
    assert again.returncode == 0, again.stderr
    assert again.stdout == clean.stdout
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1 and "cache" in lines[0] and "compiling" in lines[0], again.stderr
    healed = _run(tmp_path, cache)  # the rebuild rewrote the files: quiet again
    assert healed.returncode == 0 and healed.stdout == clean.stdout and healed.stderr == ""


@pytest.mark.slow
def test_a_damaged_cache_gives_the_same_archive_and_the_archive_s_bytes_not_a_format_error(tmp_path):
    """The reported case: a cache whose data files were emptied after a first run, then the
    same compression and ``-d`` of the good archive: exit 0, the same archive, the original
    bytes, one stderr line each (-5: its block sorting's coder is a cached kernel both ways)."""
    text = read("alice29.txt")[:60_000]
    source = tmp_path / "in.txt"
    source.write_bytes(text)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    program = [sys.executable, "-m", "chunkpress.cli"]

    def run(*args):
        return subprocess.run([*program, *args], env=env, capture_output=True, timeout=600)

    first = run("-5", "-q", "-c", str(source))
    (tmp_path / "in.cpz").write_bytes(first.stdout)
    assert run("-d", "-q", "-c", str(tmp_path / "in.cpz")).stdout == text  # the decoder's kernels cached too
    for args, expected in ((("-5", "-q", "-c", str(source)), first.stdout),
                           (("-d", "-q", "-c", str(tmp_path / "in.cpz")), text)):
        assert _damage(tmp_path / "cache", "emptied", ".nbc") >= 1
        done = run(*args)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected
        assert len(done.stderr.decode().strip().splitlines()) == 1, done.stderr


def test_a_cache_file_without_a_trailer_reads_as_before():
    """Files numba wrote without this module carry no digest: their content is taken whole."""
    from chunkpress.engine.cachefiles import DamagedCacheFile, verified, with_trailer

    content = b"\x80\x04K\x01."  # pickle of 1
    assert verified(content) == content
    assert verified(with_trailer(content)) == content
    flipped = bytearray(with_trailer(content))
    flipped[2] ^= 1
    with pytest.raises(DamagedCacheFile):
        verified(bytes(flipped))
