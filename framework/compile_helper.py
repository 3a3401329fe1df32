"""The helper process that compiles a coder's kernels ahead, into numba's cache, while the
program that started it (:mod:`chunkpress.engine.ahead`) does its other work:

    python -m chunkpress.compile_helper CODER PARENT_PID

It prints nothing, writes nothing but numba's cache, and ends at once when its parent does
(a program killed without its exit handlers leaves no helper behind).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from .plugin.registry import default_registry

#: how often a helper looks whether the process that started it is still there
PARENT_POLL_SECONDS = 0.5


def compile_ahead(coder: str, parent: int) -> None:
    """``coder``'s ``compile_ahead`` (a registry name), ending the process at once if
    ``parent`` ends first."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    default_registry().get("coder", coder).build().compile_ahead()


if __name__ == "__main__":
    compile_ahead(sys.argv[1], int(sys.argv[2]))
