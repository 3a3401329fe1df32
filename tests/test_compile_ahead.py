"""Compiling a coder's loop ahead, in a helper process, while a first run does its other work."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import chunkpress
import pytest
from chunkpress.compile_helper import PARENT_POLL_SECONDS
from chunkpress.engine import ahead
from chunkpress.plugin.registry import default_registry

DATA = Path(__file__).parent / "data"


def test_chunk_cm_compiles_ahead_the_loop_its_coding_runs():
    """compile_ahead types the coding loop as encode and decode call it, for every model
    version the levels write: coding afterwards adds no second compiled loop (a helper's
    compile of another signature would be wasted, and the first run would compile twice)."""
    from chunkpress.plugins.coders.chunk_cm_model.model import code_chunks

    text = (DATA / "alice29.txt").read_bytes()[:6000]
    for level in (6, 9):
        assert chunkpress.decompress(chunkpress.compress(text, level=level)) == text
    for name in ("chunk-cm", "chunk-cm-v5"):
        default_registry().get("coder", name).build().compile_ahead()
    assert len(code_chunks.overloads) == 1


@pytest.fixture
def program(monkeypatch):
    """This process as the chunkpress program (helpers enabled; any left are ended after)."""
    monkeypatch.setattr(ahead, "_enabled", True)
    yield
    ahead.stop_all()


def _cache_holding_the_loop(folder: Path) -> None:
    """Make ``folder`` (a NUMBA_CACHE_DIR) look as if it held chunk-cm's loop."""
    from chunkpress.engine.interruptible import FIRST_COMPILE, part_cache

    held = part_cache("chunk-cm")
    assert held is not None and held.is_relative_to(folder)
    held.mkdir(parents=True)
    (held / f"{FIRST_COMPILE['chunk-cm'][1]}1.py311.nbi").write_bytes(b"")


@pytest.mark.slow
def test_a_helper_starts_only_for_the_program_a_cold_loop_and_a_coder_that_compiles_ahead(program, monkeypatch,
                                                                                           tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cold"))
    assert ahead.started("bwt-cm") == ()  # it has no compile_ahead
    monkeypatch.setattr(ahead, "_enabled", False)
    assert ahead.started("chunk-cm") == ()  # a library call
    monkeypatch.setattr(ahead, "_enabled", True)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "warm"))
    _cache_holding_the_loop(tmp_path / "warm")
    assert ahead.started("chunk-cm-v5") == ()
    (tmp_path / "a-file").write_bytes(b"")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    assert ahead.started("chunk-cm-v5") == ()  # numba could not keep the helper's compile
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cold"))
    assert ahead.started("chunk-cm-v5") == ("chunk-cm",)
    helper = ahead._helpers["chunk-cm"]
    assert ahead.started("chunk-cm") == ("chunk-cm",) and ahead._helpers["chunk-cm"] is helper  # one a part
    ahead.stop_all()
    assert helper.poll() is not None and not ahead._helpers
    ahead.await_compiled_ahead("chunk-cm")  # none left: no wait


@pytest.mark.slow
def test_a_helper_compiles_into_the_cache_and_the_coder_waits_for_it(program, monkeypatch, tmp_path):
    """In an empty cache, the helper compiles chunk-cm's loop there; the coder's wait returns
    once the helper has ended, with the loop in the cache."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    from chunkpress.engine.interruptible import first_compile_seconds

    assert first_compile_seconds(["chunk-cm"]) > 0
    assert ahead.started("chunk-cm") == ("chunk-cm",)
    helper = ahead._helpers["chunk-cm"]
    ahead.await_compiled_ahead("chunk-cm")
    assert helper.returncode == 0
    assert first_compile_seconds(["chunk-cm"]) == 0


@pytest.mark.slow
def test_a_helper_ends_with_the_program_that_started_it(tmp_path):
    """A program that ends without its exit handlers (``os._exit``) leaves no helper behind:
    the helper sees its parent gone and ends."""
    script = ("import os; from chunkpress.engine import ahead; ahead.enable(); ahead.started('chunk-cm'); "
              "print(ahead._helpers['chunk-cm'].pid, flush=True); os._exit(0)")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    pid = int(out.stdout)
    deadline = time.monotonic() + 10 * PARENT_POLL_SECONDS + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "Z"


def test_the_program_asks_for_a_helper_when_it_knows_the_coder(monkeypatch, tmp_path):
    """A compress asks for the level's coder before it learns; ``-d`` and ``-t`` for the
    archive's coder once its header is read (before the rules are decoded); a library call
    asks too, and gets none (helpers are the program's)."""
    from chunkpress.cli import main

    asked: list[str] = []
    real = ahead.started
    monkeypatch.setattr(ahead, "started", lambda coder: asked.append(coder) or real(coder))
    src = tmp_path / "a.txt"
    text = (DATA / "alice29.txt").read_bytes()[:5000]
    src.write_bytes(text)
    assert main(["-9", "-q", "-k", str(src)]) == 0
    assert asked == ["chunk-cm"]
    archive = tmp_path / "a.txt.cpz"
    assert main(["-d", "-q", "-c", str(archive)]) == 0 and main(["-t", "-q", str(archive)]) == 0
    assert asked == ["chunk-cm"] * 3
    assert chunkpress.decompress(archive.read_bytes()) == text
    assert asked == ["chunk-cm"] * 4 and not ahead._helpers


def test_a_decoder_asks_for_its_helper_before_it_imports_numba(tmp_path):
    """``-d`` starts the helper as soon as the header names the coder: before numba and the
    coder's modules load in this process (0.3-0.7 s of a cold decode's path otherwise)."""
    archive = tmp_path / "a.cpz"
    archive.write_bytes(chunkpress.compress((DATA / "alice29.txt").read_bytes()[:3000], level=9))
    probe = ("import sys\n"
             "from chunkpress.engine import ahead\n"
             "seen = []\n"
             "ahead.started = lambda coder: seen.append((coder, 'numba' in sys.modules)) or ()\n"
             "from chunkpress.pipeline import decode_archive\n"
             f"decode_archive(open({str(archive)!r}, 'rb').read())\n"
             "print(seen)\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[('chunk-cm', False)]"
