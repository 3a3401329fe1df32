"""A binary stream read ahead: bytes seen but not yet taken stay in a buffer, so a reader can
look for where one archive ends and take it off the front without copying what follows."""

from __future__ import annotations

#: how much is read from the stream at a time
PIECE = 1 << 20


class Lookahead:
    """``stream`` (anything with ``read(n)``) with ``head`` (bytes already read from it) in
    front. ``buf[pos:]`` holds the bytes read but not taken."""

    def __init__(self, stream, head: bytes = b""):
        self.stream = stream
        self.buf = bytearray(head)
        self.pos = 0

    @property
    def held(self) -> int:
        """Bytes read from the stream but not taken yet."""
        return len(self.buf) - self.pos

    def fill(self, n: int = PIECE) -> int:
        """Read up to ``n`` more bytes into the buffer; how many came (0: the stream ended)."""
        piece = self.stream.read(n)
        self.buf += piece
        return len(piece)

    def take(self, n: int) -> bytes:
        """The next ``n`` held bytes, taken off the front."""
        out = bytes(self.buf[self.pos: self.pos + n])
        self.pos += len(out)
        if self.pos > len(self.buf) // 2:  # drop what was taken, at most once per half
            del self.buf[: self.pos]
            self.pos = 0
        return out

    def read(self, n: int = -1) -> bytes:
        """As a file's ``read``: held bytes first, then the stream's."""
        if n < 0:
            return self.take(self.held) + self.stream.read()
        if self.held < n:
            self.fill(n - self.held)
        return self.take(min(n, self.held))
