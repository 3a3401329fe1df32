"""Where parallel work runs: a Dask distributed client on local worker processes or on an
existing cluster (used by block mode, word counting and studies; we write no scheduler of our
own)."""

from __future__ import annotations

import collections
import contextlib
import os
import threading

from .errors import ClusterError, ConfigError

#: seconds to wait for a scheduler to connect and answer (environment: CHUNKPRESS_CONNECT_TIMEOUT)
CONNECT_TIMEOUT = 20.0
CONNECT_TIMEOUT_ENV = "CHUNKPRESS_CONNECT_TIMEOUT"


def connect_timeout() -> float:
    value = os.environ.get(CONNECT_TIMEOUT_ENV)
    if not value:
        return CONNECT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 1e6:
        raise ConfigError(f"{CONNECT_TIMEOUT_ENV} must be a number of seconds, got {value!r}")
    return seconds


def _connect(scheduler: str):
    """A client of the scheduler at ``scheduler``, or a ClusterError naming it when it cannot be
    reached or does not answer within :func:`connect_timeout`. Dask's own timeout does not cover
    a peer that accepts the connection and never answers, so the client is made in a thread
    that is given up on after that time."""
    from distributed import Client  # optional: block mode and studies on Dask only

    timeout = connect_timeout()
    outcome: list = []

    def connect():
        try:
            outcome.append(Client(scheduler, timeout=timeout))
        except BaseException as exc:  # handed to the caller below
            outcome.append(exc)

    thread = threading.Thread(target=connect, name="chunkpress-connect", daemon=True)
    thread.start()
    thread.join(timeout + 2)
    if not outcome:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: no answer within {timeout:g} s")
    result = outcome[0]
    if isinstance(result, (OSError, TimeoutError)):
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {result}")
    if isinstance(result, (ValueError, TypeError)):
        raise ClusterError(f"not a Dask scheduler address: {scheduler!r} ({result})")
    if isinstance(result, BaseException):
        raise result
    return result


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None):
    """A client of the scheduler at ``scheduler``, or of ``workers`` local single-threaded
    worker processes started (and stopped) here."""
    try:
        from distributed import Client, LocalCluster  # optional: pip install 'chunkpress[dask]'
    except ImportError:
        raise ConfigError("--workers and --scheduler need Dask distributed: pip install 'chunkpress[dask]'") from None
    if scheduler:
        cluster, client = None, _connect(scheduler)
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _large_graphs_quiet():
    """Dask's configuration, while the items are mapped, without its warning of large task
    graphs (see :func:`ordered_map`)."""
    import dask  # optional: installed with distributed, which dask_client has checked

    return dask.config.set({"distributed.admin.large-graph-warning-threshold": "64GiB"})


def ordered_map(func, items, *args, workers: int | None = None, scheduler: str | None = None,
                broadcast: tuple = ()):
    """``(item, func(item, *args, *broadcast))`` for every item, in order: here one after the
    other, or as Dask tasks on ``workers`` local processes or the cluster at ``scheduler``,
    with at most two tasks per worker in flight, so that only a few items are held at a time
    whatever their number. ``broadcast`` (bulky values every task needs) is sent to each worker
    once. A task whose worker dies is rerun by Dask: each item travels inside its task (a
    scattered item would die with the worker that held it), so Dask's warning of a large graph
    is for what is meant here, and is not shown."""
    if not (workers or scheduler):
        for item in items:
            yield item, func(item, *args, *broadcast)
        return
    with dask_client(workers, scheduler) as client, _large_graphs_quiet():
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
