"""Where parallel work runs: a Dask distributed client on local worker processes or on an
existing cluster (used by block mode, word counting and studies; we write no scheduler of our
own)."""

from __future__ import annotations

import collections
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


def ordered_map(func, items, *args, workers: int | None = None, scheduler: str | None = None,
                broadcast: tuple = ()):
    """``(item, func(item, *args, *broadcast))`` for every item, in order: here one after the
    other, or as Dask tasks on ``workers`` local processes or the cluster at ``scheduler``,
    with at most two tasks per worker in flight, so that only a few items are held at a time
    whatever their number. ``broadcast`` (bulky values every task needs) is sent to each worker
    once. A task whose worker dies is rerun by Dask."""
    if not (workers or scheduler):
        for item in items:
            yield item, func(item, *args, *broadcast)
        return
    with dask_client(workers, scheduler) as client:
        limit = 2 * max(1, len(client.scheduler_info()["workers"]))
        shared = [client.scatter(value, broadcast=True) if value is not None else None for value in broadcast]
        pending: collections.deque = collections.deque()
        for item in items:
            pending.append((item, client.submit(func, item, *args, *shared, pure=False)))
            if len(pending) >= limit:
                item, future = pending.popleft()
                yield item, future.result()
        for item, future in pending:
            yield item, future.result()
