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


#: what marks a test slow: it starts processes (the command line as a program, a Dask cluster,
#: a memory-capped child) and takes seconds
_STARTS_PROCESSES = ("subprocess.", "_peak_run(", "scheduler", "workers=", "\"--workers\"", "run_isolated(",
                     "extra_peak_bytes(")


def pytest_collection_modifyitems(items):
    """Mark the tests that start processes ``slow`` (``pytest -m "not slow"`` skips them while
    working; ``.ci/run`` runs everything)."""
    import inspect

    for item in items:
        try:
            source = inspect.getsource(item.function)
        except (OSError, TypeError, AttributeError):
            continue
        if any(sign in source for sign in _STARTS_PROCESSES):
            item.add_marker(pytest.mark.slow)
