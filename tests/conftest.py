import os

import pytest
from support import read

# Tests never pick up whatever third-party plugins happen to be installed.
os.environ.setdefault("CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture(scope="session")
def alice() -> bytes:
    return read("alice29.txt")


@pytest.fixture(scope="session")
def registry():
    from chunkpress.plugin.registry import build_registry

    return build_registry(autoload=False)
