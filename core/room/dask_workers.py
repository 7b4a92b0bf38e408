"""GPT runs' turns on Dask workers (the optional ``dist`` extra: ``pip install -e .[dist]``): the
scheduler of a runs folder sends each turn (``core.room.turn_runner.run_turn``) to a Dask worker,
which may be on another machine, instead of to a GPT worker of this machine
(``core.room.gpt_workers``).

Everything else stays as it is: the same owners, caps, queue and fairness (``core.room.turns``
decides whose turn it is, in the scheduler, under the runs folder's locks) and the same files (a
turn reads and writes the run folder, so the runs folder must be on storage that every Dask worker
mounts at the same path, as NFS does).  A Dask worker that dies during a turn loses nothing: Dask runs
the turn again on another Dask worker, which carries on from the run's last checkpoint (its metrics
past it are dropped first), so no step is lost and none logged twice; if Dask gives up on it
(``KilledWorker``), the turn is given again later, as for a GPT worker of this machine.  A Dask
worker runs under its nanny, which restarts it past its ``--memory-limit`` (the README's command;
``tests/room/test_dask_workers.py`` starts its Dask workers without one, so that a killed one stays
dead, as a machine that went away).

    dask scheduler --host 10.0.0.1                     # anywhere
    DASK_DISTRIBUTED__WORKER__DAEMON=False \\
        dask worker tcp://10.0.0.1:8786 --nthreads 1 --memory-limit 3GB --resources GPU=1  # per GPU
    BPE_EXPLORER_DASK_SCHEDULER=tcp://10.0.0.1:8786 BPE_EXPLORER_DASK_RESOURCES=GPU=1 \\
        streamlit run streamlit_app.py

Why Dask: the project already counts BPE pairs on it (``core.bpe.dask_counting``); it restarts a
lost task elsewhere, spreads tasks over Dask workers' declared resources (one turn per ``GPU`` unit),
and a turn is one plain function call on files, which needs nothing more (Ray's actors or a
Celery queue would add a second engine and keep the same function).  Dask is imported here only.
"""

from __future__ import annotations

import time
from concurrent.futures import CancelledError

CONNECT_S = 30   # seconds a host waits for the cluster's scheduler before it says the cluster did not answer


def parse_resources(text: str | None) -> dict[str, float] | None:
    """``"GPU=1"`` or ``"GPU=1,MEM=4e9"`` -> ``{"GPU": 1.0, ...}``: what each turn takes from a
    Dask worker (None: a Dask worker thread).

    >>> parse_resources("GPU=1")
    {'GPU': 1.0}
    """
    if not text:
        return None
    resources = {}
    for item in text.split(","):
        name, _, amount = item.partition("=")
        try:
            resources[name.strip()] = float(amount)
        except ValueError:
            raise ValueError(f"Dask resources look like GPU=1, not {item!r}.") from None
    return resources


class DaskWorkers:
    """Turns sent to the Dask cluster at ``address``, as many at once as its Dask workers have
    threads, or units of ``resources`` for one turn each."""

    def __init__(self, address: str, resources: dict[str, float] | None = None) -> None:
        from distributed import Client, KilledWorker  # the optional extra: fails here, by name

        self.client = Client(address, timeout=f"{CONNECT_S}s", set_as_default=False)
        self.resources = resources
        self.lost_errors = (KilledWorker, CancelledError)
        self._busy: set = set()

    def configure(self, count: int, threads: int, gpus: int) -> None:
        """Nothing: the cluster's Dask workers say how many turns fit."""

    def free(self) -> int:
        workers = self.client.scheduler_info(n_workers=-1)["workers"].values()
        if self.resources:
            slots = sum(min(int(w.get("resources", {}).get(name, 0) // amount)
                            for name, amount in self.resources.items()) for w in workers)
        else:
            slots = sum(w.get("nthreads", 1) for w in workers)
        return max(0, slots - len(self._busy))

    def submit(self, fn, *args):
        future = self.client.submit(fn, *args, pure=False, resources=self.resources)
        self._busy.add(future)
        return future

    def wait(self, futures, timeout: float) -> None:
        """Until one of ``futures`` is done, or ``timeout`` seconds (looked at twenty times a
        second: the turns last seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not any(f.done() for f in futures):
            time.sleep(0.05)

    def done(self, future, lost: bool) -> None:
        self._busy.discard(future)

    def close(self) -> None:
        self.client.close()
