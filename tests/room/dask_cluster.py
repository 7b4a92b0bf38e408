"""A Dask cluster on loopback for the tests: a scheduler, then its workers, each a process of its
own as on other machines, stopped (by PID) when the test is done."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from core.room.spawn import ROOT, child_env
from conftest import wait_for
from ui.serving.supervisor import free_port


def listening(address: str, scheduler: subprocess.Popen) -> bool:
    """Whether the scheduler accepts connections at ``address`` (its workers are started then)."""
    assert scheduler.poll() is None, f"the Dask scheduler exited ({scheduler.returncode})"
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


@contextmanager
def dask_cluster(workers: list[list[str]], env: dict | None = None) -> Iterator[tuple[str, list]]:
    """A scheduler, then one ``dask worker`` process per entry of ``workers`` (its options), all
    with ``env`` added to the children's; yields (the scheduler's address, the worker processes)."""
    address = f"tcp://127.0.0.1:{free_port()}"
    common = ["--no-dashboard"]
    quiet = dict(cwd=ROOT, env={**child_env(), **(env or {})}, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                               "127.0.0.1", "--port", address.rsplit(":", 1)[1], *common], **quiet)]
    started: list[subprocess.Popen] = []
    try:  # a scheduler that never listens is stopped too
        wait_for(lambda: listening(address, procs[0]), timeout=60, what="the Dask scheduler listening")
        started += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                      "--host", "127.0.0.1", *options, *common], **quiet)
                    for options in workers]
        yield address, started
    finally:
        for proc in started + procs:
            proc.terminate()
        for proc in started + procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
