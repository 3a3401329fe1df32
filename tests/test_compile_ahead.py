"""Compiling a coder's loop ahead, in a helper process, while a first run does its other work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import chunkpress
import pytest
from chunkpress.compile_helper import PARENT_POLL_SECONDS
from chunkpress.engine import ahead
from chunkpress.firstcompile import ahead_part, coder_part
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


def test_chunk_cm_types_its_ahead_parts_as_the_loop_calls_them():
    """Each ahead part is compiled for the types its caller passes it: typing the loop and
    code_rank anew (fresh copies, uncached) compiles no second signature of any part, so a part
    compiled by the other process is the one the loop links."""
    import numba

    parts = default_registry().get("coder", "chunk-cm").build().ahead_parts()
    for part in parts:
        part.compile()
    kernels = {part.name: part.compile.func.__self__ for part in parts}  # type: ignore[attr-defined]
    compiled = {name: set(k.overloads) for name, k in kernels.items()}  # (other tests here may have added some)
    for part in parts:
        if part.name in ("code_rank", "code_chunks"):
            numba.njit(kernels[part.name].py_func).compile(part.compile.args[0])  # type: ignore[attr-defined]
    assert {name: set(k.overloads) for name, k in kernels.items()} == compiled
    assert [p.name for p in parts if not p.shared] == ["code_rank", "code_chunks"]  # each after the parts it calls
    # numba compiles a kernel typed by its caller's compile with the caller's reference
    # counting, fastmath and error model where it says none itself, but with its own defaults
    # when it is compiled first by itself: a part that left them to its caller was linked into
    # the loop counting references (machine code a third larger, decoding 1.5x slower)
    loop = kernels["code_chunks"].targetoptions
    for name, kernel in kernels.items():
        for option in ("_nrt", "fastmath", "error_model"):
            assert kernel.targetoptions.get(option) == loop.get(option), (name, option)


def test_the_board_gives_the_helper_parts_from_the_first_and_the_program_shared_ones_from_the_last():
    import threading

    from chunkpress.compile_helper import Board
    from chunkpress.plugin import AheadPart

    parts = [AheadPart(name=n, compile=lambda: None, shared=s)
             for n, s in (("a", True), ("b", True), ("ab", False), ("c", True), ("d", True), ("all", False))]
    board = Board(parts)
    assert board.for_helper(0)
    assert board.for_program() == 4 and board.for_program() == 3 and board.for_program() == 1
    board.done(0)
    assert board.for_program() == -1  # the others are begun or the helper's alone
    waited = []
    helper = threading.Thread(target=lambda: waited.append(board.for_helper(1)))
    helper.start()
    helper.join(0.2)
    assert helper.is_alive()  # part 1 is the program's: the helper waits for it
    board.done(1)
    helper.join(5)
    assert waited == [False] and board.for_helper(2)
    board.program_gone()  # parts 3 and 4, never finished, go back to the helper
    assert board.for_helper(3) and board.for_helper(4)


def _fake_helper(script: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_the_waiting_program_compiles_what_its_helper_hands_over_and_nothing_once_it_is_gone():
    from chunkpress.plugin import AheadPart

    compiled: list[str] = []
    parts = [AheadPart(name=n, compile=lambda n=n: compiled.append(n), shared=True) for n in "abc"]
    helper = _fake_helper("import sys\n"
                          "for reply in ('2', '0', '-1'):\n"
                          "    assert sys.stdin.readline() == 'claim\\n'\n"
                          "    print(reply, flush=True)\n"
                          "    if reply != '-1':\n"
                          "        assert sys.stdin.readline() == f'done {reply}\\n'\n")
    ahead._helpers["chunk-cm"] = helper
    ahead.share_compile_ahead("chunk-cm", lambda: parts)  # a decoder's share before its rules: the helper goes on
    assert compiled == ["c", "a"] and ahead._helpers["chunk-cm"] is helper
    ahead.await_compiled_ahead("chunk-cm", lambda: parts)  # none left to share: it waits for the end
    assert compiled == ["c", "a"] and helper.returncode == 0 and "chunk-cm" not in ahead._helpers
    compiled.clear()
    ahead._helpers["chunk-cm"] = _fake_helper("import sys; sys.exit(0)")  # gone before it answers
    ahead.await_compiled_ahead("chunk-cm", lambda: parts)
    assert compiled == []
    failing = [AheadPart(name="x", compile=lambda: 1 / 0, shared=True)]
    helper = _fake_helper("import sys\n"
                          "for reply in ('0', '-1'):\n"
                          "    sys.stdin.readline(); print(reply, flush=True)\n"
                          "    if reply == '0':\n"
                          "        assert sys.stdin.readline() == 'done 0\\n'\n")
    ahead._helpers["chunk-cm"] = helper
    ahead.await_compiled_ahead("chunk-cm", lambda: failing)  # a part that fails here is the helper's to compile
    assert helper.returncode == 0


def test_a_reply_not_understood_gives_the_helper_its_part_back():
    """A reply that is not a part's number (the helper took a part for the program): the
    program closes its end, so the helper takes the part back and ends, and the wait returns at
    once, not after the helper's long timeout."""
    from chunkpress.plugin import AheadPart

    helper = _fake_helper("import signal, sys\n"
                          "signal.alarm(20)\n"
                          "sys.stdin.readline(); print('part 0', flush=True)\n"
                          "sys.exit(0 if sys.stdin.readline() == '' else 3)\n")
    ahead._helpers["chunk-cm"] = helper
    started = time.monotonic()
    ahead.await_compiled_ahead("chunk-cm", lambda: [AheadPart(name="x", compile=lambda: None, shared=True)])
    assert helper.returncode == 0 and time.monotonic() - started < 15


def test_an_interrupt_while_compiling_a_handed_over_part_is_not_lost_with_the_helper():
    """Ctrl-C reaches the helper too: the program's "done" then meets a broken pipe, and the
    interrupt still goes on up."""
    from chunkpress.plugin import AheadPart

    helper = _fake_helper("import sys; sys.stdin.readline(); print('0', flush=True)")

    def interrupted():
        helper.wait(30)  # the helper has gone before this process says it is done
        raise KeyboardInterrupt

    ahead._helpers["chunk-cm"] = helper
    with pytest.raises(KeyboardInterrupt):
        ahead.await_compiled_ahead("chunk-cm", lambda: [AheadPart(name="x", compile=interrupted, shared=True)])
    assert "chunk-cm" not in ahead._helpers


@pytest.fixture
def program(monkeypatch):
    """This process as the chunkpress program (helpers enabled; any left are ended after)."""
    monkeypatch.setattr(ahead, "_enabled", True)
    yield
    ahead.stop_all()


def _cache_holding_the_loop(folder: Path) -> None:
    """Make ``folder`` (a NUMBA_CACHE_DIR) look as if it held chunk-cm's loop."""
    from chunkpress.engine.interruptible import part_cache

    part = coder_part("chunk-cm")
    held = part_cache(part)
    assert held is not None and held.is_relative_to(folder)
    held.mkdir(parents=True)
    (held / f"{part.prefix}1.py311.nbi").write_bytes(b"")


def _started(coder: str) -> tuple[str, ...]:
    """What the program starts for ``coder``, as it asks."""
    return ahead.started(coder, ahead_part(coder))


#: chunk-cm's loop, the one part its models compile ahead
LOOP = "chunkpress.plugins.coders.chunk_cm_model.model:code_chunks"


@pytest.mark.slow
def test_a_helper_starts_only_for_the_program_a_cold_loop_and_a_coder_that_compiles_ahead(program, monkeypatch,
                                                                                           tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cold"))
    assert _started("bwt-cm") == ()  # its descriptor does not compile it ahead
    monkeypatch.setattr(ahead, "_enabled", False)
    assert _started("chunk-cm") == ()  # a library call
    monkeypatch.setattr(ahead, "_enabled", True)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "warm"))
    _cache_holding_the_loop(tmp_path / "warm")
    assert _started("chunk-cm-v5") == ()
    (tmp_path / "a-file").write_bytes(b"")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    assert _started("chunk-cm-v5") == ()  # numba could not keep the helper's compile
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cold"))
    assert _started("chunk-cm-v5") == (LOOP,)
    helper = ahead._helpers[LOOP]
    assert _started("chunk-cm") == (LOOP,) and ahead._helpers[LOOP] is helper  # one a part
    ahead.stop_all()
    assert helper.poll() is not None and not ahead._helpers
    ahead.await_compiled_ahead(LOOP)  # none left: no wait


#: a program that starts a helper for chunk-cm's loop and waits for it from the start,
#: compiling what it hands over; prints the parts it compiled and whether the cache then holds
#: the loop
_WAITING_PROGRAM = """
import json
import attrs
from chunkpress.engine import ahead
from chunkpress.engine.interruptible import first_compile_seconds
from chunkpress.firstcompile import ahead_part
from chunkpress.plugin.registry import default_registry
ahead.enable()
loop = ahead_part("chunk-cm")
before = first_compile_seconds([loop])
assert ahead.started("chunk-cm", loop) == (loop.name,)
helper = ahead._helpers[loop.name]
parts = default_registry().get("coder", "chunk-cm").build().ahead_parts()
here = []
recorded = [attrs.evolve(p, compile=lambda p=p: here.append(p.name) or p.compile()) for p in parts]
ahead.await_compiled_ahead(loop.name, lambda: recorded)
print(json.dumps([before, helper.returncode, first_compile_seconds([loop]), here,
                  [p.name for p in parts if p.shared]]))
"""


@pytest.mark.slow
def test_a_helper_compiles_into_the_cache_and_the_coder_waits_for_it(tmp_path):
    """In an empty cache, the helper compiles chunk-cm's loop there while the waiting process
    compiles the shared parts it hands over; the wait returns once the helper has ended, with
    the loop in the cache."""
    # a process of its own: numba reads NUMBA_CACHE_DIR once, at its import
    program = subprocess.run([sys.executable, "-c", _WAITING_PROGRAM], env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path)),
                             capture_output=True, text=True, timeout=300)
    before, helper_status, after, here, shared = json.loads(program.stdout)
    assert program.returncode == 0 and helper_status == 0 and before > 0 and after == 0
    # waiting from the start, the program compiled shared parts, the last first
    assert here and here == shared[::-1][:len(here)] and len(here) < len(shared)


@pytest.mark.slow
def test_a_helper_ends_with_the_program_that_started_it(tmp_path):
    """A program that ends without its exit handlers (``os._exit``) leaves no helper behind:
    the helper sees its parent gone and ends."""
    script = ("import os; from chunkpress.engine import ahead; from chunkpress.firstcompile import ahead_part; "
              "ahead.enable(); ahead.started('chunk-cm', ahead_part('chunk-cm')); "
              f"print(ahead._helpers[{LOOP!r}].pid, flush=True); os._exit(0)")
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
    monkeypatch.setattr(ahead, "started", lambda coder, part: asked.append(coder) or real(coder, part))
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
             "ahead.started = lambda coder, part: seen.append((coder, 'numba' in sys.modules)) or ()\n"
             "from chunkpress.pipeline import decode_archive\n"
             f"decode_archive(open({str(archive)!r}, 'rb').read())\n"
             "print(seen)\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[('chunk-cm', False)]"


#: a third party's coder, as its own distribution: a compiled kernel, its descriptor's
#: FirstCompile, and the parts its first call compiles
_SLOW_CODER = '''
import numba
import numpy as np
import chunkpress
import chunkpress.plugin as cp

@numba.njit(cache=True)
def code(data):
    total = 0
    for b in data:
        total = (total * 31 + b) & 0xFFFF
    return total

class Slow(cp.Coder):
    codec_id = "example.slow.v1"
    def ahead_parts(self):
        return [cp.AheadPart(name="code", compile=lambda: code(np.zeros(4, dtype=np.uint8)))]

@chunkpress.hookimpl
def register_coders():
    return [cp.CoderInfo(name="slow", factory=Slow, summary="a coder whose first call compiles", version="1",
                         first_compile=cp.FirstCompile(kernel="cp_test_slow:code", seconds=4, ahead=True))]
'''


def test_a_third_party_coder_says_what_its_first_run_compiles_and_compiles_it_ahead(tmp_path, monkeypatch):
    """The notice and the helper serve any coder whose descriptor states its first compile,
    not only the built-ins: its kernel's cache file says whether the cache is warm, the notice
    counts its seconds, and a helper compiles it into the cache while the program waits."""
    from chunkpress.engine.interruptible import first_compile_seconds
    from chunkpress.firstcompile import config_parts
    from chunkpress.plugin.registry import build_registry
    from chunkpress.progress import announce_first_compile

    (tmp_path / "cp_test_slow.py").write_text(_SLOW_CODER)
    dist = tmp_path / "cp_test_slow-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cp_test_slow\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[chunkpress]\nslow = cp_test_slow\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    registry = build_registry(autoload=True)
    part = coder_part("slow", registry)
    assert part is not None and part.folder == tmp_path and part.prefix == "cp_test_slow.code-"
    assert first_compile_seconds([part]) == 4

    class Terminal:
        def __init__(self):
            self.said = ""

        def isatty(self):
            return True

        def write(self, text):
            self.said += text

    from chunkpress.config import load_config

    config = load_config(overrides={"coder": "slow", "limits": {"max_rules": 0}}, registry=registry)
    terminal = Terminal()
    announce_first_compile(config_parts(config, registry), stream=terminal)
    assert "about 4 s" in terminal.said
    program = ("from chunkpress.engine import ahead\n"
               "from chunkpress.engine.interruptible import first_compile_seconds\n"
               "from chunkpress.firstcompile import ahead_part\n"
               "ahead.enable()\n"
               "part = ahead_part('slow')\n"
               "started = ahead.started('slow', part)\n"
               "ahead.await_compiled_ahead(part.name)\n"
               "print(started == (part.name,), first_compile_seconds([part]))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path),
               CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD="0")  # the helper finds the coder as the program does
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "0"]  # the helper compiled the kernel into the cache
    for mod in [m for m in sys.modules if m.startswith("cp_test_")]:
        del sys.modules[mod]
