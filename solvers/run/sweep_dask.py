"""A sweep executor on Dask distributed: one task per run, on the workers of a Dask cluster.

    with DaskExecutor("tcp://scheduler:8786") as executor:   # or DaskExecutor(client)
        records = solvers.sweep("case.toml", {"mesh.nx": [128, 256]}, executor=executor)

The sweep engine needs `submit(fn, *args) -> future` (future.result() gives the task's result)
and uses `wait_first(futures) -> (done, not_done)` to wait for the next run to finish. Each
worker imports `solvers` itself: install the package on every worker machine, and point the
sweep's output folder at a filesystem the workers share. `distributed` is an optional
dependency (the `dask` extra), imported only when an executor is made.
"""

MISSING = "the Dask executor needs dask.distributed: pip install 'solvers-gpu[dask]'"


def _distributed():
    """The `distributed` module, or an ImportError that says how to install it."""
    try:
        import distributed
    except ImportError as error:
        raise ImportError(MISSING) from error
    return distributed


class DaskExecutor:
    """Runs sweep tasks on a Dask cluster: `address_or_client` is a scheduler address
    ("tcp://host:8786"), a cluster object (LocalCluster), or a connected `distributed.Client`.
    A client given is used as it is and left open; one made here is closed by close()."""

    def __init__(self, address_or_client):
        self._distributed = _distributed()
        # A client given is the caller's: use it, never close it.
        if isinstance(address_or_client, self._distributed.Client):
            self.client, self._owns_client = address_or_client, False
        else:
            # An address or a cluster: connect our own client, not made the process default.
            self.client = self._distributed.Client(address_or_client, set_as_default=False)
            self._owns_client = True
        self.address = self.client.scheduler.address

    def __repr__(self):
        state = "" if self.client is not None else ", closed"
        return f"DaskExecutor({self.address!r}{state})"

    def submit(self, fn, *args):
        """One task: fn(*args) on a worker. pure=False gives every call a key of its own, so a
        rerun of the same run is run again rather than taken from the cluster's memory; a failed
        run is not retried (retries=0), its error comes back from future.result()."""
        return self.client.submit(fn, *args, pure=False, retries=0)

    def wait_first(self, futures):
        """Block until at least one of `futures` has finished: (done, not_done), two sets.
        wait() takes the current client: ours, the process default or not."""
        with self.client.as_current():
            done, not_done = self._distributed.wait(list(futures), return_when="FIRST_COMPLETED")
        return done, not_done

    def close(self):
        """Close the client if this executor made it; a client given stays open."""
        if self._owns_client and self.client is not None:
            self.client.close()
            self.client = None

    # Context manager: close() on the way out, an exception or not.
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
