import os
import signal

import pytest
from support import read

# Tests never pick up whatever third-party plugins happen to be installed.
os.environ.setdefault("CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD", "1")

# The tests of Ctrl-C need SIGINT delivered: a runner started in the background of a shell
# without job control ignores it, and every process it starts inherits that, so the suite
# turns it back on (its children then start with Python's own handler).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def alice() -> bytes:
    return read("alice29.txt")


@pytest.fixture(scope="session")
def registry():
    from chunkpress.plugin.registry import build_registry

    return build_registry(autoload=False)
