"""The room: many owners' training runs on one server, and the queue that trains them in turns;
and the room's heavy BPE work, off the web server's threads.  Imports no torch (a test checks):
torch loads only where a GPT worker trains, samples or times a step, in processes of its own.  The
model and its training loop are ``core.gpt``'s; the run folder's files, status and locks, which
both write, are ``core.runfolder``'s.

What a caller needs is exported here; read bottom-up:

- ``owners``      who may do what (``Viewer``, ``RunAccessError``);
- ``identical``   identical launches trained once (a *join*);
- ``queries``     reading runs: ``run_info``, ``list_runs``, metrics, samples, the queue's state;
- ``runs``        launch / stop / resume / share / sample / delete;
- ``turns``       runs taking turns, fair between owners;
- ``scheduler``   the engine's turn-giver, which submits turns to the engine's one queue (``jobs``);
  ``gpt_workers``, how the processes that train turns are set up;
- ``turn_runner`` a run's turn inside a GPT worker (torch);
- ``jobs``        the one queue: the room's heavy work (training a tokenizer on a large corpus,
  counting it, a page's data) in job workers, fair between owners, shared, cancelled, bounded in
  time and memory, with progress, and the GPT turns in GPT workers; ``tokenizer_jobs``, the BPE
  work a job worker runs; ``dask_jobs``, jobs and turns on a Dask cluster, for a room on several
  machines;
- ``engine``      the one process per runs folder that owns every worker process (job workers and
  GPT workers), started on demand (``spawn``), exiting when idle; ``engine_link``, how the app
  processes reach it; ``cpu_policy``, the order its workers yield the CPU in;
- ``worker_process``  a worker process started, fed, watched, bounded and killed (the job workers,
  the GPT workers and the probe's one-call children are all one);
- ``limits``, ``probe``  the device's bounds, runs at once, a turn's length; timing and sampling in
  a capped child process (torch, in the child).

From Launch to a training step: ``runs.launch_run`` -> ``engine`` -> ``scheduler`` -> ``jobs`` ->
``turn_runner.run_turn`` -> ``core.gpt.loop.Training.advance`` -> ``core.gpt.optimizer_step``.
"""

from .limits import LimitError, check_config
from ..runfolder.locks import locked
from .owners import LOCAL_OWNER, ROOM_OWNER, SERVER, RunAccessError, Viewer, validate_owner
from .queries import RunInfo, is_run, queue_state, read_metrics, read_samples, run_info
from ..runfolder.layout import default_runs_dir
from .runs import (RunLimitError, delete_run, get_run, launch_run, list_runs, resume_run, sample_run,
                   sanitize_run_name, seconds_per_step, set_shared, stop_run, unique_run_name)
from ..runfolder.status import RunStatus

__all__ = [
    "LOCAL_OWNER", "ROOM_OWNER", "SERVER", "LimitError", "RunAccessError", "RunInfo", "RunLimitError",
    "RunStatus", "Viewer", "check_config", "default_runs_dir", "delete_run", "get_run", "is_run",
    "launch_run", "list_runs", "locked", "queue_state", "read_metrics", "read_samples", "resume_run",
    "run_info", "sample_run", "sanitize_run_name", "seconds_per_step", "set_shared", "stop_run",
    "unique_run_name", "validate_owner",
]
