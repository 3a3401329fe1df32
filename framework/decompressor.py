"""The decompressor: every archive back to its bytes, whatever its framing.

As python-zstandard's ``ZstdDecompressor``: a :class:`Decompressor` holds the settings of
reading (a dictionary that archives may reference, a memory bound, a bound on the output) and
reads single archives, block archives, stored archives and any number of them one after the
other (their concatenation, as gzip, xz and zstd do): from bytes
(:meth:`~Decompressor.decompress`), from stream to stream (:meth:`~Decompressor.copy_stream`)
or as a file object (:meth:`~Decompressor.stream_reader`). A single archive is read up to its
end and no further, a block archive a block at a time, so memory stays that of one archive or
block whatever the input's length.
"""

from __future__ import annotations

import io
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np

from .blockmode import describe_stream, iter_blocks
from .compressor import rules_file
from .errors import FormatError
from .fileio import Readable
from .format import blocks, container
from .format.limits import bounded_memory, check_max_memory, memory_limit
from .format.lookahead import Lookahead
from .pipeline import decode_archive, inspect
from .plugin.registry import Registry


class Decompressor:
    """``rules``: the dictionary that archives made with ``rules_ref`` reference (a rules
    file's path or bytes, or a Tokenizer); ``max_memory``: each call's bound in bytes, checked
    before each allocation (FormatError past it; None: ``CHUNKPRESS_MAX_MEMORY`` or half the
    machine's memory; other threads keep their own bounds, and the process's limits are never
    changed); ``max_output_size``: refuse archives that decode to more bytes than this."""

    def __init__(self, *, rules=None, max_memory: int | None = None, max_output_size: int | None = None,
                 registry: Registry | None = None):
        check_max_memory(max_memory)
        if max_output_size is not None and (isinstance(max_output_size, bool) or not isinstance(max_output_size, int)
                                            or max_output_size < 0):
            raise FormatError(f"max_output_size must be a number of bytes, not {max_output_size!r}")
        tokenizer, _ = rules_file(rules, decoding=True)
        self.rules: np.ndarray | None = None if tokenizer is None else tokenizer.rules
        self.max_memory, self.max_output_size, self.registry = max_memory, max_output_size, registry

    def decompress(self, data) -> bytes:
        """The bytes of every archive in ``data``, one after the other; FormatError if anything
        does not verify."""
        return b"".join(self.pieces(io.BytesIO(bytes(data))))

    def copy_stream(self, source: Readable, dest, *, progress: Callable[[int], None] | None = None) -> int:
        """Decode every archive in ``source`` into ``dest`` (anything with ``write``; None: only
        check them, as ``-t``). Returns the bytes decoded. ``progress`` hears the blocks done."""
        total = 0
        for piece in self.pieces(source, progress):
            if dest is not None:
                dest.write(piece)
            total += len(piece)
        return total

    def stream_reader(self, source: Readable) -> io.BufferedReader:
        """A readable file object of the decoded bytes of the archives in ``source``, decoded
        one archive or block at a time as it is read; where ``source`` can seek, it seeks as
        gzip's reader does (forward by decoding on, backward by decoding again from the start)."""
        return io.BufferedReader(DecompressionReader(self.pieces(source), self.restart(source)))

    def restart(self, source) -> Callable[[], Iterator[bytes | bytearray]] | None:
        """What gives ``source``'s pieces again from where they start now, for a reader that
        seeks back (None: ``source`` cannot seek)."""
        seekable = getattr(source, "seekable", None)
        if seekable is None or not seekable():
            return None
        start = source.tell()

        def again() -> Iterator[bytes | bytearray]:
            source.seek(start)
            return self.pieces(source)

        return again

    def decompressobj(self) -> DecompressionObj:
        """As zlib's and python-zstandard's: ``decompress(data)`` takes the archives' bytes in
        pieces of any size and gives back what each archive or block decodes to once it is
        complete; ``flush()`` ends the input (an archive cut short is a FormatError there)."""
        return DecompressionObj(self)

    def pieces(self, source: Readable, progress: Callable[[int], None] | None = None) -> Iterator[bytes | bytearray]:
        """The decoded pieces (an archive, or a block) of every archive in ``source``, in order."""
        with bounded_memory(self.max_memory):
            limit = memory_limit()
        look = Lookahead(source)
        budget = [self.max_output_size]
        first = True
        while first or look.held or look.fill(len(blocks.MAGIC) + 1):
            if look.held < len(blocks.MAGIC) + 1:
                look.fill(len(blocks.MAGIC) + 1 - look.held)
            magic = bytes(look.buf[look.pos: look.pos + len(blocks.MAGIC)])
            if magic == blocks.MAGIC:
                yield from iter_blocks(look, b"", lambda archive, rules: self._decoded(archive, rules, budget),
                                       self.rules, progress)
            elif magic == container.MAGIC:
                with bounded_memory(self.max_memory):
                    archive = container.read_archive(look, limit, (blocks.MAGIC,))
                yield self._decoded(archive, self.rules, budget)
            elif first:
                raise FormatError("not a chunkpress archive (bad magic bytes)")
            else:
                raise FormatError("bytes that are not an archive follow the last archive")
            first = False

    def _decoded(self, archive: bytes, rules, budget: list) -> bytearray:
        """One single archive's bytes, within this call's bounds (``budget[0]``: the output
        bytes still allowed, None: no bound)."""
        with bounded_memory(self.max_memory):
            unpacked = container.unpack(archive)
            header, payload, _ = unpacked
            if budget[0] is not None:
                if header.length > budget[0]:
                    raise FormatError(f"the archives decode to more than max_output_size "
                                      f"({self.max_output_size:,} bytes)")
                budget[0] -= header.length
            if header.codec == container.STORED_CODEC and not header.params and header.rules is None:
                # the bytes as they are: no coder to load
                if len(payload) != header.length or container.checksum(payload) != header.blake2b:
                    raise FormatError("checksum mismatch: the archive is corrupt")
                return bytearray(payload)
            return decode_archive(archive, self.registry, rules, max_memory=self.max_memory, unpacked=unpacked).data()

    def describe(self, source: BinaryIO, per_block: bool = False) -> dict:
        """What ``inspect`` shows of the one archive in ``source``: its header and sizes by part;
        for a block archive, totals over the blocks (``per_block``: and each block's own, as
        ``"per_block"``)."""
        head = source.read(len(blocks.MAGIC) + 1)
        with bounded_memory(self.max_memory):
            if head[: len(blocks.MAGIC)] == blocks.MAGIC:
                info, each = describe_stream(source, head, lambda archive, rules: inspect(archive, self.registry, rules),
                                             self.rules)
                return {**info, "per_block": each} if per_block else info
            if head[: len(container.MAGIC)] != container.MAGIC:
                raise FormatError("not a chunkpress archive (bad magic bytes)")
            look = Lookahead(source, head)
            archive = container.read_archive(look, memory_limit())
            if look.held or look.fill(1):
                raise FormatError("bytes follow the archive (inspect reads one archive)")
            return inspect(archive, self.registry, self.rules)


class DecompressionReader(io.RawIOBase):
    """The decoded bytes of a sequence of pieces, as a raw readable stream; ``restart``, where
    given, gives the pieces again from the start, so that it can seek."""

    def __init__(self, pieces: Iterator[bytes | bytearray],
                 restart: Callable[[], Iterator[bytes | bytearray]] | None = None):
        self._pieces = pieces
        self._restart = restart
        self._piece = memoryview(b"")
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._piece:
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._piece = memoryview(piece)
        n = min(len(buffer), len(self._piece))
        buffer[:n] = self._piece[:n]
        self._piece = self._piece[n:]
        self._read += n
        return n

    def tell(self) -> int:
        """Bytes read so far (decoded), as gzip's reader tells."""
        return self._read

    def seekable(self) -> bool:
        return self._restart is not None

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """To decoded byte ``offset`` (``whence`` SEEK_SET or SEEK_CUR, as gzip's reader takes):
        forward by decoding on, backward by decoding again from the start; the end of the data
        stops a seek past it."""
        if self._restart is None:
            raise io.UnsupportedOperation("the archive's source cannot seek")
        if whence == io.SEEK_CUR:
            offset += self._read
        elif whence != io.SEEK_SET:
            raise ValueError("seek from the end is not supported: the decoded length is known only at the end")
        if offset < 0:
            raise ValueError(f"negative seek position {offset}")
        if offset < self._read:
            self._pieces, self._piece, self._read = self._restart(), memoryview(b""), 0
        skip = bytearray(min(1 << 20, max(offset - self._read, 1)))
        while self._read < offset and self.readinto(memoryview(skip)[: offset - self._read]):
            pass
        return self._read


class _Fed:
    """A readable stream of bytes fed from another thread: ``read`` waits for them, and says
    so (``waiting``) while it does; ``end`` means no more will come."""

    def __init__(self):
        self.held, self.ended, self.waiting = bytearray(), False, False
        self.changed = threading.Condition()

    def read(self, n: int = -1) -> bytes:
        with self.changed:
            while not self.held and not self.ended:
                self.waiting = True
                self.changed.notify_all()
                self.changed.wait()
            self.waiting = False
            n = len(self.held) if n is None or n < 0 else n
            out = bytes(self.held[:n])
            del self.held[:n]
            return out

    def feed(self, data: bytes = b"", end: bool = False) -> None:
        with self.changed:
            self.held += data
            self.ended = self.ended or end
            self.waiting = False
            self.changed.notify_all()


class DecompressionObj:
    """What :meth:`Decompressor.decompressobj` returns. The archives are decoded on a helper
    thread, from the bytes fed so far: each call returns once that thread has decoded all it
    can and waits for more (or has finished). The thread holds no reference to this object, so
    one dropped unfinished ends its input, and its thread ends too."""

    def __init__(self, decompressor: Decompressor):
        self._fed = _Fed()
        self._state: dict = {"out": [], "error": None, "finished": False}
        self.eof = False  # True once flush() has decoded the last archive
        threading.Thread(target=_decode_fed, args=(decompressor, self._fed, self._state), daemon=True,
                         name="chunkpress-decompressobj").start()
        weakref.finalize(self, self._fed.feed, end=True)

    def _collect(self) -> bytes:
        state = self._state
        with self._fed.changed:
            while not (state["finished"] or self._fed.waiting):
                self._fed.changed.wait()
            out, state["out"] = b"".join(state["out"]), []
            error, state["error"] = state["error"], None
        if error is not None:
            raise error
        return out

    def decompress(self, data) -> bytes:
        """The bytes that the archives fed so far decode to, and that no earlier call gave."""
        if self._fed.ended:
            raise ValueError("decompress after flush")
        self._fed.feed(bytes(data))
        return self._collect()

    def flush(self) -> bytes:
        """Ends the input: the rest of the decoded bytes (FormatError if the last archive was
        cut short, or none was fed)."""
        if self._fed.ended:
            return b""
        self._fed.feed(end=True)
        out = self._collect()
        self.eof = True
        return out


def _decode_fed(decompressor: Decompressor, fed: _Fed, state: dict) -> None:
    """A DecompressionObj's helper thread: every piece the fed bytes decode to, into ``state``."""
    try:
        for piece in decompressor.pieces(fed):
            with fed.changed:
                state["out"].append(bytes(piece))
    except BaseException as exc:  # handed to the caller
        state["error"] = exc
    finally:
        with fed.changed:
            state["finished"] = True
            fed.changed.notify_all()
