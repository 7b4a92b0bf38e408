"""core.room.worker_process: the one way the room runs work off the page (job workers, GPT workers,
the probe).  A call gives its answer or its error, and a call over its time, over its memory or
whose process dies ends with a message, its process gone."""

import os

import pytest

import job_functions
from core.room.probe import ProbeError, sample_checkpoint
from core.room.worker_process import WorkerLost, call, cap_address_space

MEMORY = 1024 * 2**20   # bytes of address space a child may map beyond what it has at the cap


def test_a_call_gives_its_answer_or_raises_its_error():
    assert call(job_functions.double, (21,), timeout=60) == 42
    with pytest.raises(ValueError, match="bad input"):
        call(job_functions.fails, ("bad input",), timeout=60)


@pytest.mark.slow
def test_a_call_over_its_time_is_killed_and_collected(tmp_path):
    trace = tmp_path / "pids"
    with pytest.raises(TimeoutError):  # time enough to start on a busy machine, and no more
        call(job_functions.counted, (str(trace), 10**6), timeout=10)
    pid = int(trace.read_text())
    with pytest.raises(ProcessLookupError):  # gone, not left a zombie
        os.kill(pid, 0)


def test_a_call_whose_process_dies_ends_with_a_message():
    with pytest.raises(WorkerLost, match="was killed"):
        call(job_functions.dies, timeout=60)


def test_a_call_over_its_memory_cap_fails_with_memory_error():
    with pytest.raises(MemoryError):
        call(job_functions.hog, (2 * MEMORY // 2**20,), setup=((cap_address_space, (MEMORY,)),),
             timeout=60)


def test_the_memory_cap_counts_from_what_the_child_has_mapped_already():
    """A CUDA build of torch maps gigabytes at its import, before the cap: the call still gets its
    ``memory`` beyond that (an absolute cap failed a sample on the CPU of a GPU machine), and no more."""
    setup = ((job_functions.map_megabytes, (2 * MEMORY // 2**20,)), (cap_address_space, (MEMORY,)))
    assert call(job_functions.written, (MEMORY // 2 // 2**20,), setup=setup, timeout=60) == MEMORY // 2
    with pytest.raises(MemoryError):
        call(job_functions.written, (2 * MEMORY // 2**20,), setup=setup, timeout=60)


@pytest.mark.slow
def test_the_probe_s_bounds_reach_the_page_as_messages(tmp_path):
    """What the Train GPT page shows: a sample that takes too long, and one from a folder with no
    checkpoint, end in ProbeError with a sentence, the child gone."""
    with pytest.raises(ProbeError, match="took longer than"):  # no child answers within 10 ms
        sample_checkpoint(tmp_path, "the", 10, timeout=0.01)
    with pytest.raises(ProbeError, match="checkpoint"):
        sample_checkpoint(tmp_path, "the", 10)
