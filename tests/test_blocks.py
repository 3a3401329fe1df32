"""Block mode: framed blocks, streamed decompression, damaged blocks named, parallel = serial."""

import io
from pathlib import Path

import pytest
from chunkpress.blockmode import split_blocks
from chunkpress.cli import main
from support import ROOT, read

#: the paper's pipeline (mdl + linked + combinatorial), what Pipeline.from_config() builds
MDL = ROOT / "examples" / "paper" / "mdl.toml"


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(read("alice29.txt"))
    return path


def test_blocks_are_cut_after_a_newline_and_cover_the_input():
    data = read("alice29.txt")
    parts = list(split_blocks(io.BytesIO(data), 20_000))
    assert b"".join(parts) == data and len(parts) >= 8
    assert all(len(p) <= 20_000 and p.endswith(b"\n") for p in parts[:-1])
    assert list(split_blocks(io.BytesIO(b"x" * 2500), 1024)) == [b"x" * 1024, b"x" * 1024, b"x" * 452]
    assert list(split_blocks(io.BytesIO(b""), 1024)) == []


def test_block_mode_round_trips_and_streams(tmp_path, text, capsys):
    archive = tmp_path / "in.cpz"
    assert main(["compress", str(text), "--block-size", "20K", "-o", str(archive)]) == 0
    raw = archive.read_bytes()
    assert raw[:4] == b"CHKB" and raw.count(b"CHKP") >= 8  # one complete archive per block
    assert main(["decompress", "-t", "-v", str(archive)]) == 0
    assert f"OK ({text.stat().st_size:,} bytes)" in capsys.readouterr().err
    out = tmp_path / "back.txt"
    assert main(["decompress", str(archive), "-o", str(out)]) == 0
    assert out.read_bytes() == text.read_bytes()


def test_a_damaged_block_is_named_and_a_cut_archive_refused(tmp_path, text, capsys):
    archive = tmp_path / "in.cpz"
    assert main(["compress", str(text), "--block-size", "20K", "-o", str(archive)]) == 0
    raw = archive.read_bytes()
    starts = [i for i in range(len(raw)) if raw.startswith(b"CHKP", i)]
    bad = bytearray(raw)
    bad[starts[2] + 40] ^= 1
    archive.write_bytes(bytes(bad))
    out = tmp_path / "back.txt"
    assert main(["decompress", str(archive), "-o", str(out)]) == 4
    assert "block 2:" in capsys.readouterr().err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
    archive.write_bytes(raw[: len(raw) // 2])
    assert main(["decompress", str(archive), "-o", str(out)]) == 4
    assert "cut short" in capsys.readouterr().err and not out.exists()


def test_blocks_share_one_dictionary_stored_once(tmp_path, text, capsys):
    """--rules R or --shared-dictionary: the dictionary is stored once at the start and every
    block references it, so the archive is smaller than blocks that each carry their own."""
    en = read("alice29.txt")
    own, shared, given = (tmp_path / f"{n}.cpz" for n in ("own", "shared", "given"))
    common = ["--block-size", "20K", "--scorer", "repair", "--max-rules", "600", "--coder", "varint-zstd"]
    assert main(["compress", str(text), *common, "-o", str(own)]) == 0
    assert main(["compress", str(text), *common, "--shared-dictionary", "-o", str(shared)]) == 0
    rules = tmp_path / "first.rules"
    (tmp_path / "first.txt").write_bytes(en[:20_000])
    assert main(["train", str(tmp_path / "first.txt"), "--scorer", "repair", "--max-rules", "600", "--rules", str(rules)]) == 0
    assert main(["compress", str(text), *common, "--rules", str(rules), "-o", str(given)]) == 0
    assert shared.read_bytes().count(b"CPRL") == 1 and given.read_bytes().count(b"CPRL") == 1
    assert shared.stat().st_size < own.stat().st_size
    for archive in (shared, given):
        out = tmp_path / (archive.stem + ".out")
        assert main(["decompress", str(archive), "-o", str(out)]) == 0 and out.read_bytes() == en
    # a coder that cannot reference a dictionary is refused before any work
    capsys.readouterr()
    assert main(["compress", str(text), "--block-size", "20K", "--coder", "cm", "--shared-dictionary",
                 "-o", str(tmp_path / "cm.cpz")]) == 2
    assert "cannot reference an external dictionary" in capsys.readouterr().err


def _assemble(start: bytes, frames, length: int, digest: bytes, indexes=None) -> bytes:
    from chunkpress.format import blocks

    body = b"".join(blocks.frame(i if indexes is None else indexes[k], a) for k, (i, a) in enumerate(frames))
    return start + body + blocks.end(len(frames), length, digest)


def _legacy(raw: bytes, version: int) -> bytes:
    """The same blocks as a version 1 or 2 archive (no indexes, no end checksum)."""
    from chunkpress.format import blocks
    from chunkpress.format.leb128 import encode_varints

    stream = io.BytesIO(raw)
    _, dictionary = blocks.read_start(stream)
    frames = list(blocks.read_frames(stream))
    stored = encode_varints([len(dictionary or b"")]) + (dictionary or b"") if version >= 2 else b""
    head = blocks.MAGIC + bytes([version]) + stored
    return head + b"".join(encode_varints([len(a)]) + a for _, a in frames) + encode_varints([0, len(frames)])


def test_version_1_and_2_block_archives_still_decode(tmp_path, text):
    """Block archives written before the dictionary field (version 1) and before indexes and
    the end checksum (version 2) keep decoding."""
    archive = tmp_path / "in.cpz"
    assert main(["compress", str(text), "--block-size", "40K", "--max-rules", "100", "-o", str(archive)]) == 0
    raw = archive.read_bytes()
    assert raw[4:6] == bytes([3, 0])  # version 3, no shared dictionary
    out = tmp_path / "back.txt"
    for version in (1, 2):
        archive.write_bytes(_legacy(raw, version))
        assert main(["decompress", str(archive), "-o", str(out), "-f"]) == 0 and out.read_bytes() == text.read_bytes()


@pytest.mark.slow
def test_blocks_dropped_repeated_or_moved_are_refused(tmp_path, text, capsys):
    """Each block checks itself; its index and the end record (block count, length and BLAKE2b
    of the whole stream) tie it to its place: no reordering decodes with exit 0, even with
    indexes and count rewritten to match, nor does an archive emptied of its blocks."""
    from chunkpress.format import blocks

    archive = tmp_path / "in.cpz"
    assert main(["compress", str(text), "--block-size", "20K", "--max-rules", "100", "-o", str(archive)]) == 0
    raw = archive.read_bytes()
    stream = io.BytesIO(raw)
    version, _ = blocks.read_start(stream)
    start = raw[: stream.tell()]
    frames = list(blocks.read_frames(stream, version))
    tail = raw[len(raw) - 16 :]
    length = text.stat().st_size
    n = len(frames)
    assert n >= 6 and main(["decompress", "-t", str(archive)]) == 0
    orders = {
        "dropped": [f for f in frames if f[0] != 2],
        "repeated": frames[:3] + [frames[2]] + frames[3:],
        "swapped": frames[:1] + [frames[2], frames[1]] + frames[3:],
        "reversed": frames[::-1],
        "none": [],
        "last dropped": frames[:-1],
    }
    out = tmp_path / "back.txt"
    for name, order in orders.items():
        for renumbered in (False, True):
            bad = _assemble(start, order, length, tail, indexes=list(range(len(order))) if renumbered else None)
            archive.write_bytes(bad)
            capsys.readouterr()
            assert main(["decompress", str(archive), "-o", str(out)]) == 4, (name, renumbered)
            err = capsys.readouterr().err
            assert err.startswith("chunkpress: error: ") and err.count("\n") == 1, err
            assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
            first_bad = {"dropped": 2, "repeated": 3, "swapped": 1, "reversed": 0}.get(name)
            if not renumbered and first_bad is not None:
                assert f"block {first_bad} is missing or out of place" in err, err
    # streamed to stdout, the blocks before the bad one may be written, but the exit is not 0
    import subprocess
    import sys

    archive.write_bytes(_assemble(start, orders["swapped"], length, tail))
    run = subprocess.run([sys.executable, "-m", "chunkpress.cli", "decompress", str(archive), "--stdout"],
                         capture_output=True)
    assert run.returncode == 4 and len(run.stdout) < length and b"block 1 is missing" in run.stderr
    # a magic alone is a one-line format error, not a traceback
    archive.write_bytes(blocks.MAGIC)
    assert main(["decompress", str(archive), "-o", str(out)]) == 4
    assert "cut short" in capsys.readouterr().err


def _mixed(folder) -> dict:
    """Inputs whose blocks the default level codes different ways: a shared library (xz with
    its x86 filter), random bytes (stored), text larger than the block size (the block sort),
    and all three in one file."""
    import numpy as np

    library = max(Path(np.__path__[0]).rglob("*.so"), key=lambda p: p.stat().st_size).read_bytes()[:150_000]
    noise = np.random.default_rng(7).integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    text = read("alice29.txt")
    inputs = {"library": library, "random": noise, "text": text, "mix": text[:70_000] + library + noise + text}
    for name, data in inputs.items():
        (folder / name).write_bytes(data)
    return inputs


@pytest.mark.slow
def test_blocks_on_dask_workers_write_the_same_bytes(tmp_path, text):
    """--workers 2 (local processes) and --scheduler (a running cluster) give the archive the
    serial run gives, byte for byte: with a config's pipeline, and at the default level, whose
    decision (stored, plain back end, block sort) is made the same way in a worker."""
    pytest.importorskip("distributed")
    from chunkpress.format.blocks import read_frames, read_start
    from chunkpress.format.container import unpack
    from distributed import LocalCluster

    runs = {"pipeline": (text, ["--block-size", "30K", "--max-rules", "300"])}
    runs.update({name: (tmp_path / name, ["--block-size", "64K"]) for name in _mixed(tmp_path)})
    ways = ("serial", "parallel", "remote")
    out = {(name, way): tmp_path / f"{name}.{way}.cpz" for name in runs for way in ways}
    for name, (source, flags) in runs.items():
        assert main(["compress", str(source), *flags, "-q", "-o", str(out[name, "serial"])]) == 0
        assert main(["compress", str(source), *flags, "-q", "--workers", "2", "-o", str(out[name, "parallel"])]) == 0
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        for name, (source, flags) in runs.items():
            assert main(["compress", str(source), *flags, "-q", "--scheduler", cluster.scheduler_address,
                         "-o", str(out[name, "remote"])]) == 0
    for name in runs:
        assert out[name, "serial"].read_bytes() == out[name, "parallel"].read_bytes() == \
            out[name, "remote"].read_bytes(), name
    with open(out["mix", "serial"], "rb") as f:  # the mix's blocks were coded three ways
        version, _ = read_start(f, f.read(5))
        codecs = {unpack(archive)[0].codec for _, archive in read_frames(f, version)}
    assert {"chunkpress.bwt-cm.v1", "chunkpress.stored.v1"} <= codecs
    # with a shared dictionary too
    serial, parallel = tmp_path / "s2.cpz", tmp_path / "p2.cpz"
    for out, extra in ((serial, []), (parallel, ["--workers", "2"])):
        assert main(["compress", str(text), "--block-size", "30K", "--max-rules", "300", "--shared-dictionary",
                     *extra, "-o", str(out)]) == 0
    assert serial.read_bytes() == parallel.read_bytes()


@pytest.mark.slow
def test_a_cluster_losing_a_worker_mid_run_still_writes_the_same_archive(tmp_path, text):
    """A `dask scheduler` and two `dask worker` processes; one worker is killed after the third
    block: Dask reruns its blocks on the other and the archive is the serial one, byte for byte."""
    pytest.importorskip("distributed")
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    from chunkpress import Compressor

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--dashboard-address", ":0"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = []
    try:
        for _ in range(2):
            workers.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                             "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        data = text.read_bytes()
        serial = Compressor(config=MDL, scorer="repair", max_rules=200, block_size=8 << 10).compress(data)
        remote = io.BytesIO()
        killed = []

        def kill_after_three(count, total):
            if count == 3 and not killed:
                os.kill(workers[0].pid, signal.SIGKILL)
                killed.append(time.time())

        cluster = Compressor(config=MDL, scorer="repair", max_rules=200, block_size=8 << 10, scheduler=address)
        cluster.copy_stream(io.BytesIO(data), remote, size=len(data), blocks_progress=kill_after_three)
        assert killed and workers[0].wait(10) == -signal.SIGKILL
        assert remote.getvalue() == serial
    finally:
        for p in [*workers, scheduler]:
            p.kill()
            p.wait(10)


@pytest.mark.slow
def test_block_mode_through_stdin_and_stdout(tmp_path, text):
    import subprocess
    import sys

    data = text.read_bytes()
    cmd = [sys.executable, "-m", "chunkpress.cli"]
    packed = subprocess.run([*cmd, "compress", "-", "--block-size", "20K", "--stdout", "-f"], input=data,
                            capture_output=True, check=True).stdout
    assert packed[:4] == b"CHKB"
    back = subprocess.run([*cmd, "decompress", "-", "--stdout"], input=packed, capture_output=True, check=True).stdout
    assert back == data


@pytest.mark.slow
def test_inspect_and_the_python_api_take_block_archives(tmp_path, text, capsys):
    """inspect shows a block archive's totals (each block in --json), streamed from a file or
    stdin; chunkpress.decompress takes its bytes as it takes a single archive's."""
    import json
    import subprocess
    import sys

    import chunkpress

    archive = tmp_path / "in.cpz"
    assert main(["compress", str(text), "--block-size", "40K", "-1", "-o", str(archive)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(archive), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["blocks"] == len(info["per_block"]) >= 4
    assert info["original_bytes"] == text.stat().st_size == sum(b["original_bytes"] for b in info["per_block"])
    assert info["archive_bytes"] == archive.stat().st_size
    # 40 KB blocks are too small for -1's dictionary to pay: each block is its plain back end, zstd
    assert info["codecs"] == "chunkpress.raw-zstd.v1"
    piped = subprocess.run([sys.executable, "-m", "chunkpress.cli", "inspect", "-"], stdin=open(archive, "rb"),
                           capture_output=True, text=True)
    assert piped.returncode == 0 and "block archive (version 3)" in piped.stdout
    assert chunkpress.decompress(archive.read_bytes()) == text.read_bytes()
    with pytest.raises(chunkpress.FormatError):
        chunkpress.decompress(archive.read_bytes()[:-20])
