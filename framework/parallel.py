"""Where parallel work runs: a Dask distributed client on local worker processes or on an
existing cluster (used by block mode and studies; we write no scheduler of our own)."""

from __future__ import annotations

import contextlib

from .errors import ConfigError


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None):
    """A client of the scheduler at ``scheduler``, or of ``workers`` local single-threaded
    worker processes started (and stopped) here."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("--workers and --scheduler need Dask distributed: pip install 'chunkpress[dask]'") from None
    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
