"""The hostile-input corpus (tests/hostile/cases.py), each case a process under memory and
time caps: a one-line error, the expected exit status, no signal, no output left behind."""

import json
import os
import resource
import subprocess
import sys

import pytest

from hostile.cases import cases, write

CASES = cases()
MEMORY_LIMIT = 10**9
#: address-space cap of each process: the limit, plus what Python, numpy and numba map at start
ADDRESS_SPACE = MEMORY_LIMIT + (3 << 30)


def _cap():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(tmp_path, name):
    write(tmp_path)
    folder = tmp_path / name
    case = json.loads((folder / "case.json").read_text())
    env = dict(os.environ, CHUNKPRESS_MAX_MEMORY=str(MEMORY_LIMIT))
    proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", *case["command"]], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120, preexec_fn=_cap)
    assert proc.returncode == case["exit"], proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chunkpress: error: "), proc.stderr
    assert not (folder / "out").exists()
    assert not [p for p in folder.iterdir() if p.name.endswith(".part")]
