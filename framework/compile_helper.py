"""The helper process that compiles a coder's kernels ahead, into numba's cache, while the
program that started it (:mod:`chunkpress.engine.ahead`) does its other work:

    python -m chunkpress.compile_helper CODER PARENT_PID

It compiles the coder's :meth:`~chunkpress.contract.Coder.ahead_parts` in order, and hands the
program, once it waits for them, the shared parts it has not begun (:class:`Board`), over its
standard input and output: the program writes ``claim`` and reads a part's number (-1: none
left), compiles that part, and writes ``done N``. It prints nothing else, writes nothing but
numba's cache, and ends at once when its parent does (a program killed without its exit
handlers leaves no helper behind).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from .plugin.registry import default_registry

#: how often a helper looks whether the process that started it is still there
PARENT_POLL_SECONDS = 0.5


class Board:
    """Who compiles each of a coder's ahead parts: the helper takes them from the first, in
    order, and waits where the program has one it has not finished; the program, asking while
    it waits for the helper, takes the last shared part nobody has begun."""

    FREE, HELPER, PROGRAM, DONE = range(4)

    def __init__(self, parts):
        self.shared = [part.shared for part in parts]
        self.state = [self.FREE] * len(parts)
        self.changed = threading.Condition()

    def for_program(self) -> int:
        """The part the program compiles next, or -1: none is left that it may take."""
        with self.changed:
            for i in reversed(range(len(self.state))):
                if self.shared[i] and self.state[i] == self.FREE:
                    self.state[i] = self.PROGRAM
                    return i
            return -1

    def for_helper(self, i: int) -> bool:
        """Whether the helper compiles part ``i`` (False: the program has, and it waited)."""
        with self.changed:
            while self.state[i] == self.PROGRAM:
                self.changed.wait()
            if self.state[i] == self.DONE:
                return False
            self.state[i] = self.HELPER
            return True

    def done(self, i: int) -> None:
        with self.changed:
            self.state[i] = self.DONE
            self.changed.notify_all()

    def program_gone(self) -> None:
        """The program's pipe closed: the parts it took and did not finish are the helper's."""
        with self.changed:
            self.state = [self.FREE if s == self.PROGRAM else s for s in self.state]
            self.changed.notify_all()


def serve(board: Board, requests, replies) -> None:
    """Answer the program's ``claim`` and ``done N`` lines until it closes its end."""
    for line in requests:
        word, _, arg = line.decode("ascii", "replace").strip().partition(" ")
        if word == "claim":
            replies.write(f"{board.for_program()}\n".encode())
            replies.flush()
        elif word == "done" and arg.isdigit() and int(arg) < len(board.state):
            board.done(int(arg))
    board.program_gone()


def compile_ahead(coder: str, parent: int) -> None:
    """``coder``'s ahead parts (a registry name), shared with the program over this process's
    standard streams; ends the process at once if ``parent`` ends first."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    replies = os.fdopen(os.dup(1), "wb")  # the program's channel; anything else printed goes nowhere
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    parts = list(default_registry().get("coder", coder).build().ahead_parts())
    board = Board(parts)
    threading.Thread(target=serve, args=(board, sys.stdin.buffer, replies), daemon=True).start()
    for i, part in enumerate(parts):
        if board.for_helper(i):
            part.compile()
            board.done(i)


if __name__ == "__main__":
    compile_ahead(sys.argv[1], int(sys.argv[2]))
    # the cache files are written: ending here spares the program, which waits for this
    # process to end, the second or so of tearing numba's and LLVM's objects down
    os._exit(0)
