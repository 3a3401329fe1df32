"""Processes and limits: private files stay private, SIGTERM cleans up, a library call never
changes its process, memory bounds hold per call, unreachable clusters fail fast."""

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import chunkpress
import numpy as np
import pytest
from chunkpress import FormatError
from chunkpress.cli import main
from chunkpress.process import Terminated, sigterm_as_interrupt
from support import DATA, read

CLI = [sys.executable, "-m", "chunkpress.cli"]


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.slow
@pytest.mark.parametrize("block", [False, True])
def test_a_private_input_gives_private_outputs_with_its_time(tmp_path, block):
    """A 600 input: a 600 archive and a 600 decompressed file (block mode too), each with the
    input's modification time, as zstd does; stdin gives the umask's default."""
    src = tmp_path / "secret.txt"
    src.write_bytes(read("alice29.txt")[:30_000])
    os.chmod(src, 0o600)
    os.utime(src, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    extra = ["--block-size", "10K"] if block else []
    old = os.umask(0o022)
    try:
        assert main(["compress", str(src), "--max-rules", "20", *extra]) == 0
        archive = tmp_path / "secret.txt.cpz"
        assert _mode(archive) == 0o600 and archive.stat().st_mtime_ns == src.stat().st_mtime_ns
        src.rename(tmp_path / "original.txt")
        assert main(["decompress", str(archive)]) == 0
        assert _mode(src) == 0o600 and src.stat().st_mtime_ns == 1_600_000_000_000_000_000
        assert src.read_bytes() == (tmp_path / "original.txt").read_bytes()
        # a group-readable input keeps its mode; derived files (rules) take the input's mode too
        os.chmod(src, 0o640)
        assert main(["train", str(src), "--max-rules", "5", "--rules", str(tmp_path / "r.rules"), "-q"]) == 0
        assert _mode(tmp_path / "r.rules") == 0o640
        piped = subprocess.run([*CLI, "compress", "-", "--max-rules", "5", "-o", str(tmp_path / "piped.cpz")],
                               input=b"from a pipe", capture_output=True)
        assert piped.returncode == 0 and _mode(tmp_path / "piped.cpz") == 0o644
    finally:
        os.umask(old)


def test_the_staged_file_is_never_readable_by_others(tmp_path, monkeypatch):
    """While it is written, the staging file of a private input's output is 600, not the umask's
    default (the streaming path: block mode and outputs over O_TMPFILE-less file systems)."""
    from chunkpress import fileio

    seen = []
    real_link = os.link

    def spy(src, dst, **kw):
        seen.append(_mode(src))
        return real_link(src, dst, **kw)

    monkeypatch.setattr(fileio.os, "link", spy)
    monkeypatch.setattr(fileio.StreamingOutput, "_unnamed", staticmethod(lambda folder: None))
    src = tmp_path / "secret.txt"
    src.write_bytes(b"private words " * 200)
    os.chmod(src, 0o600)
    assert main(["compress", str(src), "--max-rules", "5"]) == 0
    assert seen == [0o600] and _mode(tmp_path / "secret.txt.cpz") == 0o600


def _wait_for_output_bytes(proc: subprocess.Popen, folder, timeout: float = 120.0) -> None:
    """Until ``proc`` has written bytes to a file it holds open in ``folder`` (its unnamed or
    staged output): its imports are done, its signal handlers set and its first block coded."""
    fds = f"/proc/{proc.pid}/fd"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the process ended before writing its output"
        for fd in os.listdir(fds) if os.path.isdir(fds) else ():
            try:
                held = os.readlink(f"{fds}/{fd}")
                if held.startswith(str(folder)) and not held.endswith(".txt") and os.stat(f"{fds}/{fd}").st_size:
                    return
            except OSError:  # closed meanwhile
                continue
        time.sleep(0.02)
    raise AssertionError("no output written in time")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads the process's open files in /proc")
def test_sigterm_cleans_up_like_ctrl_c(tmp_path):
    """SIGTERM (kill, timeout) during a block compress: exit 143, nothing left behind (the
    output is written unnamed, or as a .part file where the file system has no unnamed files).
    The signal comes once the first block is on disk, so it lands in the same place whatever
    the machine's load: after start-up and the kernels' compile, with blocks still to code."""
    source = tmp_path / "big.txt"
    source.write_bytes(read("alice29.txt") * 8)
    out = tmp_path / "big.cpz"
    proc = subprocess.Popen([*CLI, "compress", str(source), "-o", str(out), "--block-size", "40K",
                             "--rewriter", "scan", "-v"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for_output_bytes(proc, tmp_path)  # about 1 s a block follows: 29 of 30 still to code
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and b"terminated" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


@pytest.mark.parametrize("signum, ending", [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_a_library_turned_into_another_error_still_ends_the_program_as_that_signal(signum, ending):
    """numba's compiled unboxing answers a TypeError when the signal's exception cuts its call
    back into Python short: the program still ends as terminated or interrupted, with cleanup."""
    with pytest.raises(ending) as raised:
        with sigterm_as_interrupt():
            try:
                os.kill(os.getpid(), signum)
                for _ in range(500):
                    time.sleep(0.01)  # the handler raises at the next bytecode
            except KeyboardInterrupt:
                raise TypeError("_get_jit_address() missing 1 required positional argument: 'sig'") from None
    assert type(raised.value) is ending and isinstance(raised.value.__cause__, TypeError)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_a_c_callback_swallowed_still_ends_the_program_without_a_traceback(capsys):
    """A signal that arrives inside a C library's callback (numba's compile, through LLVM's
    object cache) is swallowed by ctypes, which reports it as an unraisable exception: the
    program still ends as terminated, and prints no "Exception ignored" traceback for it."""
    import ctypes

    values = (ctypes.c_int * 64)(*range(64, 0, -1))

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    def compare(a, b):
        if a[0] == 32:
            os.kill(os.getpid(), signal.SIGTERM)  # raised in here: the callback cannot pass it on
            time.sleep(0.01)
        return a[0] - b[0]

    with pytest.raises(Terminated):
        with sigterm_as_interrupt():
            ctypes.CDLL(None).qsort(values, 64, ctypes.sizeof(ctypes.c_int), compare)
    assert "Exception ignored" not in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_an_error_with_no_signal_behind_it_stays_that_error():
    with pytest.raises(TypeError):
        with sigterm_as_interrupt():
            raise TypeError("a bug")


_FREED_BLOCK = """
import sys
import numpy as np
from chunkpress.process import return_large_blocks_when_freed
if sys.argv[1] == "returned":
    return_large_blocks_when_freed()
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
a = np.ones(30 << 20, np.uint8)  # glibc's default: blocks up to this size now come from the heap
del a
before = resident()
b = np.ones(20 << 20, np.uint8)
c = np.ones(1 << 16, np.uint8)  # above b in the heap, so that b's memory is not the heap's top
del b
print(resident() - before)
"""


@pytest.mark.skipif(not (sys.platform == "linux" and os.confstr("CS_GNU_LIBC_VERSION")), reason="glibc's mallopt")
def test_a_freed_large_array_goes_back_to_the_system_at_once():
    """train's stages free large arrays and make others: each is mapped on its own, so that
    freeing one lowers the process's resident memory at once (what its peak is made of)."""
    kept = int(subprocess.run([sys.executable, "-c", _FREED_BLOCK, "returned"], capture_output=True, text=True,
                              check=True).stdout)
    assert kept < 4 << 20


@pytest.mark.slow
def test_a_staging_file_of_a_killed_block_compress_is_removed_by_the_next_run(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(read("alice29.txt"))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = tmp_path / f".in.txt.cpz.{dead.stdout.strip()}.k3j_x9.part"  # as a SIGKILLed writer leaves it
    orphan.write_bytes(b"half an archive")
    assert main(["compress", str(source), "--block-size", "40K", "--max-rules", "20"]) == 0
    assert not orphan.exists() and (tmp_path / "in.txt.cpz").exists()


def test_a_library_call_never_changes_the_process_limits(monkeypatch):
    """chunkpress.decompress checks its bound before allocating; it makes no setrlimit call,
    which would limit every other thread of a host such as zarr or Dask."""
    import resource

    def refuse(*args):
        raise AssertionError("setrlimit called by a library call")

    monkeypatch.setattr(resource, "setrlimit", refuse)
    data = read("alice29.txt")
    for coder in ("combinatorial", "varint-zstd", "cm"):
        archive = chunkpress.compress(data, scorer="repair", limits={"max_rules": 50}, coder=coder)
        assert chunkpress.decompress(archive) == data


def test_max_memory_bounds_one_call_only():
    """max_memory= bounds that call (FormatError before allocating past it), in its own thread:
    a call beside it with no bound still decodes."""
    data = b"abcd" * 250_000
    archive = chunkpress.compress(data, scorer="repair", limits={"max_rules": 20}, coder="varint-zstd")
    with pytest.raises(FormatError, match="more than the limit of 1,000,000"):
        chunkpress.decompress(archive, max_memory=1_000_000)
    assert chunkpress.decompress(archive, max_memory=100_000_000) == data
    with pytest.raises(chunkpress.ConfigError):
        chunkpress.decompress(archive, max_memory=-5)
    results = {}
    barrier = threading.Barrier(2)

    def bounded():
        barrier.wait()
        try:
            chunkpress.decompress(archive, max_memory=1_000_000)
        except FormatError:
            results["bounded"] = "refused"

    def free():
        barrier.wait()
        results["free"] = chunkpress.decompress(archive) == data

    threads = [threading.Thread(target=bounded), threading.Thread(target=free)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"bounded": "refused", "free": True}


def test_decode_and_export_check_memory_before_allocating(tmp_path, monkeypatch):
    """A rules file of 48 doubling rules spells 2^48 bytes: export-hf refuses it at once instead
    of growing until the machine runs out; decode with an HF id of 2^28 needs no 2 GB table."""
    from chunkpress.format.rulesfile import dump_rules
    from chunkpress.text.hf import HFVocab
    from chunkpress.text.tokenizer import Tokenizer

    doubling = np.array([[97, 97]] + [[256 + k, 256 + k] for k in range(47)])
    (tmp_path / "d.rules").write_bytes(dump_rules(doubling, {}))
    monkeypatch.setenv("CHUNKPRESS_MAX_MEMORY", str(10**9))
    start = time.perf_counter()
    assert main(["export-hf", str(tmp_path / "d.rules"), "-o", str(tmp_path / "t.json")]) == 4
    assert time.perf_counter() - start < 5 and not (tmp_path / "t.json").exists()
    # an imported vocabulary whose one merge has HF id 2^28
    ids = list(range(256)) + [1 << 28]
    vocab = HFVocab(ids=np.array(ids), special=(), add_prefix_space=False)
    tok = Tokenizer(np.array([[97, 98]]), "none", hf=vocab)
    assert tok.decode([1 << 28, 97]) == "aba"
    with pytest.raises(FormatError, match="no token"):
        tok.decode([(1 << 28) - 1])


def _silent_server():
    """A port that accepts connections and never answers (a stuck scheduler)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    threading.Thread(target=accept, daemon=True).start()
    return server, stop, held


@pytest.mark.slow
def test_an_unreachable_or_silent_scheduler_fails_fast_in_one_line(tmp_path):
    pytest.importorskip("distributed")
    src = tmp_path / "in.txt"
    src.write_bytes(b"some text\n" * 100)
    server, stop, held = _silent_server()
    env = dict(os.environ, CHUNKPRESS_CONNECT_TIMEOUT="3")
    try:
        for address in (f"tcp://127.0.0.1:{server.getsockname()[1]}", "tcp://127.0.0.1:1", "nonsense"):
            start = time.perf_counter()
            run = subprocess.run([*CLI, "compress", str(src), "-o", str(tmp_path / "o.cpz"), "--scheduler", address],
                                 capture_output=True, text=True, env=env, timeout=60)
            lines = run.stderr.strip().splitlines()
            assert run.returncode == 6 and len(lines) == 1 and address in lines[0], run.stderr
            assert time.perf_counter() - start < 15
            assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]
        # a study on the silent one too
        (tmp_path / "s.toml").write_text('[datasets]\na = "in.txt"\n[base]\nscorer = "repair"\n')
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        run = subprocess.run([*CLI, "study", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"),
                              "--scheduler", address], capture_output=True, text=True, env=env, timeout=60)
        assert run.returncode == 6 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    finally:
        stop.set()
        server.close()
        for conn in held:
            conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--workers=-1"], ["--workers", "x"], ["--block-size", "infK"], ["--block-size", "99999999999999999999"],
    ["--block-size", "1e15K"], ["--block-size", "17G"], ["--block-size", "12"],
    ["--block-size", "32M", "--rules", "r.rules", "--shared-dictionary"],
])
def test_bad_numbers_and_conflicting_options_are_one_line_errors(tmp_path, args):
    src = tmp_path / "in.txt"
    src.write_bytes(b"words words\n" * 50)
    (tmp_path / "r.rules").write_bytes(b"")
    run = subprocess.run([*CLI, "compress", "in.txt", "-o", "out.cpz", *args], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert run.stderr.startswith("chunkpress: error: ") and not (tmp_path / "out.cpz").exists()


@pytest.mark.slow
def test_a_stream_is_compressed_in_blocks_and_an_endless_one_is_refused_in_bounded_memory(tmp_path):
    """stdin is read block by block (the archive is a block archive); a single archive read
    from a stream that never ends (/dev/zero) is refused once the memory limit is read."""
    data = read("alice29.txt")[:20_000]
    packed = subprocess.run([*CLI, "compress", "-", "--max-rules", "20", "--stdout"], input=data,
                            capture_output=True, check=True).stdout
    assert packed[:4] == b"CHKB"
    back = subprocess.run([*CLI, "decompress", "-", "--stdout"], input=packed, capture_output=True, check=True)
    assert back.stdout == data
    env = dict(os.environ, CHUNKPRESS_MAX_MEMORY=str(50 << 20))
    run = subprocess.run([*CLI, "inspect", "/dev/zero"], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 4 and "not a chunkpress archive" in run.stderr, run.stderr  # refused at once
    run = subprocess.run([*CLI, "decompress", "/dev/zero", "-o", str(tmp_path / "out")], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 4 and "not a chunkpress archive" in run.stderr, run.stderr  # refused at once
    # an endless stream that starts like a single archive is read up to the memory limit only
    endless = f"{{ printf 'CHKP\\001'; cat /dev/zero; }} | {' '.join(CLI)} decompress - -o {tmp_path / 'out'}"
    run = subprocess.run(["sh", "-c", endless], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 5 and "more than 52,428,800 bytes" in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()


def test_block_mode_never_overwrites_a_file_created_meanwhile(tmp_path, monkeypatch, capsys):
    """Without --force, a block archive gets its name only if it is still free (as the single
    archive path does): a file that appears during the run is reported, not replaced."""
    from chunkpress import compressor

    src = tmp_path / "in.txt"
    src.write_bytes(read("alice29.txt")[:30_000])
    target = tmp_path / "in.txt.cpz"
    real = compressor.compress_stream

    def racing(*args, **kwargs):
        total = real(*args, **kwargs)
        target.write_bytes(b"another run's archive")
        return total

    monkeypatch.setattr(compressor, "compress_stream", racing)
    assert main(["compress", str(src), "--block-size", "10K", "--max-rules", "10"]) == 5
    assert "created meanwhile" in capsys.readouterr().err
    assert target.read_bytes() == b"another run's archive"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "in.txt.cpz"]


def test_a_second_study_on_the_same_out_is_refused(tmp_path, capsys):
    from chunkpress.study.runner import _exclusive

    (tmp_path / "in.txt").write_bytes(b"some words and more words\n" * 30)
    (tmp_path / "s.toml").write_text('[datasets]\na = "in.txt"\n[base]\nscorer = "repair"\nlimits = { max_rules = 5 }\n')
    out = tmp_path / "out"
    out.mkdir()
    with _exclusive(out):  # a first run holds the folder
        assert main(["study", str(tmp_path / "s.toml"), "--out", str(out), "-q"]) == 5
        assert "in use by another study run" in capsys.readouterr().err
    assert main(["study", str(tmp_path / "s.toml"), "--out", str(out), "-q"]) == 0
    assert len((out / "results.jsonl").read_text().splitlines()) == 3  # three repeats


def test_a_report_of_a_megabyte_long_variant_name_is_quick(tmp_path):
    import json

    row = {"dataset": "a", "variant": "v" * (1 << 20), "repeat": 0, "config_hash": "h", "factor": 2.0, "error": "",
           "archive_bytes": 10, "verified": True}
    (tmp_path / "r.jsonl").write_text(json.dumps(row) + "\n")
    start = time.perf_counter()
    assert main(["study", "report", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "out")]) == 0
    assert time.perf_counter() - start < 10
    table = (tmp_path / "out" / "results.md").read_text()
    assert max(len(line) for line in table.splitlines()) < 400


@pytest.mark.slow
def test_ctrl_c_acts_at_once_inside_the_context_mixing_kernel(tmp_path):
    """SIGINT while cm codes (one kernel call of several seconds) ends the process within a
    second or two (exit 130, nothing left), instead of when the kernel returns (5.5 s later
    here before)."""
    source = tmp_path / "big.txt"
    source.write_bytes(read("alice29.txt") * 24)  # 3.6 MB: cm codes it for about 6 s
    rules = tmp_path / "r.rules"
    assert main(["train", str(tmp_path / "big.txt"), "--scorer", "repair", "--max-rules", "50", "--rules", str(rules),
                 "-q"]) == 0
    out = tmp_path / "big.cpz"
    # no learning: the run goes straight to the coder
    proc = subprocess.Popen([*CLI, "compress", str(source), "-o", str(out), "--rules", str(rules), "--coder", "cm"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(3.5)
    assert proc.poll() is None, "compress finished before the signal"
    start = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"interrupted" in err
    assert time.perf_counter() - start < 2.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "r.rules"]


def test_an_interrupt_leaves_the_kernel_marked_abandoned_until_it_ends():
    """The program ends a process whose kernel an interrupt left running with os._exit (the
    interpreter's teardown would free the compiled code under it: SIGSEGV, seen once as -11
    instead of 143 in a SIGTERM test under load); a kernel that ends is no longer counted."""
    import _thread

    from chunkpress.engine.interruptible import call_interruptibly, kernel_abandoned

    done = threading.Event()

    def slow():
        done.wait(5)
        return 1

    threading.Timer(0.2, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        call_interruptibly(slow)
    assert kernel_abandoned()
    done.set()
    deadline = time.time() + 5
    while kernel_abandoned() and time.time() < deadline:
        time.sleep(0.01)
    assert not kernel_abandoned()
    assert call_interruptibly(lambda: 7) == 7 and not kernel_abandoned()


def test_a_ppmd_stream_pyppmd_cannot_decode_is_refused_when_written(tmp_path):
    """pyppmd 1.3.1 writes PPMd var. I streams at order 3 that it then cannot decode (alice29):
    the encoder decodes every frame once, so no archive that nobody can read is ever written."""
    pytest.importorskip("pyppmd")
    data = read("alice29.txt")
    with pytest.raises(chunkpress.ConfigError, match="cannot decode its own stream"):
        chunkpress.compress(data, coder={"name": "raw-ppmd", "params": {"model_order": 3}})
    archive = chunkpress.compress(data, coder={"name": "raw-ppmd", "params": {"model_order": 8}})
    assert chunkpress.decompress(archive) == data
    src = tmp_path / "a.txt"
    src.write_bytes(data)
    assert main(["compress", str(src), "--config", str(write_ppmd_config(tmp_path))]) == 2
    assert not (tmp_path / "a.txt.cpz").exists()


def write_ppmd_config(tmp_path):
    cfg = tmp_path / "ppmd.toml"
    cfg.write_text('[coder]\nname = "raw-ppmd"\nparams = { model_order = 3 }\n[limits]\nmax_rules = 0\n')
    return cfg


@pytest.mark.slow
def test_the_first_compile_notice_asks_the_folder_numba_caches_in(tmp_path):
    """With ``NUMBA_CACHE_DIR`` set, numba keeps the kernels there, not beside the modules: the
    first-run notice names the seconds of each part whose main kernel that folder does not
    hold yet, and nothing once it does (it used to look beside the modules only, and spoke on
    every run)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}

    def ask(code: str) -> str:
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    probe = ("from chunkpress.engine.interruptible import LEARNER, first_compile_seconds as s; "
             "from chunkpress.firstcompile import coder_part; bwt = coder_part('bwt-cm'); "
             "print(s([bwt]), s([bwt, LEARNER]))")
    from chunkpress.engine.interruptible import LEARNER
    from chunkpress.firstcompile import coder_part

    bwt, learner = coder_part("bwt-cm").seconds, LEARNER.seconds
    assert ask(probe) == f"{bwt} {bwt + learner}"
    ask(f"import chunkpress; chunkpress.compress(open({str(DATA / 'alice29.txt')!r}, 'rb').read(), level=5)")
    assert ask(probe) == f"0 {learner}"  # -5's kernels are cached now, the learner's are not


def test_an_input_goes_into_blocks_where_its_coders_tables_would_not_fit(monkeypatch):
    """The compressor counts a level's coder's tables at the input's length: at -9 alice29's
    (a larger hash table on small inputs) are most of what it needs, so a memory limit just
    under that writes blocks, each of which fits; at the limit it is one archive."""
    from chunkpress.compressor import Compressor

    text = read("alice29.txt")
    nine = Compressor(9)
    need = nine.pipeline.working_bytes(len(text))
    assert need > 400 * len(text)  # learning counts 64 a byte: the tables are the rest
    monkeypatch.setenv("CHUNKPRESS_MAX_MEMORY", str(need))
    assert not nine.wants_blocks(len(text))
    monkeypatch.setenv("CHUNKPRESS_MAX_MEMORY", str(need - 1))
    assert nine.wants_blocks(len(text))
    block = nine.block_size_for(len(text))
    assert 1 << 16 <= block < len(text) and nine.pipeline.working_bytes(block) <= need - 1
    assert nine.pipeline.working_bytes(block + 1) > need - 1
